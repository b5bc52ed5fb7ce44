"""The noise formulas (docs/noise.md): hand-computed cases, and a simulation that the MDD gives the power it states."""

from __future__ import annotations

import hashlib
import math
import random
import statistics

import pytest
from bench_trust.noise import comparison_noise, noise_card, pair_noise
from bench_trust.stats import (
    BINOMIAL_BOUND,
    MIXED,
    WITHIN_TASK,
    difference_standard_error,
    minimum_detectable_difference,
    tasks_needed,
    trial_variances,
    trials_needed,
    z_critical,
    z_total,
)

from bench_kernel import TaskOutcomes, trial_variance


def rng(seed: str) -> random.Random:
    """A private RNG seeded through sha256 (never the global one, never hash() of a str)."""
    return random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))


def outcomes(table: dict[str, list[int]]) -> list[TaskOutcomes]:
    return [TaskOutcomes(task, [bool(x) for x in trials]) for task, trials in table.items()]


def test_normal_quantiles() -> None:
    assert z_critical(0.05) == pytest.approx(1.959964, abs=1e-6)
    assert z_total(0.05, 0.8) == pytest.approx(1.959964 + 0.841621, abs=1e-6)
    assert z_total(0.01, 0.9) == pytest.approx(2.575829 + 1.281552, abs=1e-6)
    with pytest.raises(ValueError, match="alpha"):
        z_total(0.0, 0.8)
    with pytest.raises(ValueError, match="power"):
        z_total(0.05, 1.0)


def test_trial_variance_is_the_unbiased_estimate_of_p_times_one_minus_p() -> None:
    assert trial_variance(TaskOutcomes("t", [True, False, True, False])) == pytest.approx(2 * 2 / (4 * 3))
    assert trial_variance(TaskOutcomes("t", [True, True, True])) == 0.0
    assert trial_variance(TaskOutcomes("t", [True])) is None
    # Averaged over every outcome of n=3 trials with p=0.3, the estimate is exactly p(1-p).
    p, n = 0.3, 3
    expected = sum(math.comb(n, c) * p**c * (1 - p) ** (n - c) * c * (n - c) / (n * (n - 1)) for c in range(n + 1))
    assert expected == pytest.approx(p * (1 - p))


def test_card_on_a_hand_computed_run() -> None:
    # t1: 2 of 4 (variance 1/3), t2: 4 of 4 (variance 0). Mean variance 1/6.
    card = noise_card(outcomes({"t1": [1, 0, 1, 0], "t2": [1, 1, 1, 1]}))
    # Var(pass^1 of one run) = (1/3 / 4 + 0 / 4) / 2^2 = 1/48; two runs: 1/24.
    se = math.sqrt(1 / 24)
    assert card["method"] == WITHIN_TASK and card["tasks"] == 2 and (card["trials_min"], card["trials_max"]) == (4, 4)
    assert card["trial_variance"] == pytest.approx(1 / 6, abs=1e-6)
    assert card["standard_error"] == pytest.approx(se, abs=1e-6)
    assert card["mdd"] == pytest.approx(2.801585 * se, abs=1e-5) == pytest.approx(0.571871, abs=1e-5)
    assert card["critical_difference"] == pytest.approx(1.959964 * se, abs=1e-5)
    # One trial per task: four times the variance, twice the MDD.
    assert card["one_trial_mdd"] == pytest.approx(2 * card["mdd"], abs=1e-5)
    assert (card["flipped_tasks"], card["flipped_share"], card["expected_flip_share"]) == (1, 0.5, pytest.approx(1 / 3, abs=1e-6))


def test_one_trial_per_task_uses_the_binomial_bound() -> None:
    card = noise_card(outcomes({"a": [1], "b": [0], "c": [0], "d": [0]}))
    # Pass rate 0.25: every task gets 0.25 * 0.75 = 0.1875; Var(one run) = 4 * 0.1875 / 16.
    assert card["method"] == BINOMIAL_BOUND and card["trial_variance"] == pytest.approx(0.1875)
    assert card["mdd"] == pytest.approx(z_total(0.05, 0.8) * math.sqrt(2 * 4 * 0.1875 / 16), abs=1e-6)
    assert card["mdd"] == card["one_trial_mdd"]
    mixed = trial_variances(outcomes({"a": [1, 0], "b": [1]}))
    # Pass rate (0.5 + 1) / 2 = 0.75: the single-trial task gets 0.1875, the other its own 0.5.
    assert mixed.method == MIXED and mixed.variances == pytest.approx((0.5, 0.1875))


def test_the_bound_is_never_below_the_mean_within_task_variance() -> None:
    r = rng("bound")
    for _ in range(200):
        p = [r.random() for _ in range(r.randint(1, 30))]
        mean = statistics.fmean(p)
        assert statistics.fmean(x * (1 - x) for x in p) <= mean * (1 - mean) + 1e-12


def test_trials_and_tasks_needed_by_hand() -> None:
    # 2 * 0.1 * 2.801585^2 / (50 * 0.05^2) = 12.56: 13 trials.
    assert trials_needed(0.1, 50, 0.05) == 13
    assert tasks_needed(0.1, 4, 0.05) == 157  # 1.569776 / (4 * 0.0025) = 156.98
    assert trials_needed(0.0, 50, 0.05) == 1
    # The trials found reach the difference; one fewer does not.
    mdd = lambda trials: minimum_detectable_difference(math.sqrt(2 * 0.1 / (50 * trials)))  # noqa: E731
    assert mdd(13) <= 0.05 < mdd(12)


def test_different_runs_add_their_variances() -> None:
    a = trial_variances(outcomes({"x": [1, 0], "y": [1, 1]}))  # variances 0.5, 0 over 2 trials
    b = trial_variances(outcomes({"x": [1, 1, 0, 0], "y": [0, 1, 0, 1]}))  # 1/3, 1/3 over 4 trials
    expected = math.sqrt((0.5 / 2 + 0) / 4 + (1 / 12 + 1 / 12) / 4)
    assert difference_standard_error(a, b) == pytest.approx(expected)
    with pytest.raises(ValueError, match="same tasks"):
        difference_standard_error(a, trial_variances(outcomes({"x": [1, 0]})))


def _run(r: random.Random, probabilities: list[float], trials: int) -> list[list[bool]]:
    return [[r.random() < p for _ in range(trials)] for p in probabilities]


def _paired_test_rejects(a: list[list[bool]], b: list[list[bool]], trials: int) -> bool:
    """The paired z-test over tasks that compare's paired bootstrap approximates: mean difference over its standard error."""
    d = [sum(y) / trials - sum(x) / trials for x, y in zip(a, b, strict=True)]
    error = statistics.stdev(d) / math.sqrt(len(d))
    return error > 0 and abs(statistics.fmean(d)) / error > z_critical(0.05)


def test_simulation_the_mdd_gives_its_stated_power() -> None:
    r = rng("noise:simulation:tasks")
    tasks, trials, draws = 40, 4, 4000
    p = [r.uniform(0.2, 0.75) for _ in range(tasks)]
    # The MDD from the true variances, as the card computes it from estimated ones.
    se = math.sqrt(2 * sum(x * (1 - x) / trials for x in p)) / tasks
    mdd = minimum_detectable_difference(se)
    assert 0.1 < mdd < 0.2
    sim = rng("noise:simulation:draws")
    power = sum(_paired_test_rejects(_run(sim, p, trials), _run(sim, [x + mdd for x in p], trials), trials) for _ in range(draws)) / draws
    size = sum(_paired_test_rejects(_run(sim, p, trials), _run(sim, p, trials), trials) for _ in range(draws)) / draws
    # 4000 draws: the standard error of the power is 0.006. The z-test with an estimated standard error over 40 tasks
    # is a little liberal (a t-test would not be), hence a size up to 0.07.
    assert power == pytest.approx(0.8, abs=0.03), power
    assert 0.03 < size < 0.075, size
    # The card's MDD, estimated from one run's own trials, is right on average (its square is unbiased).
    cards = [noise_card([TaskOutcomes(str(i), x) for i, x in enumerate(_run(sim, p, trials))])["mdd"] for _ in range(1000)]
    assert math.sqrt(statistics.fmean(m * m for m in cards)) == pytest.approx(mdd, rel=0.03)


def test_simulation_the_single_trial_bound_is_conservative() -> None:
    # Half the tasks always pass or always fail (as on tau2's airline), the others are coins: the bound from the pass
    # rate counts the spread between tasks as noise, so the MDD it gives is detected more often than the 80% it states.
    tasks, draws = 200, 2000
    p = [(0.0, 1.0, 0.5, 0.6)[i % 4] for i in range(tasks)]
    rate = statistics.fmean(p)
    mdd = minimum_detectable_difference(math.sqrt(2 * tasks * rate * (1 - rate)) / tasks)
    true_mdd = minimum_detectable_difference(math.sqrt(2 * sum(x * (1 - x) for x in p)) / tasks)
    assert true_mdd < mdd
    noisy = sum(0 < x < 1 for x in p)
    shifted = [x + mdd * tasks / noisy if 0 < x < 1 else x for x in p]  # the coins improve; the mean moves by the MDD
    assert statistics.fmean(shifted) - rate == pytest.approx(mdd) and max(x for x in shifted if x != 1.0) < 1.0
    sim = rng("noise:bound:draws")
    power = sum(_paired_test_rejects(_run(sim, p, 1), _run(sim, shifted, 1), 1) for _ in range(draws)) / draws
    assert power >= 0.8, power


def test_pair_noise_verdicts() -> None:
    a = outcomes({"t1": [1, 0, 1, 0], "t2": [1, 1, 0, 0], "t3": [0, 1, 1, 0]})
    figure = {"difference": 0.1, "low": -0.2, "high": 0.4}
    noise = pair_noise(a, a, figure)
    assert noise is not None and noise["within_noise"] and noise["verdict"] == "within noise"
    assert noise["below_mdd"] and noise["interval_covers_zero"] and "contains 0" in noise["reason"]
    lucky = pair_noise(a, a, {"difference": 0.3, "low": 0.05, "high": 0.5})
    assert lucky is not None and lucky["within_noise"] and "more trials" in lucky["reason"]  # significant, below the MDD
    clear = pair_noise(a, a, {"difference": 0.9, "low": 0.7, "high": 1.0})
    assert clear is not None and not clear["within_noise"] and clear["verdict"] == "beyond noise"
    assert pair_noise([], [], None) is None


def test_a_comparison_carries_the_noise_verdict() -> None:
    a = {"t1": [1, 0, 1, 0], "t2": [1, 1, 1, 0], "t3": [0, 0, 1, 0]}
    b = {"t1": [1, 1, 0, 0], "t2": [1, 1, 1, 1], "t3": [0, 1, 0, 0]}
    # What `bench compare --format json` holds: per task the trials and successes of each run, and pass^1's paired figure.
    tasks = [{"task_id": t, "trials_a": len(a[t]), "successes_a": sum(a[t]), "trials_b": len(b[t]), "successes_b": sum(b[t])} for t in a]
    figure = {"difference": 0.25 / 3, "low": -0.1, "high": 0.25}
    noise = comparison_noise({"tasks": tasks, "pass_hat_k": {"1": figure}})
    assert noise is not None and noise["difference"] == pytest.approx(0.25 / 3, abs=1e-6)
    va, vb = trial_variances(outcomes(a)), trial_variances(outcomes(b))
    assert noise["mdd"] == pytest.approx(minimum_detectable_difference(difference_standard_error(va, vb)), abs=1e-6)
    assert noise["within_noise"] and noise == pair_noise(outcomes(a), outcomes(b), figure)
    assert comparison_noise({"tasks": [], "pass_hat_k": {}}) is None
