"""AgentChangeBench's formulas as pure functions over a conversation's messages (research notes §3).

TSR: a weighted mean of three channels, renormalised over the channels a task has
(communicate 0.25, action 0.45, NL assertions 0.30). TUE: 0.6 tool correctness + 0.4 parameter
validity. TCRR: the share of redundant tool calls, within a window of the 3 previous assistant
turns and beyond 2 identical calls in one turn, computed per conversation.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import AssistantMessage, Message, ToolMessage, UserMessage

TSR_WEIGHTS: Mapping[str, float] = {"communicate": 0.25, "action": 0.45, "nl": 0.30}
TUE_WEIGHTS: Mapping[str, float] = {"tool_correctness": 0.6, "param_validity": 0.4}
TCRR_WINDOW = 3
TCRR_BATCH_THRESHOLD = 2
PARAMETER_ERRORS = ("invalid parameter", "missing parameter", "parameter error", "bad parameter", "invalid argument", "missing argument")


@attrs.frozen(kw_only=True)
class Call:
    """One tool call of a conversation, with its result and the assistant turn it belongs to."""

    name: str
    arguments: Mapping[str, Any]
    requestor: str
    error: bool
    result: str | None
    turn: int
    """How many assistant messages came before it, this one included (1-based, text-only ones count)."""


def tool_calls(messages: Sequence[Message]) -> list[Call]:
    """Every tool call (agent's and user's), in order, with its result looked up by call id."""
    results = {m.id: m for m in messages if isinstance(m, ToolMessage)}
    calls, turn = [], 0
    for message in messages:
        if isinstance(message, AssistantMessage):
            turn += 1
        if not isinstance(message, AssistantMessage | UserMessage):
            continue
        for call in message.tool_calls or ():
            found = results.get(call.id)
            calls.append(
                Call(
                    name=call.name,
                    arguments=dict(call.arguments),
                    requestor=call.requestor,
                    error=bool(found and found.error),
                    result=found.content if found else None,
                    turn=turn,
                )
            )
    return calls


# --------------------------------------------------------------------------- TSR


def communicate_score(info: Sequence[str], messages: Sequence[Message]) -> float:
    """The share of the facts that appear (case-insensitively) somewhere in the agent's text."""
    text = " ".join(m.content for m in messages if isinstance(m, AssistantMessage) and m.content).lower()
    if not text:
        return 0.0
    return sum(1 for fact in info if fact.lower() in text) / len(info)


def action_set_score(allowed: Sequence[tuple[str, Mapping[str, Any]]], calls: Sequence[Call]) -> float:
    """Best over the allowed tools: 0.5 for calling it, +0.5 when the listed parameters match (first call of that name)."""
    best = 0.0
    for name, params in allowed:
        first = next((c for c in calls if c.name == name), None)
        if first is not None:
            matched = all(key in first.arguments and first.arguments[key] == value for key, value in params.items())
            best = max(best, 0.5 + 0.5 * matched)
    return best


def action_score(action_sets: Sequence[Sequence[tuple[str, Mapping[str, Any]]]], calls: Sequence[Call]) -> float:
    """The mean of the action sets' scores."""
    return sum(action_set_score(allowed, calls) for allowed in action_sets) / len(action_sets)


def tsr(channels: Mapping[str, float | None], weights: Mapping[str, float] = TSR_WEIGHTS) -> float | None:
    """The weighted mean of the channels present (None: the task has no such channel), weights renormalised."""
    present = {name: value for name, value in channels.items() if value is not None}
    total = sum(weights[name] for name in present)
    if not present or total == 0:
        return None
    return sum(weights[name] / total * value for name, value in present.items())


# --------------------------------------------------------------------------- TUE


def tue(calls: Sequence[Call]) -> dict[str, float]:
    """Tool correctness (calls without an error), parameter validity (errors that do not blame a parameter), TUE."""
    if not calls:
        return {"": 0.0, "tool_correctness": 0.0, "param_validity": 0.0}
    correct = sum(not c.error for c in calls) / len(calls)
    valid = sum(not (c.error and any(p in (c.result or "").lower() for p in PARAMETER_ERRORS)) for c in calls) / len(calls)
    score = TUE_WEIGHTS["tool_correctness"] * correct + TUE_WEIGHTS["param_validity"] * valid
    return {"": score, "tool_correctness": correct, "param_validity": valid}


# --------------------------------------------------------------------------- TCRR


def identity(call: Call) -> tuple[str, Any]:
    """What makes two calls the same: the name and the normalised arguments."""
    return call.name, _normalised(call.arguments)


def _normalised(value: Any) -> Any:
    try:
        if isinstance(value, Mapping):
            return tuple(sorted((k, _normalised(v)) for k, v in value.items()))
        if isinstance(value, list | tuple):
            return tuple(sorted(_normalised(v) for v in value))
        hash(value)
        return value
    except TypeError:
        return json.dumps(value, sort_keys=True, default=str)


def redundant(calls: Sequence[Call], *, window: int = TCRR_WINDOW, batch: int = TCRR_BATCH_THRESHOLD, batch_by_name: bool = False) -> tuple[int, int]:
    """(window-redundant, batch-redundant) calls: repeats of a call from the previous `window` turns, and
    occurrences beyond `batch` of one call in a turn (of one tool name, with batch_by_name: the older rule)."""
    by_turn: dict[int, list[Call]] = {}
    for call in calls:
        by_turn.setdefault(call.turn, []).append(call)
    in_window = in_batch = 0
    for turn, members in sorted(by_turn.items()):
        previous = {identity(c) for t in range(max(1, turn - window), turn) for c in by_turn.get(t, ())}
        in_window += sum(identity(c) in previous for c in members)
        counts = Counter(c.name if batch_by_name else identity(c) for c in members)
        in_batch += sum(max(0, n - batch) for n in counts.values())
    return in_window, in_batch


def tcrr(calls: Sequence[Call], **options: Any) -> dict[str, float | None]:
    """TCRR of one conversation, with its window and batch parts (None without tool calls)."""
    if not calls:
        return {"": None, "window": None, "batch": None}
    in_window, in_batch = redundant(calls, **options)
    return {"": (in_window + in_batch) / len(calls), "window": in_window / len(calls), "batch": in_batch / len(calls)}


def pooled_tcrr(conversations: Iterable[Sequence[Call]], **options: Any) -> float | None:
    """AgentChangeBench's published TCRR: every conversation's calls in one list, so equal turn numbers share a bucket.

    Kept only to compare with published figures: identical calls of different trials or tasks count as redundant.
    """
    pooled = [call for calls in conversations for call in calls]
    if not pooled:
        return None
    in_window, in_batch = redundant(pooled, **options)
    return (in_window + in_batch) / len(pooled)
