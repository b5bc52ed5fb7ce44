"""Noise formulas: per-task trial variances, the standard error of a pass^1 difference, the MDD and the runs it needs.

Everything is about pass^1 (the mean over tasks of each task's success rate) for two runs of the same tasks, so only
trial-to-trial noise separates them; docs/noise.md gives the formulas and the simulation that checks them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import attrs

from bench_kernel import TaskOutcomes, trial_variance

WITHIN_TASK = "within-task"
"""Per-task variances from each task's own trials (every task has two or more)."""
BINOMIAL_BOUND = "binomial-bound"
"""One trial per task: p(1-p) of the run's pass rate for every task, an upper bound on the mean within-task variance."""
MIXED = "within-task, binomial bound for single-trial tasks"
"""Some tasks have one trial: those get the binomial bound, the others their own variance."""


def _check_test(alpha: float, power: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0.0 < power < 1.0:
        raise ValueError(f"power must be in (0, 1), got {power}")


def z_critical(alpha: float) -> float:
    """The normal quantile a two-sided test at level alpha rejects beyond: 1.96 at 0.05."""
    _check_test(alpha, 0.5)
    return NormalDist().inv_cdf(1.0 - alpha / 2.0)


def z_total(alpha: float, power: float) -> float:
    """Standard errors between no difference and the difference a two-sided test at alpha finds with this power (2.80)."""
    _check_test(alpha, power)
    return z_critical(alpha) + NormalDist().inv_cdf(power)


@attrs.frozen(kw_only=True)
class TrialVariances:
    """Per task, the estimated variance of one trial's success and the task's trial count, and how they were estimated."""

    variances: tuple[float, ...]
    trials: tuple[int, ...]
    method: str

    @property
    def tasks(self) -> int:
        """Number of tasks."""
        return len(self.variances)

    @property
    def mean(self) -> float:
        """Mean per-trial variance over tasks (0.0 with no tasks)."""
        return _mean(self.variances) if self.variances else 0.0

    @property
    def mean_variance(self) -> float:
        """Variance of the run's pass^1 (mean over tasks of each task's success rate) from trial noise alone."""
        if not self.variances:
            return math.nan
        return math.fsum(v / n for v, n in zip(self.variances, self.trials, strict=True)) / self.tasks**2


def trial_variances(outcomes: Sequence[TaskOutcomes]) -> TrialVariances:
    """Per-task trial variances of a run: each task's own with two or more trials, the binomial bound with one."""
    # With one trial a task's variance cannot be estimated. mean(p_i(1 - p_i)) <= p(1 - p) for the mean p of the p_i
    # (p(1-p) is concave), so the run's pass rate bounds the mean variance from above: a conservative stand-in.
    rate = _mean([task.c / task.n for task in outcomes]) if outcomes else 0.0
    variances = tuple(trial_variance(task) for task in outcomes)
    single = sum(v is None for v in variances)
    method = WITHIN_TASK if single == 0 else BINOMIAL_BOUND if single == len(variances) else MIXED
    return TrialVariances(
        variances=tuple(rate * (1.0 - rate) if v is None else v for v in variances), trials=tuple(task.n for task in outcomes), method=method
    )


def difference_standard_error(a: TrialVariances, b: TrialVariances) -> float:
    """Standard error of pass^1(B) - pass^1(A) for two runs on the same tasks: only trial noise, the tasks are paired."""
    if a.tasks != b.tasks:
        raise ValueError(f"runs on the same tasks have as many variances: {a.tasks} and {b.tasks}")
    return math.sqrt(a.mean_variance + b.mean_variance)


def minimum_detectable_difference(standard_error: float, *, alpha: float = 0.05, power: float = 0.8) -> float:
    """The true difference a two-sided test at alpha detects with this power, given the difference's standard error."""
    return z_total(alpha, power) * standard_error


def trials_needed(mean_variance: float, tasks: int, delta: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Trials per task, in each of two runs on `tasks` tasks, for the runs to detect a pass^1 difference of delta."""
    # MDD = z * sqrt(2 * mean_variance / (tasks * trials)), solved for trials.
    return _at_least_one(2.0 * mean_variance * z_total(alpha, power) ** 2 / (tasks * delta**2))


def tasks_needed(mean_variance: float, trials: int, delta: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Tasks (as noisy as the measured ones), in each of two runs of `trials` trials, to detect a difference of delta."""
    return _at_least_one(2.0 * mean_variance * z_total(alpha, power) ** 2 / (trials * delta**2))


def _at_least_one(x: float) -> int:
    # A relative tolerance keeps an exact integer (11.000000000000002) from becoming 12.
    return max(1, math.ceil(x * (1.0 - 1e-12)))


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)
