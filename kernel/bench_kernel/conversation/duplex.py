"""Full duplex's seam types: what a duplex participant, a channel and the run configuration name.

In a full-duplex conversation user and agent stream audio at once: every tick of simulated time each side produces
one `Chunk` (a tick of mu-law 8 kHz audio, the text spoken in it, tool calls, its turn-taking action) and hears the
other side's chunk of the previous tick. The kernel holds only these types and the run's `DuplexSettings`; the tick
loop, the timeline, the turn-taking wrappers, speech and audio helpers and the realtime adapter base are bench-duplex's
(`bench_duplex`), which registers the loop the kernel plays full-duplex conversations with (docs/duplex.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from bench_kernel.schema.messages import ToolCall

TICK_MS = 200
MAX_SECONDS = 1200.0
"""tau2's default maximum length of a full-duplex conversation in simulated seconds."""

SPEECH_COMPLEXITIES = (
    "control",
    "regular",
    "control_audio",
    "control_accents",
    "control_behavior",
    "control_audio_accents",
    "control_audio_behavior",
    "control_accents_behavior",
)
"""tau2's speech complexity levels: clean, realistic, and the six ablations between them."""

Side = Literal["agent", "user"]


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
    """The user's turn-taking decision this tick (one of bench_duplex.ACTIONS); None for the agent."""
    effects: tuple[Mapping[str, Any], ...] = ()
    """Effects applied to this tick's audio, each a mapping with a `type` (see bench_duplex.EFFECT_TYPES)."""
    stop: bool = False
    """This side ends the conversation (the user's stop token; the agent's transfer)."""
    truncated: bool = False
    """The agent's speech was cut off this tick (the user barged in)."""
    vad: tuple[str, ...] = ()
    """Voice-activity events the agent's engine reported this tick (speech_started, speech_stopped, interrupted)."""
    info: Mapping[str, Any] = attrs.field(factory=dict)
    """Side-specific details (a provider's tick bookkeeping, the user's decisions); the timeline keeps bench_duplex.TIMELINE_INFO."""

    def without_calls(self) -> Chunk:
        """The chunk as the other side receives it (tool calls are private to their caller)."""
        return attrs.evolve(self, tool_calls=()) if self.tool_calls else self


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
class Utterance:
    """Speech rendered for one text: tick-sized chunks of mu-law audio, the text spread over them."""

    chunks: tuple[Chunk, ...]
    text: str
    """The text as rendered (with any inserted tic)."""
    effects: tuple[Mapping[str, Any], ...] = ()
