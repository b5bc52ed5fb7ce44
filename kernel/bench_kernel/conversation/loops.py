"""Conversation loops: how a run plays a mode the kernel's turn-based orchestrator does not (full duplex, by bench-duplex)."""

from __future__ import annotations

import attrs

from bench_kernel.conversation.channels import ChannelSession
from bench_kernel.conversation.orchestrator import Conversation, Limits
from bench_kernel.conversation.participants import AgentSession, ConversationSetup, UserSession
from bench_kernel.schema.events import EventLog
from bench_kernel.tools.environment import Environment

LOOP_PLUGINS = {"full-duplex": "duplex"}
"""The modes played by a registered loop, each with the plugin that registers it (entry point NAME, distribution
bench-NAME): a run in such a mode loads that plugin with the ones it names, and is refused when it is missing."""


@attrs.define(kw_only=True)
class ConversationLoop:
    """Base class of registered conversation loops: `play` plays one conversation of the mode it is named after.

    default, no-user and oracle-plan conversations are played by the kernel's orchestrator; a mode in LOOP_PLUGINS
    (`full-duplex`) by the loop registered under its name.
    """

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
        """Play one conversation to its end, never raising for a participant's failure (its termination says it).

        The kernel starts the sessions before and closes them after; `channel` is None for the identity channel;
        `setup.history` is the opening, stamped; `audio_name` is the file stem of a recording the loop may keep.
        """
        raise NotImplementedError
