"""Noise-aware numbers: the noise card of a report and the noise verdict of a comparison (`bench plan` is in plan.py).

Every figure here is about pass^1 (the mean over tasks of each task's success rate) and assumes the two runs compared
play the same tasks, so only trial-to-trial noise separates them (docs/noise.md gives the formulas and their check).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from bench_kernel import TaskOutcomes, flip_summary

from .stats import (
    BINOMIAL_BOUND,
    WITHIN_TASK,
    TrialVariances,
    difference_standard_error,
    minimum_detectable_difference,
    trial_variances,
    z_critical,
)

ALPHA = 0.05
POWER = 0.8
WITHIN_NOISE = "within noise"
BEYOND_NOISE = "beyond noise"


def num(x: float | None) -> float | None:
    """A figure rounded to 6 places for the output; None for NaN."""
    return None if x is None or math.isnan(x) else round(x, 6)


def _single_trial(variances: TrialVariances) -> TrialVariances:
    """The same per-task variances for runs of one trial per task."""
    return TrialVariances(variances=variances.variances, trials=(1,) * variances.tasks, method=variances.method)


def noise_card(outcomes: Sequence[TaskOutcomes], *, alpha: float = ALPHA, power: float = POWER) -> dict[str, Any]:
    """The noise card: what difference two runs of this size on these tasks can detect, and how often tasks flip."""
    variances = trial_variances(outcomes)
    trials = sorted(set(variances.trials))
    flips = flip_summary(outcomes)
    card: dict[str, Any] = {
        "alpha": alpha,
        "power": power,
        "tasks": variances.tasks,
        "trials_min": trials[0] if trials else 0,
        "trials_max": trials[-1] if trials else 0,
        "method": variances.method,
        "trial_variance": num(variances.mean) if outcomes else None,
        "flipped_tasks": flips["mixed_tasks"],
        "flipped_share": num(flips["mixed_share"]),
        "expected_flip_share": num(2.0 * variances.mean) if outcomes else None,
        "mean_flip_rate": num(flips["mean_flip_rate"]),
    }
    for key, sized in (("", variances), ("one_trial_", _single_trial(variances))):
        error = difference_standard_error(sized, sized) if outcomes else math.nan
        card[f"{key}standard_error"] = num(error)
        card[f"{key}critical_difference"] = num(z_critical(alpha) * error)
        card[f"{key}mdd"] = num(minimum_detectable_difference(error, alpha=alpha, power=power))
    return card


def method_note(method: str) -> str:
    """How a run's trial variances were estimated, in words."""
    return {WITHIN_TASK: "per-task variances from each task's trials", BINOMIAL_BOUND: "binomial bound p(1-p) from the pass rate"}.get(method, method)


def card_lines(card: dict[str, Any]) -> list[str]:
    """The noise card as a few sentences (text and markdown reports)."""
    if not card or not card.get("tasks"):
        return ["no scored agent conversation: no noise estimate"]
    low, high = card["trials_min"], card["trials_max"]
    size = f"{card['tasks']} tasks x {trials_text(low) if low == high else f'{low}-{high} trials'}"
    level = f"two-sided test at alpha {card['alpha']:g}, {card['power']:.0%} power"
    if card["trial_variance"] == 0:
        return [
            f"MDD of pass^1 between two runs of this size ({size}): 0.000: no task's outcome varied "
            f"({method_note(card['method'])}), so the run shows no trial noise to size a difference against"
        ]
    lines = [
        f"minimum detectable difference (MDD) of pass^1 between two runs of this size ({size}) on the same tasks: "
        f"{card['mdd']:.3f} ({level}; an observed difference is significant beyond {card['critical_difference']:.3f})"
    ]
    if card["method"] == BINOMIAL_BOUND:
        return [
            *lines,
            f"one trial per task: per-trial variance at most {card['trial_variance']:.3f} ({method_note(card['method'])}), "
            f"so the MDD is an upper bound; two such runs are expected to disagree on at most "
            f"{card['expected_flip_share']:.1%} of tasks; run 2 or more trials to measure flips",
        ]
    return [
        *lines,
        f"with one trial per task: MDD {card['one_trial_mdd']:.3f}, significant beyond {card['one_trial_critical_difference']:.3f}",
        f"per-trial variance {card['trial_variance']:.3f} ({method_note(card['method'])}); {card['flipped_tasks']} of "
        f"{card['tasks']} tasks ({card['flipped_share']:.1%}) flipped between trials; two single-trial runs are expected "
        f"to disagree on {card['expected_flip_share']:.1%} of tasks",
    ]


def card_rows(card: dict[str, Any]) -> list[dict[str, Any]]:
    """The noise card as summary rows (metric, value, n, n_of) for the CSV report."""
    if not card:
        return []
    tasks = {"low": None, "high": None, "n": card["tasks"], "errors": 0, "n_of": f"tasks ({card['method']} variances)"}
    names = ("mdd", "critical_difference", "one_trial_mdd", "one_trial_critical_difference", "trial_variance", "flipped_share", "expected_flip_share")
    return [{"metric": f"noise.{name}", "value": card[name], **tasks} for name in names]


# --------------------------------------------------------------------------- compare


def pair_noise(
    a: Sequence[TaskOutcomes], b: Sequence[TaskOutcomes], figure: dict[str, Any] | None, *, alpha: float = ALPHA, power: float = POWER
) -> dict[str, Any] | None:
    """Whether two runs' pass^1 difference (paired figure: difference, low, high) is within what they can detect."""
    if not a or figure is None or figure.get("difference") is None:
        return None
    va, vb = trial_variances(a), trial_variances(b)
    error = difference_standard_error(va, vb)
    mdd = minimum_detectable_difference(error, alpha=alpha, power=power)
    difference, low, high = figure["difference"], figure["low"], figure["high"]
    covers_zero = low <= 0.0 <= high
    below = abs(difference) < mdd
    return {
        "figure": "pass^1",
        "alpha": alpha,
        "power": power,
        "method_a": va.method,
        "method_b": vb.method,
        "standard_error": num(error),
        "critical_difference": num(z_critical(alpha) * error),
        "mdd": num(mdd),
        "difference": difference,
        "low": low,
        "high": high,
        "interval_covers_zero": covers_zero,
        "below_mdd": below,
        "within_noise": covers_zero or below,
        "verdict": WITHIN_NOISE if covers_zero or below else BEYOND_NOISE,
        "reason": _reason(covers_zero, below, mdd) + (NO_VARIATION if error == 0.0 else ""),
        "no_variation": error == 0.0,
    }


def comparison_noise(comparison: Mapping[str, Any]) -> dict[str, Any] | None:
    """`pair_noise` of a comparison as `bench compare --format json` holds it: per task, successes of trials, and pass^1."""
    tasks = comparison.get("tasks") or []
    a = [_counted(t["task_id"], t["successes_a"], t["trials_a"]) for t in tasks]
    b = [_counted(t["task_id"], t["successes_b"], t["trials_b"]) for t in tasks]
    return pair_noise(a, b, (comparison.get("pass_hat_k") or {}).get("1"))


def _counted(task_id: str, successes: int, trials: int) -> TaskOutcomes:
    # A task's variance depends on its counts alone, never on the order of its trials.
    return TaskOutcomes(task_id, [True] * successes + [False] * (trials - successes))


NO_VARIATION = (
    "; but no task's outcome varied between trials in either run (or each ran one trial of a task that "
    "passed or failed every time), so these runs measured no noise: the verdict holds for these trials only"
)


def _reason(covers_zero: bool, below: bool, mdd: float) -> str:
    if covers_zero and below:
        return f"the difference is below the {mdd:.3f} these runs can detect and its 95% interval contains 0"
    if covers_zero:
        return "the 95% interval of the difference contains 0"
    if below:
        return (
            f"the interval excludes 0 but the difference is below the {mdd:.3f} these runs detect reliably: confirm it with more trials (bench plan)"
        )
    return f"the difference exceeds the {mdd:.3f} these runs can detect and its 95% interval excludes 0"


def pair_noise_line(noise: dict[str, Any] | None) -> str:
    """One sentence for `bench compare`'s table and markdown."""
    if noise is None:
        return "Noise: no common task, no noise estimate"
    return (
        f"Noise: pass^1 difference {noise['difference']:+.3f} (95% {noise['low']:+.3f} to {noise['high']:+.3f}); "
        f"these runs detect {noise['mdd']:.3f} (alpha {noise['alpha']:g}, {noise['power']:.0%} power; significant "
        f"beyond {noise['critical_difference']:.3f}): {noise['verdict'].upper()}: {noise['reason']}"
    )


def trials_text(n: int) -> str:
    """'1 trial', '4 trials'."""
    return f"{n} trial{'' if n == 1 else 's'}"
