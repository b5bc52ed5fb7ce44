"""Scoring the memory against the task's goals: goal detection F1, status tracking accuracy, dependency F1.

Gold statuses per message come from the conversation's `goal.status` events; without any, from the
goals' annotated `status_history` (ATOD's turn t is message index t-1). Detected goals are matched
one-to-one to gold goals by identity: the same canonical intent (required), then the most shared slot
values, then the closer wording; no judge is asked, so matching is deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from bench_atod import Goal, GoalStatusChange

from bench_kernel import Event

from . import catalogue as cat
from .store import StoredGoal
from .turns import Turn


@attrs.frozen(kw_only=True)
class GoldTimeline:
    """Each gold goal's status changes as (message index, status), in order."""

    changes: dict[str, list[tuple[int, str]]]
    final: dict[str, str]

    def status_at(self, goal_id: str, last_message: int) -> str:
        """The goal's gold status once the message `last_message` has been written."""
        status = "not_mentioned"
        for index, value in self.changes.get(goal_id, []):
            if index <= last_message:
                status = value
        return status

    def mentioned(self, goal_id: str) -> bool:
        """True when the dialogue ever brings the goal up."""
        return any(s != "not_mentioned" for _, s in self.changes.get(goal_id, [])) or self.final.get(goal_id, "not_mentioned") != "not_mentioned"


def gold_timeline(goals: Sequence[Goal], events: Sequence[Event]) -> GoldTimeline:
    """Status changes from `goal.status` events (message index; none -> 0), else from the annotated status histories."""
    changes: dict[str, list[tuple[int, str]]] = {g.id: [] for g in goals}
    evented = [e for e in events if e.kind == GoalStatusChange.kind]
    for event in evented:
        change = event.as_type(GoalStatusChange)
        changes.setdefault(change.goal_id, []).append((event.message_index or 0, change.status.lower()))
    if not evented:
        for goal in goals:
            changes[goal.id] = [(max(entry.turn - 1, 0), entry.status) for entry in goal.status_history]
    for values in changes.values():
        values.sort(key=lambda c: c[0])  # stable: same-index changes keep their order
    final = {g.id: (changes[g.id][-1][1] if changes.get(g.id) else g.status) for g in goals}
    return GoldTimeline(changes=changes, final=final)


def gold_key(goal: Goal) -> str:
    """A gold goal's canonical intent."""
    return cat.canonical_intent(goal.domain, goal.intent, goal.content, goal.core_content)


def _values(slots: Mapping[str, Any]) -> set[str]:
    return {str(v).strip().lower() for v in slots.values() if v not in (None, "")}


def _pair_score(detected: StoredGoal, gold: Goal) -> tuple[int, float]:
    shared = len(_values(detected.slots) & _values(gold.slot_values))
    left, right = set(cat.words(detected.content)), set(cat.words(gold.content))
    overlap = len(left & right) / len(left | right) if left | right else 0.0
    return shared, overlap


def match_goals(detected: Sequence[StoredGoal], gold: Sequence[Goal]) -> dict[str, str]:
    """Detected goal id -> gold goal id, one-to-one, greedily by (shared slot values, word overlap), ties by order."""
    keys = {g.id: gold_key(g) for g in gold}
    pairs = [(_pair_score(d, g), i, j, d.id, g.id) for i, d in enumerate(detected) for j, g in enumerate(gold) if d.intent == keys[g.id]]
    pairs.sort(key=lambda p: (-p[0][0], -p[0][1], p[1], p[2]))
    matched: dict[str, str] = {}
    used: set[str] = set()
    for _, _, _, detected_id, gold_id in pairs:
        if detected_id not in matched and gold_id not in used:
            matched[detected_id] = gold_id
            used.add(gold_id)
    return matched


def f1(tp: int, fp: int, fn: int) -> tuple[float | None, float | None, float | None]:
    """Precision, recall and F1 (None where a denominator is 0; F1 0 when both are 0 and there was something to find)."""
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None and recall is None:
        return None, None, None
    p, r = precision or 0.0, recall or 0.0
    return precision, recall, (2 * p * r / (p + r) if p + r else 0.0)


@attrs.frozen(kw_only=True)
class Scores:
    """One conversation's figures and the counts behind them (run-level figures sum the counts)."""

    detected: int
    gold: int
    matched: int
    detection_precision: float | None
    detection_recall: float | None
    detection_f1: float | None
    statuses_compared: int
    statuses_correct: int
    status_accuracy: float | None
    final_compared: int
    final_correct: int
    final_status_accuracy: float | None
    dependency_tp: int
    dependency_fp: int
    dependency_fn: int
    dependency_precision: float | None
    dependency_recall: float | None
    dependency_f1: float | None
    per_turn: list[tuple[int, int]] = attrs.field(factory=list)
    """(compared, correct) status pairs per turn."""


def score(
    detected: Sequence[StoredGoal], edges: Sequence[tuple[str, str, str]], gold: Sequence[Goal], timeline: GoldTimeline, turns: Sequence[Turn]
) -> tuple[Scores, dict[str, str]]:
    """The figures of one conversation, and the detected -> gold matching they rest on."""
    mentioned = [g for g in gold if timeline.mentioned(g.id)] if any(timeline.mentioned(g.id) for g in gold) else list(gold)
    matching = match_goals(detected, mentioned)
    p, r, f = f1(len(matching), len(detected) - len(matching), len(mentioned) - len(matching))
    per_turn = [_turn_statuses(detected, matching, timeline, turn) for turn in turns]
    compared, correct = sum(c for c, _ in per_turn), sum(k for _, k in per_turn)
    final = [(d.status, timeline.final.get(matching[d.id])) for d in detected if d.id in matching]
    tp, fp, fn = _dependency_counts(edges, matching, mentioned)
    dp, dr, df = f1(tp, fp, fn)
    return Scores(
        detected=len(detected),
        gold=len(mentioned),
        matched=len(matching),
        detection_precision=p,
        detection_recall=r,
        detection_f1=f,
        statuses_compared=compared,
        statuses_correct=correct,
        status_accuracy=correct / compared if compared else None,
        final_compared=len(final),
        final_correct=sum(1 for a, b in final if a == b),
        final_status_accuracy=(sum(1 for a, b in final if a == b) / len(final) if final else None),
        dependency_tp=tp,
        dependency_fp=fp,
        dependency_fn=fn,
        dependency_precision=dp,
        dependency_recall=dr,
        dependency_f1=df,
        per_turn=per_turn,
    ), matching


def _turn_statuses(detected: Sequence[StoredGoal], matching: Mapping[str, str], timeline: GoldTimeline, turn: Turn) -> tuple[int, int]:
    """Matched goals the memory holds at the end of the turn, and how many have the gold status then."""
    pairs = [(d.status_at(turn.number), timeline.status_at(matching[d.id], turn.last)) for d in detected if d.id in matching]
    held = [(mine, gold) for mine, gold in pairs if mine is not None]
    return len(held), sum(1 for mine, gold in held if mine == gold)


def _dependency_counts(edges: Sequence[tuple[str, str, str]], matching: Mapping[str, str], gold: Sequence[Goal]) -> tuple[int, int, int]:
    """Detected (prerequisite -> goal) edges mapped to gold ids against the gold edges among mentioned goals."""
    ids = {g.id for g in gold}
    expected = {(d, g.id) for g in gold for d in g.dependencies if d in ids}
    # An edge touching an unmatched goal keeps its own ids: it can only be a false positive.
    found = {(matching.get(related, f"?{related}"), matching.get(goal, f"?{goal}")) for goal, related, kind in edges if kind == "dependency"}
    tp = len({e for e in found if e in expected})
    return tp, len(found) - tp, len(expected) - tp
