"""The report's builder: figures only the report shows (pass@k, the largest k, P(flip)) against hand-computed values,
compare cards gathered from the registered sections, and the builder the kernel's `build_report` finds."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_report.build import max_k, pass_at_k, pass_at_k_estimate, plugin_cards, task_flip_probability
from bench_report.components import StoredReport

from bench_kernel import Card, ReportSection, RunView, Section, Store, TaskOutcomes, build_report, collect, get_plugin_manager, hookimpl

T, F = True, False


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [(4, 2, 2, 5 / 6), (4, 2, 1, 1 / 2), (4, 1, 4, 1.0), (4, 0, 3, 0.0), (5, 1, 2, 4 / 10), (4, 3, 2, 1.0)],
)
def test_pass_at_k_hand_values(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k(n, c, k) == pytest.approx(expected)


@pytest.mark.parametrize(("n", "c", "k"), [(4, 2, 5), (4, 2, 0), (4, 2, -1), (4, 5, 2), (4, -1, 2)])
def test_invalid_counts_raise(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_pass_at_k_estimate_leaves_out_tasks_with_fewer_than_k_trials() -> None:
    outcomes = [TaskOutcomes("a", (T, F, T, T)), TaskOutcomes("b", (T, F, F, F)), TaskOutcomes("short", (T,))]  # pass@2: 1, 3/6, excluded
    estimate = pass_at_k_estimate(outcomes, 2, seed="s")
    assert estimate.n == 2 and estimate.value == pytest.approx(0.75)
    every = pass_at_k_estimate([TaskOutcomes(f"t{i}", (T, T, T, T)) for i in range(5)], 2, seed="s")
    assert (every.value, every.low, every.high, every.n) == (1.0, 1.0, 1.0, 5)


def test_max_k_is_the_fewest_trials() -> None:
    assert max_k([TaskOutcomes("a", (T, F, T)), TaskOutcomes("b", (T, T, T, T, F))]) == 3
    assert max_k([]) == 0


def test_a_tasks_flip_probability_is_twice_its_trial_variance() -> None:
    assert task_flip_probability(TaskOutcomes("t", [True, False, True, False])) == round(2 / 3, 6)
    assert task_flip_probability(TaskOutcomes("t", [True])) is None


@attrs.define(kw_only=True)
class CommonCard(ReportSection):
    """A card under compare with the comparison's common tasks."""

    name: str = "counts"

    def build(self, view: RunView) -> Section | None:
        return None

    def compare_cards(self, comparison: Mapping[str, Any]) -> list[Card]:
        n = comparison["common_tasks"]
        return [Card(name="common", title="Common", figures=n, lines=[f"Common: {n} tasks"])]


class Plugin:
    @hookimpl
    def register_report_sections(self, register: Callable[[ReportSection], None]) -> None:
        register(CommonCard())


def test_compare_cards_come_from_the_comparison_and_one_that_raises_is_a_failed_section() -> None:
    registry = collect(get_plugin_manager([], extra=[("counting", Plugin())]))
    cards, failed = plugin_cards(registry, lambda section, _: section.compare_cards({"common_tasks": 3}))
    assert [(c["name"], c["plugin"], c["figures"], c["lines"]) for c in cards] == [("common", "counting", 3, ["Common: 3 tasks"])] and not failed
    cards, failed = plugin_cards(registry, lambda section, _: section.compare_cards({}))
    assert not cards and failed[0]["name"] == "counts" and failed[0]["error"] == "cards: KeyError: 'common_tasks'"


def test_the_kernels_build_report_calls_this_builder(runs: str) -> None:
    registry = collect(get_plugin_manager(["report"]))
    assert list(registry.components["report builder"].values()) == [StoredReport()]
    store = Store(Path(runs))
    try:
        assert build_report(store, "good") == StoredReport().build(store, "good")  # no registry: the installed builder
        assert build_report(store, "good", registry).conversations == 6  # 3 practice tasks x 2 trials
    finally:
        store.close()
