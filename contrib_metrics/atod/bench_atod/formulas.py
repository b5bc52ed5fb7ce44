"""ATOD's LLM-free formulas: dGCR, turns to completion (NTC) and dependency F1, on plain data.

dGCR = completed / decided, decided = completed or failed (open, pending, dependency-blocked,
abandoned and never-mentioned goals are left out). NTC = max(0, end - first mentioned) per decided
goal, end = the turn it was completed or (last) failed. Both pool over goals (micro) when several
conversations are put together, as ATOD's scripts do per complexity class.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence

import attrs

from .goals import DECIDED, Goal
from .tracking import Outcome


@attrs.frozen(kw_only=True)
class GoalCounts:
    """Counts behind dGCR and NTC; summing them over conversations gives the pooled (micro) figures."""

    goals: int = 0
    completed: int = 0
    failed: int = 0
    ntc_turns: int = 0
    ntc_goals: int = 0
    ntc_completed_turns: int = 0
    ntc_completed_goals: int = 0

    def __add__(self, other: GoalCounts) -> GoalCounts:
        return GoalCounts(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in attrs.fields(GoalCounts)})

    @property
    def decided(self) -> int:
        """Goals that ended completed or failed."""
        return self.completed + self.failed

    @property
    def dgcr(self) -> float | None:
        """completed / decided (None when no goal was decided)."""
        return self.completed / self.decided if self.decided else None

    @property
    def ntc(self) -> float | None:
        """Mean turns from first mention to completion or failure over decided goals (ATOD's code)."""
        return self.ntc_turns / self.ntc_goals if self.ntc_goals else None

    @property
    def ntc_completed(self) -> float | None:
        """The same over completed goals only (ATOD's paper wording)."""
        return self.ntc_completed_turns / self.ntc_completed_goals if self.ntc_completed_goals else None

    def as_dict(self) -> dict[str, int]:
        """JSON-ready."""
        return attrs.asdict(self)


def turns_to_end(outcome: Outcome) -> int | None:
    """max(0, end - first mentioned) for a decided goal with both turns known, else None."""
    if outcome.final_status not in DECIDED or outcome.end_turn is None or outcome.first_mentioned_turn is None:
        return None
    return max(0, outcome.end_turn - outcome.first_mentioned_turn)


def goal_counts(outcomes: Sequence[Outcome]) -> GoalCounts:
    """The dGCR and NTC counts of one conversation's goals."""
    turns = [(o, t) for o in outcomes if (t := turns_to_end(o)) is not None]
    done = [t for o, t in turns if o.final_status == "completed"]
    return GoalCounts(
        goals=len(outcomes),
        completed=sum(o.final_status == "completed" for o in outcomes),
        failed=sum(o.final_status == "failed" for o in outcomes),
        ntc_turns=sum(t for _, t in turns),
        ntc_goals=len(turns),
        ntc_completed_turns=sum(done),
        ntc_completed_goals=len(done),
    )


def pooled(counts: Iterable[GoalCounts]) -> GoalCounts:
    """The counts of several conversations added up (micro averaging)."""
    total = GoalCounts()
    for c in counts:
        total = total + c
    return total


@attrs.frozen(kw_only=True)
class EdgeScores:
    """Dependency edges found against annotated ones: TP, FP, FN and the ratios (micro when summed)."""

    tp: int
    fp: int
    fn: int

    def __add__(self, other: EdgeScores) -> EdgeScores:
        return EdgeScores(tp=self.tp + other.tp, fp=self.fp + other.fp, fn=self.fn + other.fn)

    @property
    def precision(self) -> float | None:
        """TP / predicted (None when nothing was predicted)."""
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else None

    @property
    def recall(self) -> float | None:
        """TP / annotated (None when nothing is annotated)."""
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else None

    @property
    def f1(self) -> float | None:
        """2TP / (2TP + FP + FN): the harmonic mean, 0 when one side is empty, None when both are."""
        total = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / total if total else None


def _edge_key(edge: tuple[Hashable, Hashable]) -> tuple[Hashable, Hashable]:
    return tuple(" ".join(x.lower().split()) if isinstance(x, str) else x for x in edge)  # type: ignore[return-value]


def dependency_scores(predicted: Iterable[tuple[Hashable, Hashable]], annotated: Iterable[tuple[Hashable, Hashable]]) -> EdgeScores:
    """Edges (prerequisite, goal) compared as sets; strings compared case- and space-insensitively (ATOD compares texts)."""
    found = {_edge_key(e) for e in predicted}
    gold = {_edge_key(e) for e in annotated}
    return EdgeScores(tp=len(found & gold), fp=len(found - gold), fn=len(gold - found))


def dependency_f1(predicted: Iterable[tuple[Hashable, Hashable]], annotated: Iterable[tuple[Hashable, Hashable]]) -> float | None:
    """Dependency F1 of one set of edges against the annotated ones."""
    return dependency_scores(predicted, annotated).f1


def annotated_edges(goals: Sequence[Goal], *, by: str = "id") -> set[tuple[str, str]]:
    """The goal list's dependency edges (prerequisite, goal), by goal id or by goal content."""
    label = {g.id: (g.content if by == "content" else g.id) for g in goals}
    return {(label.get(dep, dep), label[g.id]) for g in goals for dep in g.dependencies}
