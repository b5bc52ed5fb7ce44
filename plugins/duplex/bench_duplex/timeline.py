"""The timeline of a full-duplex conversation: what each side did tick by tick, as the loop stores it.

The loop (`bench_duplex.loop`) keeps a `Timeline` of the whole conversation, stored as the data of the
`duplex.timeline` event, and one `duplex.speech` event (`SpeechSegment`) per run of speech; metrics, importers and
the viewer read them back with `bench_kernel.structure(event.data, Timeline)`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import attrs

from bench_kernel import unstructure

from .seams import TICK_MS, Side

ACTIONS = ("keep_talking", "stop_talking", "generate_message", "wait", "backchannel")
"""The user's turn-taking decisions, one per tick (tau2's names)."""

TIMELINE_INFO = ("decisions", "interruption_ms")
"""The keys of `Chunk.info` the timeline keeps: a voice user's interrupt/backchannel decisions with their timings, where a
realtime agent was cut off. Other keys (per-tick bookkeeping) stay out of the stored timeline."""

EFFECT_TYPES = {
    "burst": "a noise burst starts (file, snr_db)",
    "speech_insert": "a vocal tic or a phrase not meant for the agent (kind: vocal_tic|non_directed, in_turn, text, duration_ms)",
    "muffling": "the utterance is muffled for a segment (start_ms, duration_ms, cutoff_hz)",
    "frame_drop": "audio lost on the line (ms)",
}
"""The effect types the timeline knows; a channel may record others (metrics ignore unknown types)."""


@attrs.frozen(kw_only=True)
class TimelineEntry:
    """What one side did in one tick, as the timeline keeps it (only ticks where something happened)."""

    tick: int
    text: str = ""
    utterance: str | None = None
    action: str | None = None
    effects: tuple[Mapping[str, Any], ...] = ()
    truncated: bool = False
    vad: tuple[str, ...] = ()
    info: dict[str, Any] = attrs.field(factory=dict)
    """The chunk's info under TIMELINE_INFO keys."""


@attrs.frozen(kw_only=True)
class ToolStamp:
    """A tool call made in a tick, and its result."""

    tick: int
    requestor: Side
    id: str
    name: str
    error: bool = False


@attrs.define(kw_only=True)
class Timeline:
    """A full-duplex conversation tick by tick, compactly: speech runs, text slices, actions, effects, tool calls.

    Stored as the data of one `duplex.timeline` event. Speech runs are [start, end) tick ranges of ticks whose chunk
    had `speech`; `entries` hold only ticks where a side said something, decided something other than wait /
    keep_talking, had an effect applied, was truncated or had voice-activity events.
    """

    kind: ClassVar[str] = "duplex.timeline"
    version: int = 1
    tick_ms: int = TICK_MS
    ticks: int = 0
    """Ticks played (tick 0 included)."""
    agent_speech: list[tuple[int, int]] = attrs.field(factory=list)
    user_speech: list[tuple[int, int]] = attrs.field(factory=list)
    agent: list[TimelineEntry] = attrs.field(factory=list)
    user: list[TimelineEntry] = attrs.field(factory=list)
    tools: list[ToolStamp] = attrs.field(factory=list)
    conditions: dict[str, Any] = attrs.field(factory=dict)
    """The conversation's speech conditions (complexity, persona, voice, noise files, seed), as the channel set them."""
    audio_file: str | None = None
    """The stereo recording, when the run keeps audio."""

    def speaking(self, side: Side, tick: int) -> bool:
        """True when the side's chunk at this tick had speech."""
        runs = self.agent_speech if side == "agent" else self.user_speech
        return any(start <= tick < end for start, end in runs)

    def seconds(self) -> float:
        """The conversation's simulated length."""
        return self.ticks * self.tick_ms / 1000

    def as_data(self) -> dict[str, Any]:
        """The timeline as stored: entries without their empty fields (a long conversation has thousands)."""
        data = unstructure(self)
        for side in ("agent", "user"):
            data[side] = [{k: v for k, v in entry.items() if k == "tick" or v not in (None, "", [], {}, False)} for entry in data[side]]
        return data


@attrs.frozen(kw_only=True)
class SpeechSegment:
    """A run of speech by one side (a convenience event for reports and the viewer: `duplex.speech`)."""

    kind: ClassVar[str] = "duplex.speech"
    side: Side
    start_tick: int
    end_tick: int
    """Exclusive."""
    text: str
    backchannel: bool = False
    interrupted: bool = False
    """The segment was cut off by the other side (the user stopped talking; the agent was truncated)."""
    overlapped: bool = False
    """The other side was speaking when it started."""
