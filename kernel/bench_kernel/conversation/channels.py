"""Channels: the pluggable seam between user and agent that may transform what crosses it (docs/plugins.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from bench_kernel.conversation.participants import ConversationSetup
from bench_kernel.schema.messages import AssistantMessage, UserMessage


class ChannelSession:
    """One channel in one conversation; the base class passes everything through unchanged."""

    async def to_agent(self, message: UserMessage) -> UserMessage:
        """What the agent receives of a user message."""
        return message

    async def to_user(self, message: AssistantMessage) -> AssistantMessage:
        """What the user receives of an agent message."""
        return message

    async def close(self) -> None:
        """Release what the session holds."""


@attrs.define(kw_only=True)
class Channel:
    """Base class of registered channels: `start` makes a session for one conversation."""

    name: str
    description: str = ""
    model_roles: tuple[str, ...] = ()
    """Model roles the channel needs configured (e.g. `tts`, `asr`), checked before a run starts."""
    default_models: Mapping[str, Mapping[str, Any]] = attrs.field(factory=dict)
    """What a role it needs uses when the run leaves it unconfigured (e.g. {"tts": {"backend": "piper", "model": "joe"}})."""

    def start(self, setup: ConversationSetup) -> ChannelSession:
        """A new session for one conversation."""
        raise NotImplementedError


@attrs.define(kw_only=True)
class IdentityChannel(Channel):
    """The default: text reaches the other side exactly as it was written."""

    name: str = "identity"
    description: str = "Passes every message through unchanged (text in, text out)."

    def start(self, setup: ConversationSetup) -> ChannelSession:
        """A pass-through session."""
        return ChannelSession()
