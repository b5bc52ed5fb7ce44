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
"""The modes played by a registered loop, each with the plugin that registers it (entry point NAME, distribution
bench-NAME): a run in such a mode loads that plugin with the ones it names, and is refused when it is missing."""


@attrs.define(kw_only=True)
class ConversationLoop:
    """Base class of registered conversation loops: `play` plays one conversation of the mode it is named after.

    default, no-user and oracle-plan conversations are played by the kernel's orchestrator; a mode in LOOP_PLUGINS
    (`full-duplex`) by the loop registered under its name, which owns the mode's settings (`RunConfig.duplex`).
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

    def configure(
        self, settings: Mapping[str, Any] | None, channel: str, channels: Collection[str], tasks: Sequence[Task]
    ) -> tuple[dict[str, Any], str]:
        """The run's settings for this mode completed and checked, and the channel it plays through; called once per run.

        `settings` are the run's (`RunConfig.duplex`, None when it gives none), `channel` the one it names, `channels`
        those loaded. Before anything is stored: the settings returned are part of the run's identity and hash, and
        reach every conversation as `setup.duplex`; raise ConfigError for what the mode cannot play.
        """
        return dict(settings or {}), channel
