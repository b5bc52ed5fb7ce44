"""ATOD's metrics with context: dgcr, ntc (LLM-free), mra, pe, turn_quality and
dialogue_quality (judged), each per conversation.

Each is its own metric, so a judge that fails on one conversation costs only the judged figure
(recorded as that metric's error), never dGCR or NTC. Run-level figures by complexity class
are the `atod` report section (`summary.py`).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from bench_kernel import Metric, MetricContext, MetricResult

from .dialogue import Dialogue
from .formulas import GoalCounts, goal_counts
from .goals import Goal, task_goals
from .judges import judgement_for
from .tracking import annotated_outcomes, event_changes, event_outcomes, is_annotated, lifecycles


def dialogue_of(context: MetricContext) -> Dialogue:
    """The conversation's goals and their lifecycles from its goal.status events."""
    goals = task_goals(context.task)
    known = {g.id for g in goals}
    changes = [c for c in event_changes(context.events, context.messages) if c.goal_id in known]
    return Dialogue(messages=context.messages, goals=goals, changes=changes, lives=lifecycles(goals, changes))


@attrs.define(kw_only=True)
class GoalCompletion(Metric):
    """dGCR: completed over decided goals, from the goal.status events (annotated figure beside it when the task has one)."""

    name: str = "dgcr"
    description: str = "ATOD's dependency-aware goal completion rate: completed / (completed + failed) goals."

    async def score(self, context: MetricContext) -> MetricResult:
        """dGCR and its counts for one conversation; None when no goal was decided."""
        d = dialogue_of(context)
        outcomes = event_outcomes(d.lives)
        counts = goal_counts(outcomes)
        values: dict[str, float | None] = {
            "": counts.dgcr,
            "completed": float(counts.completed),
            "decided": float(counts.decided),
            "goals": float(counts.goals),
        }
        unknown = sorted({c.goal_id for c in event_changes(context.events, context.messages)} - {g.id for g in d.goals})
        details: dict[str, Any] = {
            "": {"counts": counts.as_dict(), "final": {o.goal_id: o.final_status for o in outcomes}, "ignored_goal_ids": unknown}
        }
        _add_annotated(values, details, d.goals, lambda gold: gold.dgcr)
        return MetricResult(values=values, details=details)


def _add_annotated(
    values: dict[str, float | None], details: dict[str, Any], goals: Sequence[Goal], figure: Callable[[GoalCounts], float | None]
) -> None:
    """The same figure from the gold lifecycle, beside the evented one, when the goals carry one (imported dialogues)."""
    if is_annotated(goals):
        gold = goal_counts(annotated_outcomes(goals))
        values["annotated"] = figure(gold)
        details["annotated"] = {"counts": gold.as_dict()}


@attrs.define(kw_only=True)
class TurnsToCompletion(Metric):
    """NTC: turns (utterances) from a goal's first mention to its completion or failure."""

    name: str = "ntc"
    description: str = "ATOD's turns to completion: max(0, end - first mention) over decided goals, in utterance turns."

    async def score(self, context: MetricContext) -> MetricResult:
        """Mean NTC over decided goals (ATOD's code) and over completed goals only (its paper)."""
        d = dialogue_of(context)
        outcomes = event_outcomes(d.lives)
        counts = goal_counts(outcomes)
        turns = {o.goal_id: (o.first_mentioned_turn, o.end_turn) for o in outcomes if o.end_turn is not None}
        values: dict[str, float | None] = {"": counts.ntc, "completed_only": counts.ntc_completed}
        details: dict[str, Any] = {"": {"counts": counts.as_dict(), "turns": turns}}
        _add_annotated(values, details, d.goals, lambda gold: gold.ntc)
        return MetricResult(values=values, details=details)


@attrs.define(kw_only=True)
class MemoryRecall(Metric):
    """MRA: share of memory queries (one per goal status change) whose answer matches the goal's true state."""

    name: str = "mra"
    description: str = "ATOD's memory recall accuracy: after each goal status change, does the agent's next reply reflect it?"

    async def score(self, context: MetricContext) -> MetricResult:
        """Matched queries over queries; None (left out, as ATOD does) when no goal changed."""
        d = dialogue_of(context)
        judge, judged_by = judgement_for(context, d)
        queries = d.queries()
        matches = [await judge.recalls(q) for q in queries]
        rows = [{"goal": q.goal.id, "status": q.status, "reply_index": q.reply_index, "match": m} for q, m in zip(queries, matches, strict=True)]
        matched = sum(matches)
        value = matched / len(rows) if rows else None
        return MetricResult(
            values={"": value, "queries": float(len(rows))},
            details={"": {"judge": judged_by, "matched": matched, "queries": len(rows), "items": rows}},
        )


@attrs.define(kw_only=True)
class Proactivity(Metric):
    """PE: mean of grounded x beneficial over the agent's proactive turns."""

    name: str = "pe"
    description: str = "ATOD's proactivity effectiveness: unprompted goal updates that are grounded and beneficial."

    async def score(self, context: MetricContext) -> MetricResult:
        """Effective proactive turns over proactive turns; None (left out, as ATOD does) when there is none."""
        d = dialogue_of(context)
        judge, judged_by = judgement_for(context, d)
        rows: list[dict[str, Any]] = []
        effective = 0
        for turn in d.proactive_turns():
            grounded, beneficial = await judge.proactive(turn)
            effective += grounded and beneficial
            rows.append({"goal": turn.goal.id, "status": turn.status, "index": turn.index, "grounded": grounded, "beneficial": beneficial})
        value = effective / len(rows) if rows else None
        return MetricResult(
            values={"": value, "turns": float(len(rows))},
            details={"": {"judge": judged_by, "effective": effective, "turns": len(rows), "items": rows}},
        )


@attrs.define(kw_only=True)
class TurnQuality(Metric):
    """Turn-level quality: each agent utterance scored 1-5, divided by 5, averaged (0.2-1.0)."""

    name: str = "turn_quality"
    description: str = "ATOD's turn-level quality: each agent utterance 1-5, divided by 5, averaged over the conversation."

    async def score(self, context: MetricContext) -> MetricResult:
        """The mean scaled score of the agent's utterances (None when the agent never spoke)."""
        d = dialogue_of(context)
        judge, judged_by = judgement_for(context, d)
        scores = [await judge.turn_quality(i) for i in d.agent_utterances()]
        value = statistics.fmean(s / 5 for s in scores) if scores else None
        return MetricResult(values={"": value}, details={"": {"judge": judged_by, "scores": scores}})


@attrs.define(kw_only=True)
class DialogueQuality(Metric):
    """Dialogue-level quality: the whole conversation's coherence, 1-5."""

    name: str = "dialogue_quality"
    description: str = "ATOD's dialogue-level quality: one 1-5 coherence score per conversation."

    async def score(self, context: MetricContext) -> MetricResult:
        """One score for the conversation."""
        d = dialogue_of(context)
        judge, judged_by = judgement_for(context, d)
        return MetricResult(values={"": float(await judge.dialogue_quality())}, details={"": {"judge": judged_by}})


def all_metrics() -> list[Metric]:
    """Every ATOD metric, in report order."""
    return [GoalCompletion(), TurnsToCompletion(), MemoryRecall(), Proactivity(), TurnQuality(), DialogueQuality()]
