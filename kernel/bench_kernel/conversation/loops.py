"""Conversation loops: how a run plays a mode the kernel's turn-based orchestrator does not (full duplex, by bench-duplex)."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import attrs

from bench_kernel.conversation.channels import ChannelSession
from bench_kernel.conversation.orchestrator import Conversation, Limits
from bench_kernel.conversation.participants import AgentSession, ConversationSetup, UserSession
from bench_kernel.schema.events import EventLog
from bench_kernel.schema.tasks import Task
from bench_kernel.tools.environment import Environment

LOOP_PLUGINS = {"full-duplex": "duplex"}
"""The modes played by a registered loop, each with the plugin (entry point NAME) a run in that mode loads."""


@attrs.define(kw_only=True)
class ConversationLoop:
    """Base class of registered conversation loops: `play` plays one conversation of the mode it is named after."""

    name: str
    description: str = ""

    async def play(
        self,
        setup: ConversationSetup,
        env: Environment,
        agent: AgentSession,
        user: UserSession | None,
        channel: ChannelSession | None,
        *,
        events: EventLog,
        limits: Limits,
        audio_name: str,
    ) -> Conversation:
        """Play one conversation to its end, never raising for a participant's failure (its termination says it)."""
        raise NotImplementedError

    def configure(
        self, settings: Mapping[str, Any] | None, channel: str, channels: Collection[str], tasks: Sequence[Task]
    ) -> tuple[dict[str, Any], str]:
        """The run's settings for this mode completed and checked, and the channel it plays through; called once per run."""
        return dict(settings or {}), channel
