"""The gsrt metric: per conversation, each shift's recovery; per run, rates, medians and worst cases by persona and position."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from bench_kernel import AssistantMessage, GoalShift, Judge, JudgeRequest, Metric, MetricContext, MetricResult, RunView, Task, UserMessage

from .recovery import Recovery, Shift, recover

PLAN = "shift_plan"
DELTAS = ("acknowledgment", "tool", "outcome")


def shifts_of(context: MetricContext) -> list[Shift]:
    """The conversation's shifts, from the GoalShift events its user simulator emitted, with each goal's tools."""
    tools = goal_tools(context.task)
    found = []
    for event, shift in context.events.typed(GoalShift):
        if event.message_index is not None:
            found.append(
                Shift(turn=event.message_index, goal_index=shift.goal_index, goal=shift.goal, tools=tools.get(shift.goal_index, frozenset()))
            )
    return found


def goal_tools(task: Task) -> dict[int, frozenset[str]]:
    """The tools each goal of a shift plan needs (its gold actions' names), by goal index."""
    plan = task.extension(PLAN)
    if plan is None:
        return {}
    names = {a.action_id: a.name for a in task.gold_actions()}
    return {i: frozenset(names[a] for a in goal.action_ids if a in names) for i, goal in enumerate(plan.goals)}


@attrs.define(kw_only=True)
class GoalShiftRecovery(Metric):
    """GSRT: for each goal shift, turns to acknowledgement, first relevant tool step and outcome; recovery and transfers."""

    name: str = "gsrt"
    description: str = "Goal-shift recovery (AgentChangeBench's GSRT), measured from the true shift turns."
    default_shifts: int = 1
    """Shifts per conversation when a run loads this plugin without --shifts or --shift-plan."""

    async def score(self, context: MetricContext) -> MetricResult:
        """Per conversation: shifts, recovery and transfer rates, mean turns to each step; per shift in the details."""
        shifts = shifts_of(context)
        ends: list[int | None] = [s.turn for s in shifts[1:]] + [None] if shifts else []
        recoveries = [recover(context.messages, s, until) for s, until in zip(shifts, ends, strict=True)]
        judge = context.judge if context.judge is not None and context.judge.name != "imported" else None
        if judge is not None:
            recoveries = [await judged(judge, context, r, until) for r, until in zip(recoveries, ends, strict=True)]
        values: dict[str, float | None] = {
            "": _rate(recoveries, lambda r: r.recovered),
            "shifts": float(len(shifts)),
            "transfer_rate": _rate(recoveries, lambda r: r.transferred),
        }
        for step in DELTAS:
            deltas = [d for r in recoveries if r.recovered and (d := r.delta(_turn(r, step))) is not None]
            values[f"{step}_turns"] = statistics.fmean(deltas) if deltas else None
        return MetricResult(values=values, details={"": {"shifts": [_row(r) for r in recoveries]}})

    def summarize(self, view: RunView) -> dict[str, float | None]:
        """Recovery and transfer rates over all shifts, median and worst turns to each step, by persona and by position."""
        attributes = {c["id"]: c.get("attributes") or {} for c in view.conversations()}
        rows = [
            (attributes.get(v["conversation_id"], {}), shift)
            for v in view.values(self.name, plugin=view.plugin)
            for shift in json.loads(v["details_json"] or "{}").get("shifts", [])
        ]
        out = _figures("", [s for _, s in rows])
        by_persona: dict[str, list[dict[str, Any]]] = defaultdict(list)
        by_position: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for attrs_, shift in rows:
            by_persona[str(attrs_.get("persona", "none"))].append(shift)
            by_position[str(shift["goal_index"])].append(shift)
        for persona, members in sorted(by_persona.items()):
            out.update(_figures(f" persona={persona}", members, brief=True))
        for position, members in sorted(by_position.items()):
            out.update(_figures(f" shift={position}", members, brief=True))
        return out


CANDIDATES = 6
"""Agent messages after a shift that a model judge is asked about (the first it says takes up the new goal wins)."""


async def judged(judge: Judge, context: MetricContext, recovery: Recovery, until: int | None) -> Recovery:
    """The recovery with its acknowledgement decided by the run's judge (an LLM judge through its model role)."""
    messages = context.messages
    shift = recovery.shift
    said = messages[shift.turn].content if isinstance(messages[shift.turn], UserMessage) else ""
    end = len(messages) if until is None else until
    candidates = [i for i in range(shift.turn + 1, end) if isinstance(messages[i], AssistantMessage)][:CANDIDATES]
    if not candidates:
        return attrs.evolve(recovery, acknowledgment_turn=None)
    statements = [f"Message {i} (from the agent) takes up the customer's new request, which was: {said!r}" for i in candidates]
    checks = await judge.judge(
        JudgeRequest(
            task=context.task, messages=messages, assertions=statements, seed=context.result.seed, models=context.models, profile=context.profile
        )
    )
    ack = next((i for i, check in zip(candidates, checks, strict=False) if check.met), None)
    return attrs.evolve(recovery, acknowledgment_turn=ack)


def _figures(suffix: str, shifts: list[dict[str, Any]], *, brief: bool = False) -> dict[str, float | None]:
    recovered = [s for s in shifts if s["recovered"]]
    out: dict[str, float | None] = {
        f"shifts{suffix}": float(len(shifts)),
        f"recovery_rate{suffix}": len(recovered) / len(shifts) if shifts else None,
        f"transfer_rate{suffix}": sum(s["transferred"] for s in shifts) / len(shifts) if shifts else None,
    }
    for step in DELTAS if not brief else ("acknowledgment",):
        deltas = [s[f"{step}_delta"] for s in recovered if s[f"{step}_delta"] is not None]
        out[f"median {step} turns{suffix}"] = statistics.median(deltas) if deltas else None
        out[f"worst {step} turns{suffix}"] = float(max(deltas)) if deltas else None
    return out


def _rate(recoveries: Iterable[Recovery], test: Any) -> float | None:
    items = list(recoveries)
    return sum(bool(test(r)) for r in items) / len(items) if items else None


def _turn(recovery: Recovery, step: str) -> int | None:
    return {"acknowledgment": recovery.acknowledgment_turn, "tool": recovery.tool_turn, "outcome": recovery.outcome_turn}[step]


def _row(r: Recovery) -> Mapping[str, Any]:
    return {
        "turn": r.shift.turn,
        "goal_index": r.shift.goal_index,
        "goal": r.shift.goal,
        "recovered": r.recovered,
        "transferred": r.transferred,
        "acknowledgment_turn": r.acknowledgment_turn,
        "tool_turn": r.tool_turn,
        "outcome_turn": r.outcome_turn,
        **{f"{step}_delta": r.delta(_turn(r, step)) for step in DELTAS},
    }
