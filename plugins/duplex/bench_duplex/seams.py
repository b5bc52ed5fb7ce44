"""What full-duplex participants, channels and runs are written against: chunks, duplex sessions, the run's settings.

In a full-duplex conversation user and agent stream audio at once: every tick of simulated time each side produces
one `Chunk` (a tick of mu-law 8 kHz audio, the text spoken in it, tool calls, its turn-taking action) and hears the
other side's chunk of the previous tick. A run's `DuplexSettings` reach the kernel as a plain mapping
(`RunConfig.duplex`, part of the run's identity), which `FullDuplexLoop.configure` completes and checks before
anything is stored; participants read them back with `duplex_settings(setup)`.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any, Literal

import attrs

from bench_kernel import (
    AgentSession,
    ChannelSession,
    ConfigError,
    ConversationSetup,
    Task,
    ToolCall,
    ToolMessage,
    UserSession,
    structure,
    unstructure,
)

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

SPEECH_CHANNEL = "voice"
"""The channel a full-duplex run speaks through when its plugin is loaded and the run names none."""
OPTIONS = "--mode full-duplex settings (--tick-ms, --max-duration, --speech-complexity, or `duplex` in a run file)"

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
class Utterance:
    """Speech rendered for one text: tick-sized chunks of mu-law audio, the text spread over them."""

    chunks: tuple[Chunk, ...]
    text: str
    """The text as rendered (with any inserted tic)."""
    effects: tuple[Mapping[str, Any], ...] = ()


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
    """How a run's full-duplex conversations are played (`RunConfig.duplex` holds them as a mapping)."""

    tick_ms: int = attrs.field(default=TICK_MS, validator=[attrs.validators.ge(20), attrs.validators.le(2000)])
    max_seconds: float = attrs.field(default=MAX_SECONDS, validator=attrs.validators.ge(1))
    speech_complexity: str = attrs.field(default="control")
    """tau2's levels: control, regular and the six ablations (bench's default is control: clean audio)."""
    turn_taking: TurnTakingSettings = attrs.field(factory=TurnTakingSettings)
    keep_audio: str | None = None
    """Directory where each conversation's stereo recording is written (user left, agent right)."""

    @speech_complexity.validator
    def _known_level(self, attribute: attrs.Attribute[str], value: str) -> None:
        if value not in SPEECH_COMPLEXITIES:
            raise ValueError(f"speech complexity {value!r} is not one of tau2's levels ({', '.join(SPEECH_COMPLEXITIES)})")

    @property
    def max_ticks(self) -> int:
        """The tick limit."""
        return int(self.max_seconds * 1000 / self.tick_ms)


def duplex_settings(setup: ConversationSetup) -> DuplexSettings | None:
    """The conversation's full-duplex settings (None outside full duplex), from the mapping the run holds."""
    return None if setup.duplex is None else structure(dict(setup.duplex), DuplexSettings, source=OPTIONS)


def configure(settings: Mapping[str, Any] | None, channel: str, channels: Collection[str], tasks: Sequence[Task]) -> tuple[dict[str, Any], str]:
    """A full-duplex run's settings completed and checked, and its channel: `voice` when loaded and none is named."""
    duplex = structure(dict(settings or {}), DuplexSettings, source=OPTIONS)
    if channel == "identity" and SPEECH_CHANNEL in channels:
        channel = SPEECH_CHANNEL
    if duplex.speech_complexity != "control" and channel == "identity":
        raise ConfigError(
            f"--speech-complexity {duplex.speech_complexity} needs a speech channel: pip install 'bench-voice[engines]' and add --plugin voice"
        )
    with_history = [t.id for t in tasks if t.initial_state and t.initial_state.message_history]
    if with_history:
        raise ConfigError(
            f"{len(with_history)} tasks open with a message history (e.g. {with_history[0]!r}), which a "
            "full-duplex conversation cannot replay (as in tau2): leave them out with --task-id"
        )
    return unstructure(duplex), channel


class DuplexAgentSession(AgentSession):
    """An agent in a full-duplex conversation: one chunk per tick."""

    async def step(self, tick: int, heard: Chunk, results: Sequence[ToolMessage]) -> Chunk:
        """This tick's chunk, given the user's chunk of the previous tick and the results of the agent's last calls."""
        raise NotImplementedError


class DuplexUserSession(UserSession):
    """A simulated user in a full-duplex conversation: one chunk per tick."""

    async def step(self, tick: int, heard: Chunk, results: Sequence[ToolMessage]) -> Chunk:
        """This tick's chunk, given the agent's chunk of the previous tick and the results of the user's last calls."""
        raise NotImplementedError


class DuplexChannelSession(ChannelSession):
    """A channel session on a full-duplex line; the base class passes the line through and leaves speech to the loop.

    A channel whose sessions are not DuplexChannelSessions plays full duplex as this base class does.
    """

    async def begin(self) -> None:
        """Called once before tick 0 (a speech channel synthesises what its effects will insert)."""

    async def render(self, text: str, side: Side, *, tick_ms: int, index: int) -> Utterance | None:
        """The text spoken as tick-sized chunks; None (the base class) leaves it to the loop's text-paced tone.

        `index` counts the side's utterances from 0; a channel with effects draws its per-utterance randomness from
        the conversation's seed and this index. The chunks' audio may be in the channel's own format (e.g. 16 kHz
        PCM): what reaches the other side is what `on_line` makes of it, which must be one tick of mu-law 8 kHz.
        """
        return None

    def on_line(self, chunk: Chunk, side: Side, tick: int, *, tick_ms: int) -> Chunk:
        """One side's chunk as the line carries it this tick (noise, bursts, telephony, frame drops, ...).

        Called for every tick of both sides, silent ones included (their audio is empty); the result's audio is mu-law
        8 kHz (the loop pads or cuts it to one tick) and its `effects` name what was applied.
        """
        return chunk

    async def hear(self, audio: bytes, side: Side, text: str) -> str:
        """What a turn-based listener makes of one utterance's audio (mu-law 8 kHz); `text` is what was meant.

        The base class hears the text as meant; a speech channel recognises the audio.
        """
        return text

    def conditions(self) -> dict[str, Any]:
        """The conversation's speech conditions (complexity, persona, voice, noise), for the timeline."""
        return {}
