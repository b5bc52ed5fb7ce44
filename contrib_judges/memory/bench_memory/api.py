"""Evaluating conversations with the memory evaluator: one at a time (async) or a list of (task, messages, events)."""

from __future__ import annotations

import asyncio
import hashlib
import math
import statistics
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import attrs
from bench_atod import Goal, task_goals
from bench_knowledge import EmbeddingRequest

from bench_kernel import BenchError, ChatRequest, ChatResponse, Event, EventLog, Message

from .evaluator import MemoryEvaluator, TurnTrace
from .index import VectorIndex, make_index
from .judges import LLMJudge, MemoryJudge, RulesJudge
from .scoring import Scores, gold_timeline, score
from .store import GoalStore, StoredGoal
from .turns import split_turns

Complete = Callable[[ChatRequest], Awaitable[ChatResponse]]
Embed = Callable[[EmbeddingRequest], Awaitable[Any]]


@attrs.frozen(kw_only=True)
class DialogueEvaluation:
    """The memory evaluator's result for one conversation (scores None and `error` set when its judge failed)."""

    conversation_id: str
    scores: Scores | None
    turns: list[TurnTrace]
    goals: list[StoredGoal]
    edges: list[tuple[str, str, str]]
    matching: dict[str, str]
    rows: list[tuple[str, dict[str, Any]]]
    error: str | None = None

    def values(self) -> dict[str, float | None]:
        """The figures stored as the metric's values."""
        latencies = [t.latency_ms for t in self.turns]
        s = self.scores
        out: dict[str, float | None] = (
            {}
            if s is None
            else {
                "detection_f1": s.detection_f1,
                "detection_precision": s.detection_precision,
                "detection_recall": s.detection_recall,
                "status_accuracy": s.status_accuracy,
                "final_status_accuracy": s.final_status_accuracy,
                "dependency_f1": s.dependency_f1,
                "goals_detected": s.detected,
                "goals_gold": s.gold,
            }
        )
        out.update(
            {
                "turns": len(self.turns),
                "latency_ms_mean": statistics.fmean(latencies) if latencies else None,
                "latency_ms_p95": p95(latencies),
                "prompt_tokens_per_turn": _mean([t.prompt_tokens for t in self.turns]),
                "completion_tokens_per_turn": _mean([t.completion_tokens for t in self.turns]),
            }
        )
        return out

    def details(self) -> dict[str, Any]:
        """The counts behind the figures (run-level figures sum them) and the goal matching."""
        if self.scores is None:
            return {}
        data = attrs.asdict(self.scores)
        data.pop("per_turn")
        return {"counts": data, "matching": self.matching}


def p95(values: Sequence[float]) -> float | None:
    """The 95th percentile by nearest rank (None for no values)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(0.95 * len(ordered)) - 1, 0)]


def _mean(values: Sequence[float]) -> float | None:
    return statistics.fmean(values) if values else None


def make_judge(name: str, complete: Complete | None = None, *, seed: int | None = None) -> MemoryJudge:
    """A judge by name: rules (deterministic) or llm (needs a chat completion function)."""
    if name == "rules":
        return RulesJudge()
    if name == "llm":
        if complete is None:
            raise BenchError(
                "the llm memory judge needs a model: configure the memory-judge role "
                "(--model-option memory-judge.model=NAME --model-option memory-judge.base_url=URL)"
            )
        return LLMJudge(complete=complete, seed=seed)
    raise BenchError(f"unknown memory judge {name!r} (rules, llm)")


def stable_seed(text: str) -> int:
    """A seed from a stable name."""
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "big")


async def evaluate_conversation(
    goals: Sequence[Goal], messages: Sequence[Message], events: Sequence[Event], *, conversation_id: str, judge: MemoryJudge, index: VectorIndex
) -> DialogueEvaluation:
    """Run the evaluator over a finished conversation turn by turn and score it against its goals (judge errors propagate)."""
    store = GoalStore(conversation_id)
    turns = split_turns(messages)
    traces = await MemoryEvaluator(store=store, index=index, judge=judge).run(turns)
    detected, edges = store.goals(), store.edges()
    scores, matching = score(detected, edges, goals, gold_timeline(goals, events), turns)
    store.set_gold(matching)
    rows = store.rows() + [("memory_turns", _turn_row(conversation_id, t, scores.per_turn[i])) for i, t in enumerate(traces)]
    return DialogueEvaluation(
        conversation_id=conversation_id, scores=scores, turns=traces, goals=store.goals(), edges=edges, matching=matching, rows=rows
    )


def _turn_row(conversation_id: str, trace: TurnTrace, statuses: tuple[int, int]) -> dict[str, Any]:
    return {"conversation_id": conversation_id, **attrs.asdict(trace), "statuses_compared": statuses[0], "statuses_correct": statuses[1]}


def failed(conversation_id: str, error: BaseException) -> DialogueEvaluation:
    """The result of a conversation whose judge failed."""
    return DialogueEvaluation(
        conversation_id=conversation_id, scores=None, turns=[], goals=[], edges=[], matching={}, rows=[], error=f"{type(error).__name__}: {error}"
    )


def _goals_of(task: Any) -> list[Goal]:
    if isinstance(task, Sequence) and not isinstance(task, str):
        return list(task)
    return task_goals(task)


def _events_of(events: Any) -> list[Event]:
    return list(events.events) if isinstance(events, EventLog) else list(events or [])


def evaluate_dialogues(
    items: Iterable[tuple[Any, Sequence[Message], Any]],
    *,
    judge: str = "rules",
    index: str = "lexical",
    complete: Complete | None = None,
    embed: Embed | None = None,
) -> list[DialogueEvaluation]:
    """Evaluate (task or goal list, messages, events or EventLog) triples; a failing judge becomes that dialogue's `error`."""

    async def go() -> list[DialogueEvaluation]:
        out = []
        for n, (task, messages, events) in enumerate(items):
            cid = getattr(task, "id", None) or f"dialogue-{n}"
            try:
                out.append(
                    await evaluate_conversation(
                        _goals_of(task),
                        messages,
                        _events_of(events),
                        conversation_id=cid,
                        judge=make_judge(judge, complete, seed=stable_seed(cid)),
                        index=make_index(index, embed),
                    )
                )
            except BenchError as exc:
                out.append(failed(cid, exc))
        return out

    return asyncio.run(go())
