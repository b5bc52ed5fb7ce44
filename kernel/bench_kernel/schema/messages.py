"""Messages: what agent, user and environment say to each other, and why a conversation ended."""

from __future__ import annotations

import enum
from typing import Any, Literal, Union

import attrs

from bench_kernel.serialization import converter

Requestor = Literal["assistant", "user"]


class TerminationReason(str, enum.Enum):
    """Why a conversation ended."""

    USER_STOP = "user_stop"
    AGENT_STOP = "agent_stop"
    MAX_STEPS = "max_steps"
    TOO_MANY_ERRORS = "too_many_errors"
    TIMEOUT = "timeout"
    AGENT_ERROR = "agent_error"
    USER_ERROR = "user_error"
    INFRASTRUCTURE_ERROR = "infrastructure_error"


class Mode(str, enum.Enum):
    """How a conversation is wired (tau2's three modes)."""

    DEFAULT = "default"
    NO_USER = "no-user"
    ORACLE_PLAN = "oracle-plan"
    FULL_DUPLEX = "full-duplex"
    """bench's: user and agent stream audio at once in ticks (tau2's voice track); otherwise as the default mode."""


@attrs.frozen(kw_only=True)
class ToolCall:
    """A call of one tool by the agent or the user."""

    id: str = ""
    name: str
    arguments: dict[str, Any] = attrs.field(factory=dict)
    requestor: Requestor = "assistant"


@attrs.frozen(kw_only=True)
class SystemMessage:
    """A system message (only ever found in imported histories)."""

    role: Literal["system"] = "system"
    content: str | None = None
    turn_idx: int | None = None
    timestamp: str | None = None


@attrs.frozen(kw_only=True)
class _ParticipantMessageBase:
    """What agent and user messages share: text and/or tool calls, with usage and cost."""

    content: str | None = None
    tool_calls: list[ToolCall] | None = None
    turn_idx: int | None = None
    timestamp: str | None = None
    cost: float | None = None
    usage: dict[str, int] | None = None
    raw_data: dict[str, Any] | None = None
    latency_ms: int | None = None
    """How long the participant took to produce this message (bench extension)."""

    def has_text(self) -> bool:
        """True when the message has non-blank text."""
        return bool(self.content and self.content.strip())


@attrs.frozen(kw_only=True)
class AssistantMessage(_ParticipantMessageBase):
    """What the agent says or calls."""

    role: Literal["assistant"] = "assistant"


@attrs.frozen(kw_only=True)
class UserMessage(_ParticipantMessageBase):
    """What the (simulated) user says or calls."""

    role: Literal["user"] = "user"


@attrs.frozen(kw_only=True)
class ToolMessage:
    """The result of one tool call, routed back to its requestor."""

    role: Literal["tool"] = "tool"
    id: str = ""
    content: str | None = None
    requestor: Requestor = "assistant"
    error: bool = False
    turn_idx: int | None = None
    timestamp: str | None = None


# typing.Union kept on purpose: the converter's structure hook is registered for this exact object.
Message = Union[SystemMessage, AssistantMessage, UserMessage, ToolMessage]  # noqa: UP007
ParticipantMessage = Union[AssistantMessage, UserMessage]  # noqa: UP007


_MESSAGE_TYPES: dict[str, type[Message]] = {"system": SystemMessage, "assistant": AssistantMessage, "user": UserMessage, "tool": ToolMessage}


def _structure_message(obj: Any, _: Any) -> Message:
    """A message of the class its role names."""
    if not isinstance(obj, dict) or obj.get("role") not in _MESSAGE_TYPES:
        raise ValueError(f"a message needs a role in {sorted(_MESSAGE_TYPES)}, got {obj!r:.80}")
    return converter.structure(obj, _MESSAGE_TYPES[obj["role"]])


# Registered here, not in serialization: the converter sits below the schema and does not import it.
converter.register_structure_hook(Message, _structure_message)
converter.register_unstructure_hook(Message, lambda m: converter.unstructure(m, type(m)))
