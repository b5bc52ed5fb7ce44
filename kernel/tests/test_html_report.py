"""`bench report --format html`: one self-contained file with every section; plots inline or a note saying why not."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_kernel.cli import cli
from bench_kernel.errors import ConfigError
from bench_kernel.report import plots as plots_module
from bench_kernel.report.html import SECTIONS, table


@pytest.fixture
def db(tmp_path: Path, use_plugins: Callable[..., None]) -> str:
    path = str(tmp_path / "r.db")
    result = CliRunner().invoke(cli, ["run", "--trials", "2", "--run-id", "toy-run", "--db", path, "--format", "none"])
    assert result.exit_code == 0, result.output
    return path


def test_html_has_every_section_and_no_outside_reference(db: str, monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> None:
        raise ConfigError(f"plots need matplotlib: {plots_module.INSTALL}")

    monkeypatch.setattr(plots_module, "pyplot", missing)
    out = CliRunner().invoke(cli, ["report", "toy-run", "--db", db, "--format", "html", "--by", "domain"])
    assert out.exit_code == 0, out.output
    page = out.stdout
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    assert re.findall(r'<section id="([^"]+)"', page) == list(SECTIONS)
    assert "pass^2" in page and "inc-a" in page and "By domain" in page
    assert "Plots left out: plots need matplotlib: pip install &#x27;bench-kernel[plots]&#x27;" in page
    assert not re.search(r'(src|href)="(http|//)', page)  # self-contained


def test_plots_without_matplotlib_are_one_clean_error(db: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def missing() -> None:
        raise ConfigError(f"plots need matplotlib: {plots_module.INSTALL}")

    monkeypatch.setattr(plots_module, "pyplot", missing)
    out = CliRunner().invoke(cli, ["report", "toy-run", "--db", db, "--plots", str(tmp_path / "p")])
    assert out.exit_code == 1 and "Error: plots need matplotlib" in out.stderr and "Traceback" not in out.output


def test_table_escapes_and_formats() -> None:
    html = table(["a", "b"], [["<x>", 0.12345], [None, 3]], title="T&T")
    assert "<caption>T&amp;T</caption>" in html and "<td>&lt;x&gt;</td>" in html
    assert '<td class="num">0.123</td>' in html and "<td>-</td>" in html and '<td class="num">3</td>' in html


def test_plots_inline_when_matplotlib_is_there(db: str) -> None:
    pytest.importorskip("matplotlib", reason=f"plots need matplotlib: {plots_module.INSTALL}")
    out = CliRunner().invoke(cli, ["report", "toy-run", "--db", db, "--format", "html"])
    assert out.exit_code == 0, out.output
    assert len(re.findall(r'<img alt="[^"]+" src="data:image/png;base64,', out.stdout)) == len(plots_module.PLOTS)


def test_open_read_only_reads_and_refuses_writes(db: str, tmp_path: Path) -> None:
    import sqlite3

    from bench_kernel import open_read_only

    store = open_read_only(db)
    try:
        assert store.run("toy-run") is not None and len(store.conversations("toy-run")) == 9  # 3 tasks x 2 trials, 3 baseline
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.db.execute("delete from runs")
    finally:
        store.close()
    with pytest.raises(ConfigError, match="no results database"):
        open_read_only(tmp_path / "missing.db")
