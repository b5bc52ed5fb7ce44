"""The entry point alone registers every ATOD component, and the report section copes with tasks of no class."""

from __future__ import annotations

from pathlib import Path

from atod_helpers import section_figures
from click.testing import CliRunner

from bench_kernel import RunConfig, collect, get_plugin_manager, run
from bench_kernel.testing import cli


def test_the_entry_point_registers_metrics_reward_parts_and_the_section() -> None:
    plugins = get_plugin_manager(["atod"])
    assert not plugins.failures()
    registry = collect(plugins)
    metrics = {n for n in registry.components["metric"] if registry.origin("metric", n) == "atod"}
    assert metrics == {f"atod:{n}" for n in ("dgcr", "ntc", "mra", "pe", "turn_quality", "dialogue_quality")}
    assert registry.origin("reward component", "GOALS") == "atod"
    assert registry.origin("combination rule", "goal-credit") == "atod"
    assert registry.origin("report section", "atod") == "atod"
    assert "register_commands" in plugins.hooks_of("atod")


def test_tasks_without_a_complexity_class_get_their_own_column(tmp_path: Path) -> None:
    plugins = get_plugin_manager(["atod", "mock"])
    summary = run(RunConfig(domain="mock", plugins=["mock", "atod"], num_tasks=2, baseline=False), tmp_path / "r.db", plugins=plugins)
    out = CliRunner().invoke(cli, ["report", summary.run_id, "--db", str(tmp_path / "r.db"), "--format", "json"])
    figures = section_figures(out.output)
    # Single-goal tasks: no goals, so nothing decided and no memory query; the agent's replies still get quality scores.
    assert figures[("dGCR", "conversations", "unknown")] == 0 and figures[("dGCR", "micro", "unknown")] is None
    assert figures[("MRA", "conversations", "unknown")] == 0
    assert figures[("turn-level quality", "conversations", "unknown")] == 2
