"""Turns as the memory evaluator reads them: a user utterance and everything up to the next one (replies, tool calls, results)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import AssistantMessage, Message, ToolMessage, UserMessage


@attrs.frozen(kw_only=True)
class ToolResult:
    """One tool call of the turn and what it returned."""

    name: str
    arguments: dict[str, Any]
    content: str
    error: bool = False


@attrs.frozen(kw_only=True)
class Turn:
    """One turn: 1-based number, its message span (inclusive) and its texts."""

    number: int
    first: int
    last: int
    user: str
    system: str
    tools: tuple[ToolResult, ...] = ()

    def transcript(self) -> str:
        """The turn as plain text, for a model judge."""
        lines = [f"user: {self.user}"] if self.user else []
        lines += [f"tool {t.name}({json.dumps(t.arguments, sort_keys=True)}) -> {t.content}" for t in self.tools]
        if self.system:
            lines.append(f"assistant: {self.system}")
        return "\n".join(lines)


def split_turns(messages: Sequence[Message]) -> list[Turn]:
    """Cut a conversation into turns at each user utterance; what precedes the first one is a turn of its own."""
    starts = [i for i, m in enumerate(messages) if isinstance(m, UserMessage) and (m.content or "").strip()]
    if not starts or starts[0] != 0:
        starts = [0, *starts] if messages else starts
    turns = []
    for n, start in enumerate(starts):
        end = (starts[n + 1] if n + 1 < len(starts) else len(messages)) - 1
        turns.append(_turn(n + 1, start, end, messages))
    return turns


def _turn(number: int, first: int, last: int, messages: Sequence[Message]) -> Turn:
    span = messages[first : last + 1]
    user = " ".join((m.content or "").strip() for m in span if isinstance(m, UserMessage) and m.content)
    system = " ".join((m.content or "").strip() for m in span if isinstance(m, AssistantMessage) and m.content)
    calls = {c.id: c for m in span if isinstance(m, AssistantMessage) for c in (m.tool_calls or [])}
    tools = tuple(
        ToolResult(
            name=calls[m.id].name if m.id in calls else "",
            arguments=dict(calls[m.id].arguments) if m.id in calls else {},
            content=m.content or "",
            error=bool(m.error),
        )
        for m in span
        if isinstance(m, ToolMessage)
    )
    return Turn(number=number, first=first, last=last, user=user, system=system, tools=tools)
