"""bench-duplex: full-duplex conversations, where user and agent stream audio at once in ticks of simulated time.

It registers the conversation loop bench plays `--mode full-duplex` with (the kernel holds only that seam, the mode's
name and its settings as a mapping) and holds what voice plugins build on: the types a duplex participant or channel
is written against (`Chunk`, `Side`, `Utterance`, `DuplexSettings`, the duplex sessions), the timeline the loop
stores, the turn-taking wrappers that put turn-based participants on the line, text-paced speech and word error rate,
telephone audio, and `RealtimeAdapter`, the base of speech-to-speech service adapters. `bench_duplex.testing` has the
fake realtime servers and the adapters' conformance suite.

Names are exported lazily, as bench_kernel's are: a text run that loads every installed plugin never loads the loop.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from bench_kernel import (
    AgentSession,
    ChannelSession,
    Conversation,
    ConversationLoop,
    ConversationSetup,
    Environment,
    EventLog,
    Limits,
    Task,
    UserSession,
    hookimpl,
)

if TYPE_CHECKING:
    from .audio import (
        SAMPLE_RATE,
        SILENCE_BYTE,
        Resampler,
        fit,
        pcm_bytes,
        pcm_samples,
        pcm_to_ulaw,
        silence,
        tick_bytes,
        ulaw_byte,
        ulaw_to_pcm,
    )
    from .loop import OpenSpeech, TranscriptWriter, play_full_duplex, run_duplex, speech_segments, write_stereo
    from .realtime import (
        LOCKSTEP_DONE,
        LOCKSTEP_TICK,
        PACINGS,
        PACKET_MS,
        Pacing,
        RealtimeAdapter,
        RealtimeConnectionError,
        RealtimeError,
        RealtimeSettings,
        TickOutput,
        ToolResult,
        VadSettings,
        b64decode,
        b64encode,
        chat_function,
    )
    from .seams import (
        MAX_SECONDS,
        SPEECH_CHANNEL,
        SPEECH_COMPLEXITIES,
        TICK_MS,
        Chunk,
        DuplexAgentSession,
        DuplexChannelSession,
        DuplexSettings,
        DuplexUserSession,
        Side,
        TurnTakingSettings,
        Utterance,
        duplex_settings,
    )
    from .speech import (
        CONTROL_TOKENS,
        NUMBER_WORDS,
        edit_distance,
        paced_utterance,
        speech_words,
        spread,
        utterance_id,
        word_error_rate,
    )
    from .timeline import ACTIONS, EFFECT_TYPES, TIMELINE_INFO, SpeechSegment, Timeline, TimelineEntry, ToolStamp
    from .turntaking import CHECK_INS, Counters, Speech, TurnBasedAgent, TurnTakingUser, split_stop

__all__ = [
    "ACTIONS",
    "CHECK_INS",
    "CONTROL_TOKENS",
    "EFFECT_TYPES",
    "LOCKSTEP_DONE",
    "LOCKSTEP_TICK",
    "MAX_SECONDS",
    "NUMBER_WORDS",
    "PACINGS",
    "PACKET_MS",
    "SAMPLE_RATE",
    "SILENCE_BYTE",
    "SPEECH_CHANNEL",
    "SPEECH_COMPLEXITIES",
    "TICK_MS",
    "TIMELINE_INFO",
    "Chunk",
    "Counters",
    "DuplexAgentSession",
    "DuplexChannelSession",
    "DuplexSettings",
    "DuplexUserSession",
    "FullDuplexLoop",
    "OpenSpeech",
    "Pacing",
    "RealtimeAdapter",
    "RealtimeConnectionError",
    "RealtimeError",
    "RealtimeSettings",
    "Resampler",
    "Side",
    "Speech",
    "SpeechSegment",
    "TickOutput",
    "Timeline",
    "TimelineEntry",
    "ToolResult",
    "ToolStamp",
    "TranscriptWriter",
    "TurnBasedAgent",
    "TurnTakingSettings",
    "TurnTakingUser",
    "Utterance",
    "VadSettings",
    "b64decode",
    "b64encode",
    "chat_function",
    "duplex_settings",
    "edit_distance",
    "fit",
    "paced_utterance",
    "pcm_bytes",
    "pcm_samples",
    "pcm_to_ulaw",
    "play_full_duplex",
    "register_conversation_loops",
    "run_duplex",
    "silence",
    "speech_segments",
    "speech_words",
    "split_stop",
    "spread",
    "tick_bytes",
    "ulaw_byte",
    "ulaw_to_pcm",
    "utterance_id",
    "word_error_rate",
    "write_stereo",
]

_EXPORTS_BY_MODULE: dict[str, tuple[str, ...]] = {
    "audio": (
        "SAMPLE_RATE",
        "SILENCE_BYTE",
        "Resampler",
        "fit",
        "pcm_bytes",
        "pcm_samples",
        "pcm_to_ulaw",
        "silence",
        "tick_bytes",
        "ulaw_byte",
        "ulaw_to_pcm",
    ),
    "loop": ("OpenSpeech", "TranscriptWriter", "play_full_duplex", "run_duplex", "speech_segments", "write_stereo"),
    "realtime": (
        "LOCKSTEP_DONE",
        "LOCKSTEP_TICK",
        "PACINGS",
        "PACKET_MS",
        "Pacing",
        "RealtimeAdapter",
        "RealtimeConnectionError",
        "RealtimeError",
        "RealtimeSettings",
        "TickOutput",
        "ToolResult",
        "VadSettings",
        "b64decode",
        "b64encode",
        "chat_function",
    ),
    "seams": (
        "MAX_SECONDS",
        "SPEECH_CHANNEL",
        "SPEECH_COMPLEXITIES",
        "TICK_MS",
        "Chunk",
        "DuplexAgentSession",
        "DuplexChannelSession",
        "DuplexSettings",
        "DuplexUserSession",
        "Side",
        "TurnTakingSettings",
        "Utterance",
        "duplex_settings",
    ),
    "speech": ("CONTROL_TOKENS", "NUMBER_WORDS", "edit_distance", "paced_utterance", "speech_words", "spread", "utterance_id", "word_error_rate"),
    "timeline": ("ACTIONS", "EFFECT_TYPES", "TIMELINE_INFO", "SpeechSegment", "Timeline", "TimelineEntry", "ToolStamp"),
    "turntaking": ("CHECK_INS", "Counters", "Speech", "TurnBasedAgent", "TurnTakingUser", "split_stop"),
}
_MODULE_OF = {name: module for module, names in _EXPORTS_BY_MODULE.items() for name in names}


@attrs.define(kw_only=True)
class FullDuplexLoop(ConversationLoop):
    """Plays `--mode full-duplex`: the tick loop, with turn-based participants on the line through turn-taking wrappers."""

    name: str = "full-duplex"
    description: str = "Both sides stream audio in ticks of simulated time (tau2's full duplex)."

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
        """One full-duplex conversation, played to its end."""
        from .loop import play_full_duplex  # imported on the first full-duplex conversation, never in text runs

        return await play_full_duplex(setup, env, agent, user, channel, events=events, limits=limits, audio_name=audio_name)

    def configure(
        self, settings: Mapping[str, Any] | None, channel: str, channels: Collection[str], tasks: Sequence[Task]
    ) -> tuple[dict[str, Any], str]:
        """The run's `DuplexSettings` completed and checked, and its channel (`voice` when loaded and none is named)."""
        from .seams import configure

        return configure(settings, channel, channels, tasks)


@hookimpl
def register_conversation_loops(register: Callable[[ConversationLoop], None]) -> None:
    """The full-duplex loop."""
    register(FullDuplexLoop())


# No module __dir__ listing the lazy names: pluggy reads every attribute dir() names when it registers the plugin.
def __getattr__(name: str) -> Any:
    """Import an exported name's module on first use and keep the name here."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
