"""The agentic memory evaluator: per turn, extract -> existence check -> update or insert and link -> proactive audit.

Follows ATOD's memory system (paper section 5, appendix B): a candidate is the same as a stored goal when
their core contents are equal, else when one of its top-k (5) neighbours with cosine >= 0.75 is
confirmed by the judge; a new goal is linked to its 3 nearest goals as the judge labels them (link,
dependency, none); every unfinished goal whose dependencies are all finished is then audited.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import attrs

from .index import VectorIndex
from .judges import Candidate, MemoryJudge
from .store import GoalStore, StoredGoal
from .turns import Turn

TOP_K = 5
SIMILARITY_THRESHOLD = 0.75
RELATED_K = 5
UNFINISHED = frozenset({"open", "pending"})


@attrs.frozen(kw_only=True)
class TurnTrace:
    """What one turn cost and did."""

    turn: int
    first_message: int
    last_message: int
    latency_ms: float
    judge_calls: int
    prompt_tokens: int
    completion_tokens: int
    candidates: int
    inserted: int
    updated: int
    audited: int


@attrs.define
class MemoryEvaluator:
    """One conversation's memory: a goal store, a vector index over the goals' core contents and a judge."""

    store: GoalStore
    index: VectorIndex
    judge: MemoryJudge
    top_k: int = TOP_K
    threshold: float = SIMILARITY_THRESHOLD

    async def run(self, turns: Sequence[Turn]) -> list[TurnTrace]:
        """Every turn in order."""
        return [await self.step(turn) for turn in turns]

    async def step(self, turn: Turn) -> TurnTrace:
        """One turn through the whole pipeline, timed."""
        started = time.perf_counter()
        before = (self.judge.calls, self.judge.prompt_tokens, self.judge.completion_tokens)
        candidates = await self.judge.extract(turn)
        inserted = updated = 0
        for candidate in candidates:
            match = await self.existing(candidate, turn)
            if match is not None:
                updated += await self._update(match, candidate, turn)
            elif candidate.speaker == "user" or (candidate.speaker == "system" and candidate.status is not None):
                # A tool call only updates a goal someone raised: the agent's own lookups are not the user's goals.
                await self.insert(candidate, turn)
                inserted += 1
        audited = await self.audit(turn)
        return TurnTrace(
            turn=turn.number,
            first_message=turn.first,
            last_message=turn.last,
            latency_ms=(time.perf_counter() - started) * 1000,
            judge_calls=self.judge.calls - before[0],
            prompt_tokens=self.judge.prompt_tokens - before[1],
            completion_tokens=self.judge.completion_tokens - before[2],
            candidates=len(candidates),
            inserted=inserted,
            updated=updated,
            audited=audited,
        )

    async def existing(self, candidate: Candidate, turn: Turn) -> str | None:
        """The stored goal the candidate restates: equal core content, else a confirmed close neighbour."""
        exact = self.store.by_core_content(candidate.core_content)
        if exact:
            return exact[-1].id
        for key, similarity in await self.index.search(candidate.core_content, self.top_k):
            if similarity >= self.threshold and await self.judge.same_goal(candidate, self.store.get(key), turn):
                return key
        return None

    async def _update(self, goal_id: str, candidate: Candidate, turn: Turn) -> int:
        before = self.store.get(goal_id)
        # The user's own words replace the description only when they add details.
        own_words = candidate.speaker == "user" and bool(set(candidate.slots) - set(before.slots))
        changed = self.store.update(
            goal_id,
            turn=turn.number,
            status=candidate.status,
            slots=candidate.slots,
            content=candidate.content if own_words else None,
            core_content=candidate.core_content,
        )
        core = self.store.get(goal_id).core_content
        if core != before.core_content:
            await self.index.add(goal_id, core)  # its distinguishing value learnt: indexed under the longer core content
        return int(changed)

    async def insert(self, candidate: Candidate, turn: Turn) -> str:
        """Store a new goal (open unless the turn says otherwise), index it and link it to its nearest goals."""
        goal_id = self.store.insert(
            domain=candidate.domain,
            intent=candidate.intent,
            content=candidate.content,
            core_content=candidate.core_content,
            slots=candidate.slots,
            status=candidate.status or "open",
            turn=turn.number,
        )
        related = [key for key, _ in await self.index.search(candidate.core_content, RELATED_K)]
        await self.index.add(goal_id, candidate.core_content)
        for key in related:
            label = await self.judge.relation(candidate, self.store.get(key), turn)
            if label in ("dependency", "link"):
                self.store.link(goal_id, key, label)
        return goal_id

    def auditable(self) -> list[StoredGoal]:
        """Unfinished goals none of whose dependencies is still unfinished."""
        return [g for g in self.store.goals() if g.status in UNFINISHED and not self.store.blocked(g.id)]

    async def audit(self, turn: Turn) -> int:
        """Ask the judge about every auditable goal; returns how many changed."""
        goals = self.store.goals()
        changed = 0
        for goal in self.auditable():
            status = await self.judge.audit(goal, turn, goals)
            if status is not None and status != goal.status:
                changed += int(self.store.update(goal.id, turn=turn.number, status=status))
        return changed
