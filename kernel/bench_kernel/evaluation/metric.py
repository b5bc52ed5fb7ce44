"""What judges and metrics are: registered objects that score finished conversations."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel.conversation.messages import Message
from bench_kernel.evaluation.results import Check, ConversationResult
from bench_kernel.tasks.schema import Task



@attrs.frozen(kw_only=True)
class JudgeRequest:
    """A conversation and the natural-language assertions to judge it against."""

    task: Task
    messages: Sequence[Message]
    assertions: Sequence[str]
    seed: int
    models: Any = None
    """The conversation's model access (bench_kernel.modelhub.ConversationModels), role 'judge'."""


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
