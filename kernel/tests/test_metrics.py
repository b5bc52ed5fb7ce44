"""Tests of bench_kernel.metrics against hand-computed values."""

from __future__ import annotations

import math

import pytest

from bench_kernel.evaluation.stats import (
    Agreement,
    Estimate,
    TaskOutcomes,
    bootstrap_ci,
    flip_summary,
    judge_agreement,
    mean_estimate,
    pass_hat_k,
    pass_hat_k_estimate,
    task_outcomes,
)

T, F = True, False


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (4, 2, 2, 1 / 6),
        (4, 2, 1, 1 / 2),
        (4, 4, 4, 1.0),
        (4, 3, 4, 0.0),
        (5, 3, 2, 3 / 10),
        (4, 0, 1, 0.0),
    ],
)
def test_pass_hat_k_hand_values(n: int, c: int, k: int, expected: float) -> None:
    assert pass_hat_k(n, c, k) == pytest.approx(expected)


@pytest.mark.parametrize(("n", "c", "k"), [(4, 2, 5), (4, 2, 0), (4, 2, -1), (4, 5, 2), (4, -1, 2)])
def test_invalid_counts_raise(n: int, c: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_bootstrap_is_deterministic_per_seed() -> None:
    values = [0.0, 1.0, 1.0, 0.0, 1.0, 0.5, 0.25, 1.0, 0.0, 0.75]
    first = mean_estimate(values, seed="run-a")
    again = mean_estimate(values, seed="run-a")
    other = mean_estimate(values, seed="run-b")
    assert first == again
    assert (first.low, first.high) != (other.low, other.high)
    assert first.value == other.value == pytest.approx(0.55)


def test_bootstrap_ci_contains_point_estimate() -> None:
    values = [0.1 * i for i in range(20)]
    estimate = mean_estimate(values, seed="contains")
    assert estimate.low < estimate.value < estimate.high
    assert estimate.n == 20
    assert estimate.value == pytest.approx(0.95)


def test_bootstrap_wider_level_gives_wider_interval() -> None:
    values = [float(i % 3) for i in range(15)]
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    narrow = bootstrap_ci(values, mean, seed="s", resamples=500, level=0.5)
    wide = bootstrap_ci(values, mean, seed="s", resamples=500, level=0.99)
    assert wide.low < narrow.low <= narrow.high < wide.high


def test_bootstrap_does_not_touch_global_rng() -> None:
    import random

    random.seed(123)
    expected = random.random()
    random.seed(123)
    mean_estimate([0.0, 1.0, 0.5], seed="x")
    assert random.random() == expected


def test_bootstrap_empty_and_single() -> None:
    empty = mean_estimate([], seed="s")
    assert empty.n == 0
    assert math.isnan(empty.value) and math.isnan(empty.low) and math.isnan(empty.high)
    assert mean_estimate([0.4], seed="s") == Estimate(value=0.4, low=0.4, high=0.4, n=1)


@pytest.mark.parametrize(("resamples", "level"), [(0, 0.95), (100, 0.0), (100, 1.0)])
def test_bootstrap_rejects_bad_parameters(resamples: int, level: float) -> None:
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], sum, seed="s", resamples=resamples, level=level)


def test_all_success_gives_degenerate_interval() -> None:
    outcomes = [TaskOutcomes(f"t{i}", (T, T, T, T)) for i in range(5)]
    estimate = pass_hat_k_estimate(outcomes, 4, seed="s")
    assert (estimate.value, estimate.low, estimate.high, estimate.n) == (1.0, 1.0, 1.0, 5)


def test_task_outcomes_flips() -> None:
    task = TaskOutcomes("t", (T, F, T, T))
    assert (task.n, task.c, task.flips) == (4, 3, 2)
    assert task.flip_rate == pytest.approx(2 / 3)
    assert task.mixed


def test_task_outcomes_edge_cases() -> None:
    assert TaskOutcomes("one", (T,)).flip_rate == 0.0
    assert TaskOutcomes("none", ()).flip_rate == 0.0
    assert not TaskOutcomes("all", (T, T)).mixed
    assert not TaskOutcomes("never", (F, F)).mixed
    assert TaskOutcomes("alt", [T, F, T, F]).successes == (T, F, T, F)
    assert TaskOutcomes("alt", (T, F, T, F)).flip_rate == 1.0


def test_task_outcomes_from_stored_rows_are_per_task_in_trial_order() -> None:
    rows = [{"task_id": "b", "trial": 1, "reward": 0.0}, {"task_id": "b", "trial": 0, "reward": 1.0}, {"task_id": "a", "trial": 0, "reward": 1.0}]
    assert task_outcomes(rows) == [TaskOutcomes("a", (T,)), TaskOutcomes("b", (T, F))]


def test_tasks_with_fewer_than_k_trials_are_excluded() -> None:
    outcomes = [
        TaskOutcomes("a", (T, F, T, T)),  # pass^2 = 3/6
        TaskOutcomes("b", (T, F, F, F)),  # pass^2 = 0
        TaskOutcomes("short", (T,)),  # n < 2: excluded
    ]
    hat = pass_hat_k_estimate(outcomes, 2, seed="s")
    assert hat.n == 2
    assert hat.value == pytest.approx(0.25)
    assert hat.low <= hat.value <= hat.high


def test_estimate_with_no_eligible_tasks_is_nan() -> None:
    estimate = pass_hat_k_estimate([TaskOutcomes("a", (T, T))], 3, seed="s")
    assert estimate.n == 0 and math.isnan(estimate.value)


def test_flip_summary() -> None:
    outcomes = [
        TaskOutcomes("a", (T, F, T, T)),  # mixed, rate 2/3
        TaskOutcomes("b", (T, T, T, T)),  # rate 0
        TaskOutcomes("c", (F, T, F, T)),  # mixed, rate 1
        TaskOutcomes("d", (F, F, F, F)),  # rate 0
    ]
    summary = flip_summary(outcomes)
    assert summary["tasks"] == 4
    assert summary["mixed_tasks"] == 2
    assert summary["mixed_share"] == pytest.approx(0.5)
    assert summary["mean_flip_rate"] == pytest.approx((2 / 3 + 1) / 4)
    assert flip_summary([]) == {"tasks": 0, "mixed_tasks": 0, "mixed_share": 0.0, "mean_flip_rate": 0.0}


def test_judge_agreement_observed_and_kappa_by_hand() -> None:
    # 50 items: observed 0.7; chance 0.5*0.6 + 0.5*0.4 = 0.5; kappa (0.7 - 0.5) / 0.5 = 0.4
    found = judge_agreement({(T, T): 20, (T, F): 5, (F, T): 10, (F, F): 15})
    assert found.items == 50 and found.observed == pytest.approx(0.7) and found.kappa == pytest.approx(0.4)
    # three labels, one the second judge never gives: chance 0.4*0.5 + 0.4*0.5 + 0.2*0 = 0.4, observed 0.6
    three = judge_agreement({("a", "a"): 4, ("b", "b"): 2, ("b", "a"): 2, ("c", "b"): 2})
    assert three.observed == pytest.approx(0.6) and three.kappa == pytest.approx((0.6 - 0.4) / 0.6)


def test_judge_agreement_degenerate_tables() -> None:
    assert judge_agreement({}) == Agreement(items=0, observed=None, kappa=None)
    assert judge_agreement({(T, T): 0, (F, F): 0}) == Agreement(items=0, observed=None, kappa=None)
    assert judge_agreement({(F, F): 7}) == Agreement(items=7, observed=1.0, kappa=None)  # one label only: chance is 1
    opposite = judge_agreement({(T, F): 3, (F, T): 3})
    assert opposite.observed == 0.0 and opposite.kappa == pytest.approx(-1.0)
