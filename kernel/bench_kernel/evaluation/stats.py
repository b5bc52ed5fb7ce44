"""Reliability figures plugins share (pass^k, flips) with seeded bootstrap confidence intervals, and agreement between judges."""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any, TypeVar

import attrs

from bench_kernel.schema.results import is_success

T = TypeVar("T")


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Probability that k trials drawn without replacement from n (c successful) all succeed."""
    if k < 1 or k > n:
        raise ValueError(f"k must be in [1, n={n}], got k={k}")
    if c < 0 or c > n:
        raise ValueError(f"c must be in [0, n={n}], got c={c}")
    return math.comb(c, k) / math.comb(n, k)


@attrs.frozen(kw_only=True)
class Estimate:
    """A point estimate with a bootstrap confidence interval over n units."""

    value: float
    low: float
    high: float
    n: int


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """The q-quantile of sorted values, linearly interpolated between order statistics."""
    position = q * (len(sorted_values) - 1)
    lower = math.floor(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    fraction = position - lower
    return sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * fraction


def bootstrap_ci(units: Sequence[T], statistic: Callable[[Sequence[T]], float], *, seed: str, resamples: int = 2000, level: float = 0.95) -> Estimate:
    """Percentile bootstrap CI of statistic, resampling the units with replacement."""
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    n = len(units)
    if n == 0:
        return Estimate(value=math.nan, low=math.nan, high=math.nan, n=0)
    value = statistic(units)
    if n == 1:
        return Estimate(value=value, low=value, high=value, n=1)
    # A private RNG, stable across processes and Python versions (hash() of a str is salted per process: sha256).
    rng = random.Random(int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big"))
    stats = sorted(statistic(rng.choices(units, k=n)) for _ in range(resamples))
    tail = (1.0 - level) / 2.0
    return Estimate(value=value, low=_quantile(stats, tail), high=_quantile(stats, 1.0 - tail), n=n)


def _mean(values: Sequence[float]) -> float:
    """Arithmetic mean of a non-empty sequence."""
    return math.fsum(values) / len(values)


def mean_estimate(values: Sequence[float], *, seed: str) -> Estimate:
    """Mean of values with a bootstrap CI over the values."""
    return bootstrap_ci(list(values), _mean, seed=seed)


@attrs.frozen
class TaskOutcomes:
    """Success of each trial of one task, ordered by trial index."""

    task_id: str
    successes: tuple[bool, ...] = attrs.field(converter=lambda values: tuple(map(bool, values)))

    @property
    def n(self) -> int:
        """Number of trials."""
        return len(self.successes)

    @property
    def c(self) -> int:
        """Number of successful trials."""
        return sum(self.successes)

    @property
    def flips(self) -> int:
        """Number of consecutive trial pairs whose outcomes differ."""
        return sum(a != b for a, b in itertools.pairwise(self.successes))

    @property
    def flip_rate(self) -> float:
        """Flips per consecutive pair; 0.0 with fewer than two trials."""
        return self.flips / (self.n - 1) if self.n >= 2 else 0.0

    @property
    def mixed(self) -> bool:
        """Whether the task both succeeded and failed at least once."""
        return 0 < self.c < self.n


def pass_hat_k_estimate(outcomes: Sequence[TaskOutcomes], k: int, *, seed: str) -> Estimate:
    """Mean pass^k over tasks (tasks with fewer than k trials excluded), with a bootstrap CI over tasks."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    return mean_estimate([pass_hat_k(task.n, task.c, k) for task in outcomes if task.n >= k], seed=seed)


def flip_summary(outcomes: Sequence[TaskOutcomes]) -> dict[str, int | float]:
    """Counts and shares of tasks whose outcome varies across trials; shares are 0.0 with no tasks."""
    tasks = len(outcomes)
    mixed_tasks = sum(1 for task in outcomes if task.mixed)
    return {
        "tasks": tasks,
        "mixed_tasks": mixed_tasks,
        "mixed_share": mixed_tasks / tasks if tasks else 0.0,
        "mean_flip_rate": _mean([task.flip_rate for task in outcomes]) if tasks else 0.0,
    }


@attrs.frozen
class Agreement:
    """How far two judges agree on the same items: observed agreement and Cohen's kappa."""

    items: int
    """Items both judges labelled."""
    observed: float | None
    """Share of items given the same label; None without items."""
    kappa: float | None
    """Cohen's kappa; None without items, or when chance agreement is 1 (one label given to every item: undefined)."""


def judge_agreement(table: Mapping[tuple[Any, Any], int]) -> Agreement:
    """Agreement of two judges from the count of items per (first judge's label, second judge's label)."""
    n = sum(table.values())
    if n == 0:
        return Agreement(items=0, observed=None, kappa=None)
    observed = sum(count for (a, b), count in table.items() if a == b) / n
    first, second = Counter[Hashable](), Counter[Hashable]()
    for (a, b), count in table.items():
        first[a] += count
        second[b] += count
    chance = sum((first[label] / n) * (second[label] / n) for label in first)
    return Agreement(items=n, observed=observed, kappa=(observed - chance) / (1 - chance) if chance < 1 else None)


def trial_variance(task: TaskOutcomes) -> float | None:
    """Unbiased estimate of p(1-p), the variance of one trial's success, from the task's trials; None with one trial."""
    if task.n < 2:
        return None
    return task.c * (task.n - task.c) / (task.n * (task.n - 1))


def task_outcomes(rows: Iterable[Mapping[str, Any]]) -> list[TaskOutcomes]:
    """Per task, the success of each trial in trial order, from stored conversation rows (`task_id`, `trial`, `reward`)."""
    by_task: dict[str, list[tuple[int, bool]]] = {}
    for r in rows:
        by_task.setdefault(r["task_id"], []).append((r["trial"], is_success(r["reward"])))
    return [TaskOutcomes(task_id=t, successes=[s for _, s in sorted(v)]) for t, v in sorted(by_task.items())]
