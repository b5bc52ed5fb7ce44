"""What judges and metrics are: registered objects that score finished conversations, with their context."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from bench_kernel.errors import ConfigError
from bench_kernel.modelhub.api import ChatRequest, ChatResponse
from bench_kernel.profiles.profile import Profile, bench_profile
from bench_kernel.schema.events import EventLog
from bench_kernel.schema.messages import Message
from bench_kernel.schema.results import Check, ConversationResult
from bench_kernel.schema.tasks import Task
from bench_kernel.tools.environment import Environment

if TYPE_CHECKING:
    from bench_kernel.store.view import RunView


@attrs.frozen(kw_only=True)
class JudgeRequest:
    """A conversation and the natural-language assertions to judge it against."""

    task: Task
    messages: Sequence[Message]
    assertions: Sequence[str]
    seed: int
    models: Any = None
    """The conversation's model access (bench_kernel.modelhub.ConversationModels), role 'judge'."""
    profile: Profile = attrs.field(factory=bench_profile)
    """The run's profile: a model judge takes its prompt texts, request shape and sampling from it."""
    attempt: int = 0
    """0 for the first judgment; n for the n-th retry after a failed one (each with its own `seed`)."""
    member: int = 0
    """The panel member asking (0 without a panel); each member has its own `seed`."""

    @property
    def first(self) -> bool:
        """True for the judgment a run without a panel sends first (the one a profile's request shape describes)."""
        return self.attempt == 0 and self.member == 0


@attrs.define(kw_only=True)
class Judge:
    """Base class of registered judges (NL assertions and judge metrics)."""

    name: str
    description: str = ""
    code_fingerprint: str = ""
    """What identifies the judge's code, as `Agent.code_fingerprint`: part of the run's identity when not empty."""

    async def judge(self, request: JudgeRequest) -> list[Check]:
        """One check per assertion, in order, each with the assertion as its subject; raise when the verdict is unreadable."""
        raise NotImplementedError

    async def profile_deviations(self, profile: Profile) -> list[str] | None:
        """How the judge's requests depart from the profile's judge (texts, request shape), as `Agent.profile_deviations`."""
        return None


@attrs.frozen(kw_only=True)
class MetricResult:
    """What a metric returns for one conversation: values by sub-metric ("" for the metric itself) and details."""

    values: Mapping[str, float | None]
    details: Mapping[str, Any] = attrs.field(factory=dict)
    """JSON-ready details by sub-metric name, stored beside each value."""


@attrs.frozen(kw_only=True)
class MetricContext:
    """Everything a metric may look at for one finished conversation, and where it may write."""

    task: Task
    """The task, with its plugin-owned data in `task.extensions`."""
    result: ConversationResult
    """The conversation: messages, termination, reward and every component's checks."""
    events: EventLog
    final_env: Environment
    """The conversation's final agent (and user) state."""
    gold: Any
    """The task's GoldReplay."""
    judge: Judge | None = None
    models: Any = None
    """The conversation's model access: calls are ledgered, cached and capped like the participants'."""
    role: str | None = None
    """The metric's own model role (the first of its `model_roles`)."""
    profile: Profile = attrs.field(factory=bench_profile)
    """The run's profile (pass it on in a JudgeRequest)."""
    rows: list[tuple[str, dict[str, Any]]] = attrs.field(factory=list)
    source: str = ""

    @property
    def messages(self) -> Sequence[Message]:
        """The conversation's messages."""
        return self.result.messages

    async def complete(self, request: ChatRequest, *, role: str | None = None) -> ChatResponse:
        """One chat completion for the metric's role (or another role it declared)."""
        chosen = role or self.role
        if chosen is None or self.models is None:
            raise ConfigError(f"metric {self.source!r} called a model without declaring model_roles")
        return await self.models.complete(chosen, request)

    def write(self, table: str, *rows: dict[str, Any]) -> None:
        """Queue rows for one of the plugin's own tables; stored in the conversation's transaction."""
        self.rows.extend((table, dict(row)) for row in rows)

    def emit(self, event: Any) -> None:
        """Record an event for this conversation (stored with it)."""
        self.events.emit(event, source=self.source)


@attrs.define(kw_only=True)
class Metric:
    """Base class of registered metrics: `score` per conversation (async or not), `summarize` per run."""

    name: str
    description: str = ""
    model_roles: tuple[str, ...] = ()
    """Model roles the metric calls (checked before a run starts); the first is `context.role`."""
    code_fingerprint: str = ""
    """What identifies the metric's code, as `Agent.code_fingerprint`: part of the run's identity when not empty."""

    async def score(self, context: MetricContext) -> MetricResult | Mapping[str, float | None]:
        """Values of this metric for one finished conversation, keyed by sub-metric name ("" for the metric itself)."""
        raise NotImplementedError

    def summarize(self, view: RunView) -> Mapping[str, float | None]:
        """Run-level figures (rates, medians, worst cases, per persona) that `bench report` shows; none by default."""
        return {}
