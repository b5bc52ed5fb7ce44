"""`bench compare`: per-task flips and paired bootstrap intervals, pinned on hand-built runs."""

from __future__ import annotations

import hashlib
import json
import math
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_report.compare import compare, compare_stored, flip, paired_difference, render_comparison, task_records
from click.testing import Result

import bench_kernel
from bench_kernel import Card, ReportSection, RunView, Section, Store, collect, get_plugin_manager


def rows(rewards: dict[str, list[float]]) -> list[dict[str, Any]]:
    """Stored-conversation rows of a run: agent arm, one row per trial."""
    return [
        {"arm": "agent", "task_id": task, "trial": trial, "reward": r, "termination_reason": "user_stop"}
        for task, values in rewards.items()
        for trial, r in enumerate(values)
    ]


def by_hand(differences: list[float], seed: str, resamples: int) -> tuple[float, float]:
    """The percentile bootstrap written out independently: sha256-seeded Random, resample, sort, interpolate."""
    rng = random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))
    means = sorted(sum(s) / len(s) for s in (rng.choices(differences, k=len(differences)) for _ in range(resamples)))

    def quantile(q: float) -> float:
        pos = q * (len(means) - 1)
        lo = math.floor(pos)
        return means[lo] + (means[min(lo + 1, len(means) - 1)] - means[lo]) * (pos - lo)

    return quantile(0.025), quantile(0.975)


def test_paired_bootstrap_pinned_on_a_hand_built_case() -> None:
    pairs = [(0.0, 1.0), (1.0, 1.0), (0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (0.5, 1.0)]
    estimate = paired_difference(pairs, seed="pin", resamples=500)
    assert estimate.value == pytest.approx(1.5 / 6)
    assert estimate.n == 6
    assert (estimate.low, estimate.high) == pytest.approx(by_hand([1.0, 0.0, 0.0, -1.0, 1.0, 0.5], "pin", 500))
    # The figures themselves, so a change of seeding or quantile rule shows up here.
    assert (round(estimate.low, 6), round(estimate.high, 6)) == (-0.333333, 0.75)
    assert paired_difference(pairs, seed="pin", resamples=500) == estimate  # same seed, same interval


def test_pairing_removes_the_spread_between_tasks() -> None:
    a = [0.1, 0.5, 0.9, 0.3]
    estimate = paired_difference([(x, x + 0.25) for x in a], seed="s")
    # Every task gains exactly 0.25: the paired interval collapses, however different the tasks are.
    assert (estimate.value, estimate.low, estimate.high) == pytest.approx((0.25, 0.25, 0.25))


def test_degenerate_cases() -> None:
    one = paired_difference([(0.0, 1.0)], seed="s")
    assert (one.value, one.low, one.high, one.n) == (1.0, 1.0, 1.0, 1)
    empty = paired_difference([], seed="s")
    assert empty.n == 0 and math.isnan(empty.value)
    c = compare("a", [], "b", [])
    assert c.common_tasks == 0 and c.mean_reward["difference"] is None and c.pass_hat_k == {}


def test_flips_need_every_trial_to_pass() -> None:
    records = task_records(rows({"t": [1.0, 1.0]})) | task_records(rows({"u": [1.0, 0.0]}))
    never = task_records(rows({"t": [0.0, 0.0]}))["t"]
    assert flip(records["t"], never) == "lost"
    assert flip(never, records["t"]) == "gained"
    assert flip(records["u"], never) == ""  # mixed to failing: not a pass in either run


def test_compare_tasks_flips_and_pass_hat_k() -> None:
    a = rows({"t1": [1, 1], "t2": [0, 0], "t3": [1, 0], "only-a": [1, 1]})
    b = rows({"t1": [1, 0], "t2": [1, 1], "t3": [1, 0], "only-b": [0, 0]})
    c = compare("A", a, "B", b, resamples=200)
    assert c.common_tasks == 3 and c.only_in_a == ["only-a"] and c.only_in_b == ["only-b"]
    assert c.flips == {"gained": ["t2"], "lost": ["t1"]}
    assert c.mean_reward["a"] == pytest.approx(0.5) and c.mean_reward["b"] == pytest.approx(2 / 3)
    # pass^2 per task: A (1, 0, 0), B (0, 1, 0): means equal, difference 0.
    assert c.pass_hat_k["2"]["a"] == pytest.approx(1 / 3) and c.pass_hat_k["2"]["difference"] == pytest.approx(0.0)
    assert [t["difference"] for t in c.tasks] == [-0.5, 1.0, 0.0]
    text = render_comparison(c, "markdown")
    assert "| pass^2 |" in text and "1 gained (t2), 1 lost (t1)" in text and "only in run A" in text
    assert json.loads(render_comparison(c, "json"))["flips"]["lost"] == ["t1"]


def test_infrastructure_errors_are_left_out() -> None:
    a = [*rows({"t": [1.0]}), {"arm": "agent", "task_id": "t", "trial": 1, "reward": 0.0, "termination_reason": "infrastructure_error"}]
    assert task_records(a)["t"].rewards == (1.0,)


def test_tasks_come_in_reading_order() -> None:
    numbered = rows({"10": [1.0], "2": [1.0], "task_10": [0.0], "task_9": [1.0], "1": [0.0]})
    assert [t["task_id"] for t in compare("A", numbered, "B", numbered).tasks] == ["1", "2", "10", "task_9", "task_10"]


def test_bench_compare_on_two_agents(bench: Callable[..., Result], runs: str) -> None:
    out = bench("compare", "good", "idle", "--db", runs, "--format", "json")
    assert out.exit_code == 0, out.output
    figures = json.loads(out.stdout)
    assert figures["mean_reward"]["difference"] == -1.0 and len(figures["flips"]["lost"]) == figures["common_tasks"] == 3
    assert figures["agents"] == {"a": "oracle", "b": "do-nothing"}
    table = bench("compare", "good", "idle", "--db", runs)
    assert "3 lost" in table.stdout and "95% low" in table.stdout
    missing = bench("compare", "good", "nope", "--db", runs)
    assert missing.exit_code == 1 and "no run 'nope'" in missing.output


def test_bench_compare_across_two_databases(bench: Callable[..., Result], tmp_path: Path) -> None:
    for agent, db in (("oracle", "a.db"), ("do-nothing", "b.db")):
        result = bench("run", "--plugin", "practice", "--agent", agent, "--run-id", "same-name", "--db", str(tmp_path / db), "--format", "none")
        assert result.exit_code == 0, result.output
    out = bench("compare", "same-name", "same-name", "--db", str(tmp_path / "a.db"), "--db-b", str(tmp_path / "b.db"), "--format", "markdown")
    assert out.exit_code == 0, out.output
    assert "(agent do-nothing) against run same-name (agent oracle)" in out.stdout and "| mean_reward | 1.000 | 0.000 | -1.000 |" in out.stdout
    missing = bench("compare", "x", "y", "--db", str(tmp_path / "a.db"), "--db-b", str(tmp_path / "none.db"))
    assert missing.exit_code == 1 and "no results database" in missing.stderr


@attrs.define(kw_only=True)
class Common(ReportSection):
    """A compare card with the common tasks (and, asked to break, a section whose cards raise)."""

    name: str = "common"
    broken: bool = False

    def build(self, view: RunView) -> Section | None:
        return None

    def compare_cards(self, comparison: Any) -> list[Card]:
        if self.broken:
            raise ValueError("no common ground")
        return [Card(name="common", title="Common", figures=comparison["common_tasks"], lines=[f"Common: {comparison['common_tasks']} tasks"])]


class CommonPlugin:
    def __init__(self, broken: bool = False) -> None:
        self.broken = broken

    @bench_kernel.hookimpl
    def register_report_sections(self, register: Callable[[ReportSection], None]) -> None:
        register(Common(broken=self.broken))


def test_compare_cards_show_in_every_format_and_one_that_raises_is_a_note(runs: str) -> None:
    store = Store(runs)
    try:
        carded = compare_stored(store, "good", store, "idle", collect(get_plugin_manager([], extra=[("commons", CommonPlugin())])))
        broken = compare_stored(store, "good", store, "idle", collect(get_plugin_manager([], extra=[("commons", CommonPlugin(broken=True))])))
    finally:
        store.close()
    assert json.loads(render_comparison(carded, "json"))["common"] == 3
    assert "\nCommon: 3 tasks\n" in render_comparison(carded, "table") and "\n## Common: 3 tasks\n" in render_comparison(carded, "markdown")
    note = "note: cards of section common (commons) failed: cards: ValueError: no common ground"
    assert note in render_comparison(broken, "table") and json.loads(render_comparison(broken, "json"))["common"] is None
