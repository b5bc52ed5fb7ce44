"""`bench plan`: how many trials (or tasks) two runs need to detect a pass^1 difference, and what they cost (docs/noise.md)."""

from __future__ import annotations

import json
import math
from typing import Any

from bench_kernel import ConfigError, Store, TerminationReason, task_outcomes

from .noise import ALPHA, POWER, method_note, noise_card, num, trials_text
from .stats import WITHIN_TASK, minimum_detectable_difference, tasks_needed, trial_variances, trials_needed

INFRA = TerminationReason.INFRASTRUCTURE_ERROR.value
MAX_TRIALS = 16
"""The most trials per task a plan proposes before it asks for more tasks instead."""


MIN_DELTA = 0.001
"""The smallest difference `bench plan` sizes (a tenth of a point: below it the counts mean nothing)."""


def _check_plan(delta: float, alpha: float, power: float, max_trials: int) -> None:
    if not MIN_DELTA <= delta < 1.0:
        raise ConfigError(
            f"--delta must be a pass^1 difference from {MIN_DELTA} up to 1 (exclusive), got {delta}: a smaller "
            "one needs more trials than any run can play"
        )
    if not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ConfigError(f"--alpha and --power must be between 0 and 1 (exclusive), got {alpha} and {power}")
    if max_trials < 1:
        raise ConfigError(f"--max-trials must be at least 1, got {max_trials}")


def build_plan(
    store: Store, run_id: str, delta: float, *, alpha: float = ALPHA, power: float = POWER, max_trials: int = MAX_TRIALS
) -> dict[str, Any]:
    """Trials (or tasks) two runs need to detect a pass^1 difference of delta, sized and priced on a baseline run."""
    _check_plan(delta, alpha, power, max_trials)
    store.run(run_id)  # an unknown run is a clean error
    rows = [r for r in store.conversations(run_id) if r["arm"] == "agent" and r["termination_reason"] != INFRA]
    if not rows:
        raise ConfigError(f"run {run_id!r} has no finished agent conversation: nothing to measure its noise from")
    outcomes = task_outcomes(rows)
    variances = trial_variances(outcomes)
    tasks, trials = variances.tasks, min(variances.trials)
    needed = trials_needed(variances.mean, tasks, delta, alpha=alpha, power=power)
    design = (tasks, needed) if needed <= max_trials else (tasks_needed(variances.mean, max_trials, delta, alpha=alpha, power=power), max_trials)
    return {
        "baseline": run_id,
        "delta": delta,
        "alpha": alpha,
        "power": power,
        "tasks": tasks,
        "trials": trials,
        "method": variances.method,
        "trial_variance": num(variances.mean),
        "baseline_mdd": noise_card(outcomes, alpha=alpha, power=power)["mdd"],
        "trials_needed": needed,
        "max_trials": max_trials,
        "design": _design(variances.mean, *design, alpha, power),
        "more_tasks_needed": design[0] > tasks,
        "cost": _cost(store, run_id, len(rows), design[0] * design[1]),
    }


def _design(mean_variance: float, tasks: int, trials: int, alpha: float, power: float) -> dict[str, Any]:
    error = math.sqrt(2.0 * mean_variance / (tasks * trials))
    return {
        "tasks": tasks,
        "trials": trials,
        "conversations_per_run": tasks * trials,
        "mdd": num(minimum_detectable_difference(error, alpha=alpha, power=power)),
    }


def _cost(store: Store, run_id: str, measured: int, per_run: int) -> dict[str, Any]:
    """Model calls, tokens and dollars per conversation from the run's ledger, scaled to one and two runs of the plan."""
    ledger = [r for r in [*store.llm_costs(run_id), *store.reported_usage(run_id)] if r["arm"] == "agent"]
    calls = sum(r["calls"] for r in ledger)
    priced = bool(ledger) and not any(r["unpriced"] for r in ledger)
    totals = {
        "model_calls": calls,
        "prompt_tokens": _tokens(ledger, "prompt_tokens"),
        "completion_tokens": _tokens(ledger, "completion_tokens"),
        "usd": math.fsum(r["cost"] or 0.0 for r in ledger) if priced else None,
    }
    per_conversation = {k: None if v is None else v / measured for k, v in totals.items()}
    return {
        "measured_conversations": measured,
        "per_conversation": _rounded(per_conversation),
        "per_run": _rounded(_scaled(per_conversation, per_run)),
        "both_runs": _rounded(_scaled(per_conversation, 2 * per_run)),
        "priced": priced,
        "note": _cost_note(ledger, priced),
    }


def _tokens(ledger: list[dict[str, Any]], key: str) -> int | None:
    # Unknown when no ledgered call has a count (no call at all: the agent may have called its models itself).
    known = [r[key] for r in ledger if r[key] is not None]
    return sum(known) if known else None


def _scaled(values: dict[str, float | None], factor: int) -> dict[str, float | None]:
    return {k: None if v is None else v * factor for k, v in values.items()}


def _rounded(values: dict[str, float | None]) -> dict[str, float | None]:
    return {k: None if v is None else round(v, 6) for k, v in values.items()}


def _cost_note(ledger: list[dict[str, Any]], priced: bool) -> str:
    if not ledger:
        return "no model call in the baseline's ledger (the agent made none, or called its models itself): cost unknown"
    if not priced:
        return "some model calls have no known price (pass --price MODEL=IN,OUT to bench run): cost unknown"
    return "from the baseline's ledger: every model call of the evaluated arm (agent, user, judge), failed calls included"


def render_plan(plan: dict[str, Any], fmt: str) -> str:
    """A plan as json or a few lines of text."""
    if fmt == "json":
        return json.dumps(plan, indent=2, sort_keys=True) + "\n"
    design, cost = plan["design"], plan["cost"]
    where = (
        f"on the baseline's {plan['tasks']} tasks"
        if not plan["more_tasks_needed"]
        else f"on {design['tasks']} tasks as noisy as the baseline's ({plan['trials_needed']} trials would be needed on its "
        f"{plan['tasks']}, more than --max-trials {plan['max_trials']})"
    )
    lines = [
        f"Plan for a pass^1 difference of {plan['delta']:g} (two-sided test at alpha {plan['alpha']:g}, "
        f"{plan['power']:.0%} power), sized on run {plan['baseline']}",
        f"baseline: {plan['tasks']} tasks x {trials_text(plan['trials'])}, per-trial variance {plan['trial_variance']:.4f} "
        f"({method_note(plan['method'])}); two runs of its size detect {plan['baseline_mdd']:.3f}",
        f"needed: {trials_text(design['trials'])} per task {where}, in each of the two runs: "
        f"{design['conversations_per_run']} conversations per run, detecting {design['mdd']:.3f}",
        f"cost per conversation (from {cost['measured_conversations']} measured): {_cost_text(cost['per_conversation'])}",
        f"cost per run: {_cost_text(cost['per_run'])}; both runs: {_cost_text(cost['both_runs'])}",
        f"note: {cost['note']}",
    ]
    if plan["method"] != WITHIN_TASK:
        lines.append(
            "note: single-trial tasks get the binomial bound, which over-states the noise: a baseline of two or more "
            "trials per task gives a smaller plan"
        )
    if plan["trial_variance"] == 0:
        lines.append("note: no task's outcome varied in the baseline: it shows no noise to size against")
    return "\n".join(lines) + "\n"


def _cost_text(values: dict[str, float | None]) -> str:
    def count(v: float | None) -> str:
        return "unknown" if v is None else f"{v:,.1f}" if v != int(v) else f"{int(v):,}"

    usd = "unknown" if values["usd"] is None else f"${values['usd']:.4f}"
    return (
        f"{count(values['model_calls'])} model calls, {count(values['prompt_tokens'])} prompt + "
        f"{count(values['completion_tokens'])} completion tokens, {usd}"
    )
