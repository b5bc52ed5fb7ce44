"""Registered services other than participants: model backends, judges, metrics."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from .models import Check, ConversationResult, Message, Task, ToolCall


@attrs.frozen(kw_only=True)
class ChatRequest:
    """An OpenAI-style chat completion request, backend-neutral."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | None = None
    sampling: Mapping[str, Any] = attrs.field(factory=dict)
    seed: int | None = None


@attrs.frozen(kw_only=True)
class ChatResponse:
    """What a model answered."""

    content: str | None
    tool_calls: list[ToolCall] = attrs.field(factory=list)
    reasoning: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: int | None = None
    raw: Mapping[str, Any] | None = None


@attrs.define(kw_only=True)
class Model:
    """Base class of registered model backends."""

    name: str
    description: str = ""

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion."""
        raise NotImplementedError

    async def close(self) -> None:
        """Release connections."""


@attrs.frozen(kw_only=True)
class JudgeRequest:
    """A conversation and the natural-language assertions to judge it against."""

    task: Task
    messages: Sequence[Message]
    assertions: Sequence[str]
    seed: int


@attrs.define(kw_only=True)
class Judge:
    """Base class of registered judges (NL assertions and judge metrics)."""

    name: str
    description: str = ""

    async def judge(self, request: JudgeRequest) -> list[Check]:
        """One check per assertion, in order."""
        raise NotImplementedError


@attrs.define(kw_only=True)
class Metric:
    """Base class of registered per-conversation metrics (stored in long format)."""

    name: str
    description: str = ""

    def score(self, result: ConversationResult) -> Mapping[str, float]:
        """Values of this metric for one finished conversation, keyed by sub-metric name."""
        raise NotImplementedError
