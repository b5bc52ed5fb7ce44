"""Full duplex: user and agent stream audio at once, one chunk per tick of simulated time.

Every tick each side produces one `Chunk` (a tick of mu-law 8 kHz audio, the text spoken in it, tool calls, its
turn-taking action) and hears the other side's chunk of the previous tick. Tool calls run within the tick against
the same environment; their results reach the caller at the next tick. Simulated time is not waited for: a tick
takes as long as its engines do. The loop (`bench_kernel.conversation.duplex_loop`) keeps a `Timeline` of the
whole conversation, stored as the `duplex.timeline` event, and writes the transcript trajectory the evaluator scores.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

import attrs

from bench_kernel.conversation.messages import ToolCall
from bench_kernel.serialization import unstructure

SAMPLE_RATE = 8000
"""Audio between the two sides is G.711 mu-law, 8 kHz, mono: one byte per sample (telephony, as tau2's voice track)."""
SILENCE_BYTE = 0xFF
"""mu-law's zero amplitude."""
TICK_MS = 200
MAX_SECONDS = 1200.0
"""tau2's default maximum length of a full-duplex conversation in simulated seconds."""

SPEECH_COMPLEXITIES = ("control", "regular", "control_audio", "control_accents", "control_behavior", "control_audio_accents",
                       "control_audio_behavior", "control_accents_behavior")
"""tau2's speech complexity levels: clean, realistic, and the six ablations between them."""

Side = Literal["agent", "user"]
ACTIONS = ("keep_talking", "stop_talking", "generate_message", "wait", "backchannel")
"""The user's turn-taking decisions, one per tick (tau2's names)."""


def tick_bytes(tick_ms: int) -> int:
    """Bytes of mu-law audio in one tick."""
    return SAMPLE_RATE * tick_ms // 1000


def silence(tick_ms: int) -> bytes:
    """One tick of mu-law silence."""
    return bytes([SILENCE_BYTE]) * tick_bytes(tick_ms)


def fit(audio: bytes, tick_ms: int) -> bytes:
    """Exactly one tick of audio: cut, or padded with silence."""
    size = tick_bytes(tick_ms)
    if len(audio) >= size:
        return audio[:size]
    return audio + bytes([SILENCE_BYTE]) * (size - len(audio))


@attrs.frozen(kw_only=True)
class Chunk:
    """One side's tick: its audio, the text spoken in it, its tool calls and, for the user, its turn-taking action."""

    audio: bytes = b""
    """mu-law 8 kHz mono; the loop pads or cuts it to exactly one tick (empty = silence)."""
    text: str = ""
    """The slice of the utterance spoken in this tick (the agent's: its own output transcript, proportional to audio played)."""
    speech: bool = False
    """The tick carries speech (an out-of-turn noise or phrase does not make it speech)."""
    utterance: str | None = None
    """Id of the utterance the speech belongs to (shared by its chunks)."""
    tool_calls: tuple[ToolCall, ...] = ()
    action: str | None = None
    """The user's turn-taking decision this tick (one of ACTIONS); None for the agent."""
    effects: tuple[Mapping[str, Any], ...] = ()
    """Effects applied to this tick's audio, each a mapping with a `type` (see EFFECT_TYPES)."""
    stop: bool = False
    """This side ends the conversation (the user's stop token; the agent's transfer)."""
    truncated: bool = False
    """The agent's speech was cut off this tick (the user barged in)."""
    vad: tuple[str, ...] = ()
    """Voice-activity events the agent's engine reported this tick (speech_started, speech_stopped, interrupted)."""
    info: Mapping[str, Any] = attrs.field(factory=dict)
    """Side-specific details (a provider's tick bookkeeping, the user's decisions); the timeline keeps TIMELINE_INFO."""

    def without_calls(self) -> Chunk:
        """The chunk as the other side receives it (tool calls are private to their caller)."""
        return attrs.evolve(self, tool_calls=()) if self.tool_calls else self


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
class TurnTakingSettings:
    """The voice user's turn-taking thresholds, in seconds (tau2's defaults; converted to ticks with int(s / tick))."""

    wait_other_s: float = 1.0
    """Agent silence needed before the user replies."""
    wait_self_s: float = 5.0
    """Own silence needed before the user speaks again."""
    yield_interrupted_s: float = 1.0
    """The agent talks over the user this long: the user stops."""
    yield_interrupting_s: float = 5.0
    """The user barged in (or speaks a tool result): the agent must talk this long to stop the user."""
    interruption_check_s: float = 2.0
    """LLM interrupt and backchannel checks run at most every this many seconds."""
    integration_s: float = 0.5
    """A gap up to this long continues a speech segment when the history is written out."""
    silence_annotation_s: float = 4.0
    """Silence this long is noted in the user model's context ("both parties silent for ...")."""

    def ticks(self, seconds: float, tick_ms: int) -> int:
        """A threshold in ticks."""
        return int(seconds * 1000 / tick_ms)


@attrs.frozen(kw_only=True)
class DuplexSettings:
    """How a run's full-duplex conversations are played."""

    tick_ms: int = TICK_MS
    max_seconds: float = MAX_SECONDS
    speech_complexity: str = "control"
    """tau2's levels: control, regular and the six ablations (bench's default is control: clean audio)."""
    turn_taking: TurnTakingSettings = attrs.field(factory=TurnTakingSettings)
    keep_audio: str | None = None
    """Directory where each conversation's stereo recording is written (user left, agent right)."""

    @property
    def max_ticks(self) -> int:
        """The tick limit."""
        return int(self.max_seconds * 1000 / self.tick_ms)


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
            data[side] = [{k: v for k, v in entry.items() if k == "tick" or v not in (None, "", [], {}, False)}
                          for entry in data[side]]
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


@attrs.frozen(kw_only=True)
class Utterance:
    """Speech rendered for one text: tick-sized chunks of mu-law audio, the text spread over them."""

    chunks: tuple[Chunk, ...]
    text: str
    """The text as rendered (with any inserted tic)."""
    effects: tuple[Mapping[str, Any], ...] = ()
