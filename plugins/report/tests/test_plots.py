"""The report's charts: what they draw (no matplotlib needed), and `bench report --plots DIR` and `--format html` for a
run of every installed domain plugin, each PNG opened and measured (matplotlib: bench-report's `plots` extra)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from bench_report import plots
from bench_report.html import SECTIONS
from bench_report.plots import PLOTS, plot_data
from click.testing import CliRunner, Result
from structlog.testing import capture_logs

from bench_kernel import ReportSection, RunView, Store, collect, get_plugin_manager, hookimpl, installed_entry_points
from bench_kernel.testing import bench_cli

DOMAINS = ("mock", "airline", "retail", "telecom", "banking")


def test_the_cost_chart_leaves_out_conversations_of_unknown_cost(runs: str) -> None:
    store = Store(runs)
    try:
        store.db.execute("update conversations set agent_cost = null, user_cost = 0")
        store.db.execute(
            "update conversations set agent_cost = 0.5 where run_id = 'good' and task_id = 'which_items' and arm = 'agent' and trial = 0"
        )
        store.db.conn.commit()
        data = plot_data(store, ["good", "idle"])
    finally:
        store.close()
    assert data["cost_vs_reward"] == {"good: oracle": [(0.5, 1.0)], "idle: do-nothing": []}  # unknown costs are not drawn as 0
    assert set(data["pass_hat_k"]) == {"good", "idle"} and data["turns_to_completion"]["failed"] == []
    assert data["by_domain"] == {"practice": 1.0} and data["by_persona"] == {} and data["gsrt"] == {}


@pytest.mark.parametrize("domain", DOMAINS)
def test_plots_and_html_for_every_domain(domain: str, tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="plots need matplotlib: pip install 'bench-report[plots]' (bash scripts/dev.sh test-extras installs it)")
    from matplotlib import image

    if domain not in installed_entry_points():
        pytest.skip(f"bench-{domain} is not installed")
    cli = bench_cli([domain, "report"])

    def bench(*args: str) -> str:
        result: Result = CliRunner().invoke(cli, list(args))
        assert result.exit_code == 0, result.output
        return result.stdout

    db = str(tmp_path / "r.db")
    for agent in ("oracle", "do-nothing"):
        bench("run", "--plugin", domain, "--num-tasks", "3", "--trials", "2", "--agent", agent, "--run-id", agent, "--db", db, "--format", "none")
    page = bench(
        "report", "oracle", "--db", db, "--plots", str(tmp_path / "plots"), "--plot-with", "do-nothing", "--format", "html", "--by", "domain"
    )
    for name in PLOTS:
        path = tmp_path / "plots" / f"{name}.png"
        assert 5_000 < path.stat().st_size < 1_000_000, name
        pixels = image.imread(path)
        assert pixels.shape == (420, 700, 4), name
        assert pixels[..., :3].std() > 0.01, f"{name} is blank"
    found = re.findall(r'<section id="([^"]+)"', page)
    assert [s for s in found if s in SECTIONS] == list(SECTIONS)
    assert len(re.findall(r'<img alt="[^"]+" src="data:image/png;base64,', page)) == len(PLOTS)
    assert f"domain {domain}" in page and "By domain" in page


@attrs.define(kw_only=True)
class Drawing(ReportSection):
    """A section drawing one chart, or raising instead."""

    name: str = "drawing"
    broken: bool = False

    def build(self, view: RunView) -> None:
        return None

    def plots(self, view: RunView) -> dict[str, bytes]:
        if self.broken:
            raise ValueError("no canvas")
        return {"count": f"{view.plugin}: {len(view.conversations())}".encode()}


class Drawings:
    @hookimpl
    def register_report_sections(self, register: Callable[[ReportSection], None]) -> None:
        register(Drawing())
        register(Drawing(name="smudge", broken=True))


def test_section_charts_are_named_by_section_and_one_that_raises_is_left_out(runs: str, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = collect(get_plugin_manager([], extra=[("drawings", Drawings())]))
    monkeypatch.setattr(plots, "run_registry", lambda run: (registry, []))
    store = Store(runs)
    try:
        with capture_logs() as logs:
            charts = plots.section_plots(store, "good")
    finally:
        store.close()
    assert charts == {"drawing.count": b"drawings: 6"}  # each section sees its own plugin's view of the run
    assert [(e["event"], e["section"], e["error"]) for e in logs] == [("report.section_plots_failed", "smudge", "ValueError: no canvas")]
