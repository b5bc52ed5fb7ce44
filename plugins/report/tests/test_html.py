"""`bench report --format html`: one self-contained file with every section; plots inline or a note saying why not."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from bench_report import plots as plots_module
from bench_report.html import SECTIONS, table
from click.testing import Result

from bench_kernel import ConfigError


def matplotlib_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Draw as if matplotlib were not installed."""

    def missing() -> None:
        raise ConfigError(f"plots need matplotlib: {plots_module.INSTALL}")

    monkeypatch.setattr(plots_module, "pyplot", missing)


def test_html_has_every_section_and_no_outside_reference(bench: Callable[..., Result], runs: str, monkeypatch: pytest.MonkeyPatch) -> None:
    matplotlib_missing(monkeypatch)
    out = bench("report", "idle", "--db", runs, "--format", "html", "--by", "domain")
    assert out.exit_code == 0, out.output
    page = out.stdout
    assert page.startswith("<!doctype html>") and page.rstrip().endswith("</html>")
    found = re.findall(r'<section id="([^"]+)"', page)
    assert [s for s in found if s in SECTIONS] == list(SECTIONS)  # the plugins' cards (bench-trust's, when installed) after flips
    assert found.index("flips") < found.index("costs") and "pass^2" in page and "which_items" in page and "By domain" in page
    assert "<h3>Failed checks (report)</h3>" in page  # do-nothing fails every task
    assert "Plots left out: plots need matplotlib: pip install &#x27;bench-report[plots]&#x27;" in page
    assert not re.search(r'(src|href)="(http|//)', page)  # self-contained
    alone = bench("report", "idle", "--db", runs, "--format", "html", "--by", "domain", "--section", "failed-checks")
    assert alone.stdout == page  # a page is whole: --section leaves it as it is


def test_plots_without_matplotlib_are_one_clean_error(
    bench: Callable[..., Result], runs: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    matplotlib_missing(monkeypatch)
    out = bench("report", "good", "--db", runs, "--plots", str(tmp_path / "p"))
    assert out.exit_code == 1 and "Error: plots need matplotlib: pip install 'bench-report[plots]'" in out.stderr and "Traceback" not in out.output


def test_table_escapes_and_formats() -> None:
    html = table(["a", "b"], [["<x>", 0.12345], [None, 3]], title="T&T")
    assert "<caption>T&amp;T</caption>" in html and "<td>&lt;x&gt;</td>" in html
    assert '<td class="num">0.123</td>' in html and "<td>-</td>" in html and '<td class="num">3</td>' in html


def test_plots_inline_when_matplotlib_is_there(bench: Callable[..., Result], runs: str) -> None:
    pytest.importorskip("matplotlib", reason=f"plots need matplotlib: {plots_module.INSTALL}")
    out = bench("report", "good", "--db", runs, "--format", "html")
    assert out.exit_code == 0, out.output
    assert len(re.findall(r'<img alt="[^"]+" src="data:image/png;base64,', out.stdout)) == len(plots_module.PLOTS)
