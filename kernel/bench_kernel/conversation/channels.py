"""Channels: the pluggable seam between user and agent that may transform what crosses it.

The default channel is the identity. A channel such as voice (text -> speech -> noise ->
recognition -> text) transforms each text message on its way; the trajectory keeps the text the
speaker meant, the receiving participant gets the text as heard, and the orchestrator records a
`ChannelTranscript` event whenever the two differ.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from bench_kernel.conversation.duplex import Chunk, Side, Utterance
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

    async def begin(self) -> None:
        """Full duplex: called once before tick 0 (a speech channel synthesises what its effects will insert)."""

    async def render(self, text: str, side: Side, *, tick_ms: int, index: int) -> Utterance | None:
        """Full duplex: the text spoken as tick-sized chunks; None (the base class) leaves it to the loop's text-paced tone.

        `index` counts the side's utterances from 0; a channel with effects draws its per-utterance randomness from
        the conversation's seed and this index. The chunks' audio may be in the channel's own format (e.g. 16 kHz
        PCM): what reaches the other side is what `on_line` makes of it, which must be one tick of mu-law 8 kHz.
        """
        return None

    def on_line(self, chunk: Chunk, side: Side, tick: int, *, tick_ms: int) -> Chunk:
        """Full duplex: one side's chunk as the line carries it this tick (noise, bursts, telephony, frame drops, ...).

        Called for every tick of both sides, silent ones included (their audio is empty); the result's audio is mu-law
        8 kHz (the loop pads or cuts it to one tick) and its `effects` name what was applied.
        """
        return chunk

    async def hear(self, audio: bytes, side: Side, text: str) -> str:
        """Full duplex: what a turn-based listener makes of one utterance's audio (mu-law 8 kHz); `text` is what was meant.

        The base class hears the text as meant; a speech channel recognises the audio.
        """
        return text

    def conditions(self) -> dict[str, Any]:
        """Full duplex: the conversation's speech conditions (complexity, persona, voice, noise), for the timeline."""
        return {}

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
