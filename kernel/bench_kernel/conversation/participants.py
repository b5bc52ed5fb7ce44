"""What agents and user simulators are: registered factories that start one session per conversation."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel.profiles.profile import Profile, bench_profile
from bench_kernel.schema.events import EventLog
from bench_kernel.schema.messages import AssistantMessage, Message, Mode, TerminationReason, UserMessage
from bench_kernel.schema.tasks import Task

GREETING = "Hi! How can I help you today?"
STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")


@attrs.frozen(kw_only=True)
class ConversationSetup:
    """Everything a participant may know when a conversation starts."""

    task: Task
    domain: str
    mode: Mode
    seed: int
    policy: str
    agent_tools: list[dict[str, Any]]
    user_tools: list[dict[str, Any]] | None
    history: Sequence[Message] = ()
    """Messages already in the conversation (the task's message history, or the greeting)."""
    options: Mapping[str, Any] = attrs.field(factory=dict)
    """Participant options from the run configuration (models, sampling, ...)."""
    services: Any = None
    """The run's component registry."""
    models: Any = None
    """The conversation's model access (bench_kernel.modelhub.ConversationModels): `await models.complete(role, request)`."""
    events: EventLog = attrs.field(factory=EventLog)
    """The conversation's event log: `setup.events.emit(GoalShift(...), source=self.name)`."""
    channel: str = "identity"
    """The channel between user and agent (participants that listen or speak may adapt to it)."""
    channel_options: Mapping[str, Any] = attrs.field(factory=dict)
    """The run's options for its channel (`--channel-option KEY=VALUE`, e.g. snr_db=5)."""
    exposure: str = "none"
    """What the agent may be told about the customer: none, persona (the task's persona) or context (an inferred profile)."""
    profile: Profile = attrs.field(factory=bench_profile)
    """The run's profile: every text an LLM participant sends comes from it (`setup.profile.render("agent", ...)`)."""
    duplex: Mapping[str, Any] | None = None
    """Set in a full-duplex conversation: its settings as the run holds them (read with `bench_duplex.duplex_settings`)."""
    data_dir: str | None = None
    """The run's `--data-dir`, when it has one (a speech channel reads tasks_voice.json and noise files there)."""

    def agent_request_tools(self) -> list[dict[str, Any]]:
        """The tools array a function-calling agent sends under the profile: the agent's tools, then `done` when alone."""
        return [*self.agent_tools, *([dict(self.profile.done_tool)] if self.mode is Mode.NO_USER else [])]

    def agent_tool_choice(self) -> str:
        """The `tool_choice` sent with them: "required" when alone (act, or call `done`), else "auto" (tau2's too)."""
        return "required" if self.mode is Mode.NO_USER else "auto"

    def for_agent(self) -> ConversationSetup:
        """The setup the agent starts with: its history lacks the greeting when the profile keeps it out (AgentChangeBench)."""
        task_history = self.task.initial_state is not None and bool(self.task.initial_state.message_history)
        if self.profile.greeting_in_agent_history or task_history or self.mode is Mode.NO_USER:
            return self
        # The greeting still opens the conversation: the user hears it and the trajectory keeps it.
        return attrs.evolve(self, history=())


class _Session:
    """What agent and user sessions share: how the conversation ended, and `close`."""

    termination: TerminationReason | None = None
    """Why the conversation ended, set by the kernel just before `close()`; None while it runs or when it was cancelled."""

    async def close(self) -> None:
        """Release what the session holds."""


class AgentSession(_Session):
    """One agent in one conversation."""

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """Answer what arrived since the agent last spoke (a user message or tool results)."""
        raise NotImplementedError

    def is_stop(self, message: AssistantMessage) -> bool:
        """True when the message ends the conversation (only solo agents stop)."""
        return False


class UserSession(_Session):
    """One simulated user in one conversation."""

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        """Answer what arrived since the user last spoke (an agent message or tool results)."""
        raise NotImplementedError

    def is_stop(self, message: UserMessage) -> bool:
        """True when the message carries a stop token and no tool call."""
        return not message.tool_calls and any(t in (message.content or "") for t in STOP_TOKENS)


@attrs.define(kw_only=True)
class _Participant:
    """What agents and user simulators share: a registered name, the model roles they need, their code's identity."""

    name: str
    description: str = ""
    model_roles: tuple[str, ...] = ()
    """Model roles it needs configured (checked before a run starts)."""
    duplex_only: bool = False
    """It plays only full-duplex conversations (a realtime speech model, a voice user): other modes are refused at start."""
    code_fingerprint: str = ""
    """What identifies its code, e.g. `source_fingerprint(__file__)`: part of the run's identity when set."""

    async def profile_deviations(self, options: Mapping[str, Any], profile: Profile) -> list[str] | None:
        """How its model requests (prompt, greeting, sampling) depart from the run's profile: `[]` for none, None (custom) to declare nothing."""
        return None


@attrs.define(kw_only=True)
class Agent(_Participant):
    """Base class of registered agents: `start` makes a session for one conversation."""

    exposures: tuple[str, ...] = ("none", "persona", "context")
    """What it can be told about the customer (`--exposure`); a run asking for another is refused at start."""
    calls_models_itself: bool = True
    """The agent may call models bench does not see: without ledgered agent calls its cost is unknown, never 0.0."""

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A new session for one conversation."""
        raise NotImplementedError

    def needed_roles(self, options: Mapping[str, Any], registry: Any) -> tuple[str, ...]:
        """The model roles a run with these agent options needs (checked before it starts); `model_roles` by default."""
        return self.model_roles

    def default_models(self, options: Mapping[str, Any]) -> Mapping[str, Mapping[str, Any]]:
        """Model settings by role for the roles it needs that the run leaves unset, e.g. a realtime agent's backend."""
        return {}

    def fingerprint(self, options: Mapping[str, Any]) -> dict[str, str]:
        """What identifies the code behind the agent beyond its name and options (a source hash, a framework version)."""
        return {}


@attrs.define(kw_only=True)
class UserSimulator(_Participant):
    """Base class of registered user simulators."""

    def start(self, setup: ConversationSetup) -> UserSession:
        """A new session for one conversation."""
        raise NotImplementedError
