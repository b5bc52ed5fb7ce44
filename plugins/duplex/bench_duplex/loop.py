"""The full-duplex loop: every tick the user, then the agent, produce one chunk; tool calls run within the tick.

Each side hears the other's chunk of the previous tick (as in tau2, so every direction has one tick of delay). A
call's results reach its caller on the next tick. The loop writes the transcript trajectory as it goes (a side's text
becomes a message when its speech run ends, when it calls tools and at the end), keeps the `Timeline` and stores it,
with one `duplex.speech` event per speech run, when the conversation ends however it ends.
"""

from __future__ import annotations

import asyncio
import wave
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import (
    INFRASTRUCTURE_FAILURES,
    AgentSession,
    AssistantMessage,
    ChannelSession,
    Conversation,
    ConversationSetup,
    Environment,
    Event,
    EventLog,
    Limits,
    Message,
    Requestor,
    TerminationReason,
    ToolCall,
    ToolMessage,
    UserMessage,
    UserSession,
    get_logger,
    stamp_history,
    utc_now,
)

from .audio import ULAW_TO_PCM, fit, silence
from .seams import Chunk, DuplexAgentSession, DuplexChannelSession, DuplexSettings, DuplexUserSession, Side, duplex_settings
from .timeline import TIMELINE_INFO, SpeechSegment, Timeline, TimelineEntry, ToolStamp
from .turntaking import TurnBasedAgent, TurnTakingUser

log = get_logger()
QUIET = ("wait", "keep_talking")


@attrs.define
class OpenSpeech:
    """One side's open speech: the text said since its last message and the current speech run."""

    side: Side
    text: str = ""
    first_tick: int | None = None
    run_start: int | None = None
    runs: list[tuple[int, int]] = attrs.field(factory=list)
    entries: list[TimelineEntry] = attrs.field(factory=list)


@attrs.define
class TranscriptWriter:
    """Writes a full-duplex conversation's trajectory and timeline from its chunks, tick by tick.

    The loop feeds it as it plays; an importer of another harness's tick records (bench-tau2) feeds it the same way,
    so a conversation reads the same however it reached the store. `take` notes a side's chunk (its speech run, its
    text, what the timeline keeps), `record_calls` a side's tool calls with their results, `finish` closes the rest.
    """

    messages: list[Message] = attrs.field(factory=list)
    tick_ms: int = 200
    clock: Callable[[], str | None] = utc_now
    """The timestamp each written message gets."""
    agent: OpenSpeech = attrs.field(factory=lambda: OpenSpeech("agent"))
    user: OpenSpeech = attrs.field(factory=lambda: OpenSpeech("user"))
    tools: list[ToolStamp] = attrs.field(factory=list)
    ticks: int = 0
    audio: dict[str, list[bytes]] | None = None
    """Both sides' audio, kept when the run keeps recordings."""

    def voice(self, side: Side) -> OpenSpeech:
        """The side's open speech."""
        return self.agent if side == "agent" else self.user

    def take(self, side: Side, tick: int, chunk: Chunk) -> None:
        """Note one side's chunk: its speech run, its text, what the timeline keeps."""
        voice = self.voice(side)
        if chunk.speech and voice.run_start is None:
            voice.run_start = tick
        elif not chunk.speech and voice.run_start is not None:
            voice.runs.append((voice.run_start, tick))
            voice.run_start = None
            self.flush(side, tick)
        if chunk.text and not chunk.stop:
            voice.first_tick = tick if voice.first_tick is None else voice.first_tick
            voice.text += chunk.text
        action = chunk.action if chunk.action not in QUIET else None
        info = {key: chunk.info[key] for key in TIMELINE_INFO if key in chunk.info} if chunk.info else {}
        if chunk.text or action or chunk.effects or chunk.truncated or chunk.vad or info:
            voice.entries.append(
                TimelineEntry(
                    tick=tick,
                    text=chunk.text,
                    utterance=chunk.utterance,
                    action=action,
                    effects=tuple(chunk.effects),
                    truncated=chunk.truncated,
                    vad=chunk.vad,
                    info=info,
                )
            )
        if self.audio is not None:
            self.audio[side].append(chunk.audio)

    def flush(self, side: Side, tick: int, calls: Sequence[ToolCall] = (), extra: str = "") -> Message | None:
        """The side's text since its last message (and its calls) as a message of the trajectory."""
        voice = self.voice(side)
        text = " ".join(part for part in (voice.text.strip(), extra.strip()) if part)
        if not text and not calls:
            return None
        start = voice.first_tick if voice.first_tick is not None else tick
        cls = AssistantMessage if side == "agent" else UserMessage
        requestor: Requestor = "assistant" if side == "agent" else "user"
        message = cls(
            content=text or None,
            tool_calls=[attrs.evolve(c, requestor=requestor) for c in calls] or None,
            turn_idx=len(self.messages),
            timestamp=self.clock(),
            raw_data={"tick": start, "end_tick": tick},
        )
        self.messages.append(message)
        voice.text, voice.first_tick = "", None
        return message

    def record_calls(self, side: Side, tick: int, calls: Sequence[ToolCall], results: Sequence[ToolMessage]) -> None:
        """A side's calls of this tick (with the text said before them), then their results, stamped with the tick."""
        self.flush(side, tick, calls)
        errors = {r.id: r.error for r in results}
        self.messages.extend(attrs.evolve(r, turn_idx=len(self.messages) + i) for i, r in enumerate(results))
        self.tools.extend(ToolStamp(tick=tick, requestor=side, id=c.id, name=c.name, error=errors.get(c.id, False)) for c in calls)

    def finish(self, tick: int) -> None:
        """Close open speech runs and write what is left of both sides' text, the earlier speaker first."""
        for voice in (self.agent, self.user):
            if voice.run_start is not None:
                voice.runs.append((voice.run_start, tick))
                voice.run_start = None
        order = sorted((self.agent, self.user), key=lambda v: v.first_tick if v.first_tick is not None else tick)
        for voice in order:
            self.flush(voice.side, tick)

    def timeline(self, conditions: dict[str, Any]) -> Timeline:
        """What the conversation was, tick by tick."""
        return Timeline(
            tick_ms=self.tick_ms,
            ticks=self.ticks,
            agent_speech=self.agent.runs,
            user_speech=self.user.runs,
            agent=self.agent.entries,
            user=self.user.entries,
            tools=self.tools,
            conditions=conditions,
        )


@attrs.define
class _Play:
    """What the loop holds besides the writer: the conversation, its environment, its settings."""

    convo: Conversation
    env: Environment
    settings: DuplexSettings
    writer: TranscriptWriter

    async def call(self, side: Side, tick: int, calls: Sequence[ToolCall]) -> list[ToolMessage]:
        """Run a side's calls now, in order, and write them with their results."""
        results = []
        for i, call in enumerate(calls):
            result = await self.env.execute_async(call, turn_idx=len(self.convo.messages) + 1 + i, timestamp=utc_now())
            self.convo.errors += result.error
            results.append(result)
        self.writer.record_calls(side, tick, calls, results)
        return results


async def play_full_duplex(
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
    """A run's full-duplex conversation: turn-based participants take turns on the line, duplex ones stream."""
    settings = duplex_settings(setup)
    assert settings is not None and user is not None
    # A channel written for turn-based conversations only carries the line as the base class does (text-paced speech).
    line = channel if isinstance(channel, DuplexChannelSession) else DuplexChannelSession()
    duplex_agent = agent if isinstance(agent, DuplexAgentSession) else TurnBasedAgent(agent, line, settings)
    duplex_user = user if isinstance(user, DuplexUserSession) else TurnTakingUser(user, line, settings)
    if isinstance(duplex_user, TurnTakingUser):
        duplex_user.attach(line)  # a simulator's own turn-taking session was made before the channel's
    return await run_duplex(
        env, duplex_agent, duplex_user, channel=line, settings=settings, events=events, limits=limits, audio_name=audio_name, history=setup.history
    )


async def run_duplex(
    env: Environment,
    agent: DuplexAgentSession,
    user: DuplexUserSession,
    *,
    channel: DuplexChannelSession,
    settings: DuplexSettings,
    events: EventLog,
    limits: Limits = Limits(),
    audio_name: str | None = None,
    history: Sequence[Message] = (),
) -> Conversation:
    """Play one full-duplex conversation to its end (never raises for participant failures).

    The history (the agent's unspoken greeting, as in tau2) opens the trajectory; nothing of it is said on the line.
    """
    convo = Conversation(messages=stamp_history(history))
    events.position = lambda: len(convo.messages)
    events.clock = utc_now
    writer = TranscriptWriter(messages=convo.messages, tick_ms=settings.tick_ms, audio={"agent": [], "user": []} if settings.keep_audio else None)
    play = _Play(convo, env, settings, writer)
    try:
        if limits.timeout_s is None:
            await _ticks(play, agent, user, channel, limits)
        else:
            async with asyncio.timeout(limits.timeout_s):
                await _ticks(play, agent, user, channel, limits)
    except TimeoutError:
        convo.termination = TerminationReason.TIMEOUT
    finally:
        writer.finish(writer.ticks)
        _store_timeline(play, channel, events, audio_name)
    return convo


async def _ticks(play: _Play, agent: DuplexAgentSession, user: DuplexUserSession, channel: DuplexChannelSession, limits: Limits) -> None:
    convo, tick_ms, rec = play.convo, play.settings.tick_ms, play.writer
    await channel.begin()
    quiet = Chunk(audio=silence(tick_ms))
    to_user, to_agent = quiet, quiet
    user_results: list[ToolMessage] = []
    agent_results: list[ToolMessage] = []
    for tick in range(play.settings.max_ticks + 1):
        rec.ticks = tick + 1
        said = await _step(convo, user, "user", tick, to_user, user_results)
        if said is None:
            return
        said = _on_line(channel, said, "user", tick, tick_ms)
        rec.take("user", tick, said)
        user_results = await play.call("user", tick, said.tool_calls) if said.tool_calls else []
        if said.stop:
            rec.flush("user", tick, extra=said.text)
            convo.termination = TerminationReason.USER_STOP
        heard_by_agent, to_agent = to_agent, said.without_calls()
        answer = await _step(convo, agent, "agent", tick, heard_by_agent, agent_results)
        if answer is None:
            return
        answer = _on_line(channel, answer, "agent", tick, tick_ms)
        rec.take("agent", tick, answer)
        agent_results = await play.call("agent", tick, answer.tool_calls) if answer.tool_calls else []
        to_user = answer.without_calls()
        convo.steps = tick + 1
        if answer.stop and convo.termination is None:
            convo.termination = TerminationReason.AGENT_STOP
        if convo.termination is None and convo.errors >= limits.max_errors:
            convo.termination = TerminationReason.TOO_MANY_ERRORS
        if convo.termination is not None:
            return
        if tick % 20 == 19:
            await asyncio.sleep(0)  # ticks whose engines answer at once never suspend: let other conversations run
    convo.termination = TerminationReason.MAX_STEPS


async def _step(
    convo: Conversation, session: DuplexAgentSession | DuplexUserSession, side: Side, tick: int, heard: Chunk, results: list[ToolMessage]
) -> Chunk | None:
    try:
        chunk = await session.step(tick, heard, results)
        if not isinstance(chunk, Chunk):
            raise TypeError(f"step() must return a Chunk, got {type(chunk).__name__}")
        return chunk
    except INFRASTRUCTURE_FAILURES:
        raise
    except Exception as exc:  # noqa: BLE001 - a failing participant ends only its own conversation
        convo.termination = TerminationReason.AGENT_ERROR if side == "agent" else TerminationReason.USER_ERROR
        convo.error = f"{side}: {type(exc).__name__}: {exc}"
        log.warning("conversation.participant_failed", who=side, error=convo.error, tick=tick)
        return None


def _on_line(channel: DuplexChannelSession, chunk: Chunk, side: Side, tick: int, tick_ms: int) -> Chunk:
    carried = channel.on_line(chunk, side, tick, tick_ms=tick_ms)
    return attrs.evolve(carried, audio=fit(carried.audio, tick_ms))


def _store_timeline(play: _Play, channel: DuplexChannelSession, events: EventLog, audio_name: str | None) -> None:
    writer, keep = play.writer, play.settings.keep_audio
    timeline = writer.timeline(_conditions(channel))
    if writer.audio is not None and audio_name and keep:
        timeline.audio_file = str(write_stereo(Path(keep) / f"{audio_name}.wav", writer.audio))
    at = len(play.convo.messages)
    events.emit(Event(kind=Timeline.kind, data=timeline.as_data()), source="duplex", message_index=at)
    for segment in speech_segments(timeline):
        events.emit(segment, source="duplex", message_index=at)


def _conditions(channel: DuplexChannelSession) -> dict[str, Any]:
    try:
        return dict(channel.conditions())
    except Exception as exc:  # noqa: BLE001 - the timeline is kept whatever the channel's report does
        return {"error": f"{type(exc).__name__}: {exc}"}


def speech_segments(timeline: Timeline) -> list[SpeechSegment]:
    """Every speech run of both sides with the text said in it, in order of start (bisected: a 20-minute call is fast)."""
    found = []
    for side, runs, entries in (("agent", timeline.agent_speech, timeline.agent), ("user", timeline.user_speech, timeline.user)):
        other = timeline.user_speech if side == "agent" else timeline.agent_speech
        entries = sorted(entries, key=lambda e: e.tick)
        ticks = [e.tick for e in entries]
        for start, end in runs:
            inside = entries[bisect_left(ticks, start) : bisect_left(ticks, end)]
            # A truncation from the run's first tick, a yield after it, up to its end tick, cut the run short.
            near = entries[bisect_left(ticks, start) : bisect_right(ticks, end)]
            found.append(
                SpeechSegment(
                    side=side,  # type: ignore[arg-type]
                    start_tick=start,
                    end_tick=end,
                    text="".join(e.text for e in inside).strip(),
                    backchannel=next((e.action for e in inside if e.action), None) == "backchannel",
                    interrupted=any(e.truncated or (e.action == "stop_talking" and e.tick > start) for e in near),
                    overlapped=any(s <= start < e for s, e in other),
                )
            )
    return sorted(found, key=lambda s: (s.start_tick, s.side != "agent"))


def write_stereo(path: Path, audio: dict[str, list[bytes]]) -> Path:
    """Both sides' mu-law audio as one 8 kHz stereo WAV: the user left, the agent right."""
    table = ULAW_TO_PCM
    left, right = b"".join(audio["user"]), b"".join(audio["agent"])
    frames = bytearray()
    for a, b in zip(left, right, strict=False):
        frames += table[a].to_bytes(2, "little", signed=True) + table[b].to_bytes(2, "little", signed=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    with wave.open(str(path), "wb") as out:
        out.setnchannels(2)
        out.setsampwidth(2)
        out.setframerate(8000)
        out.writeframes(bytes(frames))
    return path.resolve()
