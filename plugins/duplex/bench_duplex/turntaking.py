"""Turn-based participants on a full-duplex line: a user that takes turns by tau2's rules, an agent that waits its turn.

`TurnTakingUser` gives any turn-based user simulator (the scripted user, an LLM user) a voice: every tick it decides
to keep talking, stop, reply, backchannel or wait with tau2's thresholds and counters, asks the simulator for its next
message when it replies, and speaks it through the channel chunk by chunk. Subclasses add the model's interrupt and
backchannel decisions (`wants_interrupt`, `wants_backchannel`). `TurnBasedAgent` lets a turn-based agent (the oracle,
a text agent) play in full duplex: it answers once the user has been silent for an end-of-turn pause, hearing the
user's utterance through the channel, and yields when the user talks over it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from bench_kernel import (
    STOP_TOKENS,
    AgentSession,
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    UserSession,
)

from .seams import Chunk, DuplexAgentSession, DuplexChannelSession, DuplexSettings, DuplexUserSession, Side
from .speech import paced_utterance

CHECK_INS = ("Hello? Are you still there?", "Hello? I'm still waiting.")
"""What a turn-based user says into an agent's silence, at most these two times in a row."""
_TOKENS = re.compile("|".join(re.escape(t) for t in STOP_TOKENS))


def split_stop(text: str) -> tuple[str, str]:
    """The spoken part of a text and its stop token ('' when none): tokens are not speech."""
    tokens = _TOKENS.findall(text)
    return _TOKENS.sub("", text).strip(), tokens[0] if tokens else ""


@attrs.define
class Speech:
    """What a side is saying: the chunks left of its current utterance."""

    side: Side
    channel: DuplexChannelSession
    settings: DuplexSettings
    queue: list[Chunk] = attrs.field(factory=list)
    said: int = 0
    """Utterances rendered so far (each draws its own effects)."""

    @property
    def talking(self) -> bool:
        """True while an utterance has chunks left."""
        return bool(self.queue)

    async def say(self, text: str, first_action: str | None = None) -> None:
        """Render a text and queue its chunks (the first carries the action that started it)."""
        if not text.strip():
            return
        tick_ms = self.settings.tick_ms
        utterance = await self.channel.render(text, self.side, tick_ms=tick_ms, index=self.said)
        if utterance is None:  # a channel without a speech engine: the text is said as a text-paced tone
            utterance = paced_utterance(text, self.side, tick_ms=tick_ms, index=self.said)
        self.said += 1
        chunks = list(utterance.chunks)
        if chunks and first_action is not None:
            chunks[0] = attrs.evolve(chunks[0], action=first_action)
        self.queue.extend(chunks)

    def next(self, action: str | None) -> Chunk:
        """This tick's chunk: the next of the utterance, or silence."""
        if self.queue:
            chunk = self.queue.pop(0)
            return chunk if chunk.action is not None or action is None else attrs.evolve(chunk, action=action)
        return Chunk(action=action)

    def drop(self) -> None:
        """Stop mid-utterance: the rest is never said."""
        self.queue.clear()


@attrs.define
class Counters:
    """tau2's per-tick bookkeeping of who spoke when (in ticks); at tick 0 both silences are 0 ticks long."""

    since_other: int = -1
    since_self: int = -1
    other_run: int = 0
    self_run: int = 0

    def update(self, other_speaks: bool, self_spoke: bool) -> None:
        """Advance by one tick."""
        self.since_other = 0 if other_speaks else self.since_other + 1
        self.other_run = self.other_run + 1 if other_speaks else 0
        self.since_self = 0 if self_spoke else self.since_self + 1
        self.self_run = self.self_run + 1 if self_spoke else 0


@attrs.define
class TurnTakingUser(DuplexUserSession):
    """A turn-based user simulator speaking on a full-duplex line."""

    inner: UserSession
    channel: DuplexChannelSession
    settings: DuplexSettings
    interrupts: bool = False
    """The persona barges in (an LLM decides when, every interruption-check interval)."""
    speech: Speech = attrs.field(init=False)
    counters: Counters = attrs.field(factory=Counters)
    heard: list[str] = attrs.field(factory=list)
    """The agent's words since the user last replied."""
    waiting: bool = False
    """Its tool calls are out: it waits for their results."""
    stop_token: str = ""
    delivering_results: bool = False
    backchanneling: bool = False
    last_speech: bool = False
    check_ins: int = 0

    def __attrs_post_init__(self) -> None:
        self.speech = Speech("user", self.channel, self.settings)

    def attach(self, channel: DuplexChannelSession) -> None:
        """Speak through the conversation's channel session (started after the user's own session)."""
        self.channel = channel
        self.speech.channel = channel

    def ticks(self, seconds: float) -> int:
        """A turn-taking threshold in ticks."""
        return self.settings.turn_taking.ticks(seconds, self.settings.tick_ms)

    async def step(self, tick: int, heard: Chunk, results: Sequence[ToolMessage]) -> Chunk:
        """Hear the agent's last tick, then keep talking, stop, reply, backchannel or wait."""
        self.counters.update(heard.speech, self.last_speech)
        if heard.text:
            self.heard.append(heard.text)
        if results:
            # Tool results are answered at once; the reply is spoken from the next tick (tau2 emits noise meanwhile).
            self.waiting = False
            calls = await self._reply(list(results), "generate_message")
            self.delivering_results = True
            self.last_speech = False
            return Chunk(action="wait", tool_calls=calls)
        if self.waiting:
            return self._emit("wait")
        if self.speech.talking:
            return self._emit(self._while_talking())
        if self.stop_token:
            return Chunk(text=self.stop_token, stop=True, action="generate_message")
        action, calls = await self._while_silent(tick, heard)
        return self._emit(action, calls)

    def _emit(self, action: str, calls: tuple[ToolCall, ...] = ()) -> Chunk:
        chunk = self.speech.next(action)
        self.last_speech = chunk.speech
        if not self.speech.talking:
            self.delivering_results = self.backchanneling = False
        return attrs.evolve(chunk, tool_calls=calls) if calls else chunk

    def _while_talking(self) -> str:
        if self.backchanneling or self.counters.other_run < 1:
            return "keep_talking"
        # tau2: a user who barged in (or reads out a tool result) holds on longer than one the agent talks over.
        barged_in = self.counters.self_run < self.counters.other_run
        turn = self.settings.turn_taking
        limit = turn.yield_interrupting_s if self.delivering_results or barged_in else turn.yield_interrupted_s
        if self.counters.other_run >= self.ticks(limit):
            self.speech.drop()
            return "stop_talking"
        return "keep_talking"

    async def _while_silent(self, tick: int, heard: Chunk) -> tuple[str, tuple[ToolCall, ...]]:
        turn = self.settings.turn_taking
        if heard.speech and tick % max(1, self.ticks(turn.interruption_check_s)) == 0:
            if self.interrupts and await self.wants_interrupt(tick):
                return "generate_message", await self._reply(self._agent_words(), "generate_message")
            if await self.wants_backchannel(tick):
                self.backchanneling = True
                await self.speech.say(self.backchannel_text(tick), "backchannel")
                return "backchannel", ()
        if self.counters.since_other > self.ticks(turn.wait_other_s) and self.counters.since_self > self.ticks(turn.wait_self_s):
            words = self._agent_words()
            if words or not self.speech.said:
                self.check_ins = 0
                return "generate_message", await self._reply(words, "generate_message")
            # The agent has said nothing since the user's last words (it may be busy with tools): check in, never
            # move on in the scenario unheard.
            check_in = self.check_in_text(self.check_ins)
            if check_in is None:
                return "wait", ()
            self.check_ins += 1
            await self.speech.say(check_in, "generate_message")
            return "generate_message", ()
        return "wait", ()

    def _agent_words(self) -> list[Message]:
        text = "".join(self.heard).strip()
        self.heard.clear()
        return [AssistantMessage(content=text)] if text else []

    async def _reply(self, incoming: list[Message], action: str) -> tuple[ToolCall, ...]:
        """Ask the simulator for its next message: its tool calls go out now, its words are queued."""
        message = await self.inner.respond(incoming)
        if not isinstance(message, UserMessage):
            raise TypeError(f"expected UserMessage, got {type(message).__name__}")
        if message.tool_calls:
            self.waiting = True
            return tuple(message.tool_calls)
        spoken, token = split_stop(message.content or "")
        await self.speech.say(spoken, action)
        self.stop_token = token
        if not spoken and not token:
            raise ValueError("empty message: no text and no tool call")
        return ()

    def check_in_text(self, made: int) -> str | None:
        """What to say into the agent's silence after `made` check-ins (None: keep waiting; the time limit ends it)."""
        return CHECK_INS[made] if made < len(CHECK_INS) else None

    async def wants_interrupt(self, tick: int) -> bool:
        """Whether to barge in now (the scripted user never does; an LLM user asks its model)."""
        return False

    async def wants_backchannel(self, tick: int) -> bool:
        """Whether to say a continuer now (the scripted user never does; an LLM user asks its model)."""
        return False

    def backchannel_text(self, tick: int) -> str:
        """The continuer to say."""
        return "uh-huh" if tick % 2 else "mm-hmm"

    async def close(self) -> None:
        """Close the turn-based simulator."""
        self.inner.termination = self.termination
        await self.inner.close()


@attrs.define
class TurnBasedAgent(DuplexAgentSession):
    """A turn-based agent on a full-duplex line: it answers after the user's end-of-turn pause and yields to barge-ins."""

    inner: AgentSession
    channel: DuplexChannelSession
    settings: DuplexSettings
    end_of_turn_s: float = 0.6
    """User silence that ends the user's turn (a voice-activity detector's silence window plus a margin)."""
    yield_after_s: float = 0.8
    """User speech over the agent's for this long makes the agent stop; shorter overlaps (a backchannel) are not a turn."""
    speech: Speech = attrs.field(init=False)
    audio: list[bytes] = attrs.field(factory=list)
    meant: list[str] = attrs.field(factory=list)
    silent: int = 0
    overlap: int = 0
    waiting: bool = False
    stopping: bool = False

    def __attrs_post_init__(self) -> None:
        self.speech = Speech("agent", self.channel, self.settings)

    def _ticks(self, seconds: float) -> int:
        return max(1, round(seconds * 1000 / self.settings.tick_ms))

    async def step(self, tick: int, heard: Chunk, results: Sequence[ToolMessage]) -> Chunk:
        """Listen; answer a finished user turn or tool results; speak the current answer."""
        truncated = self._listen(heard)
        if results:
            self.waiting = False
            return await self._act(list(results), truncated)
        if not self.waiting and not self.speech.talking and self.audio and self.silent >= self._ticks(self.end_of_turn_s):
            text = await self.channel.hear(b"".join(self.audio), "user", "".join(self.meant).strip())
            self.audio.clear()
            self.meant.clear()
            return await self._act([UserMessage(content=text)] if text.strip() else [], truncated)
        return self._out(truncated)

    def _listen(self, heard: Chunk) -> bool:
        if heard.speech:
            self.audio.append(heard.audio)
            self.meant.append(heard.text)
            self.silent = 0
            self.overlap = self.overlap + 1 if self.speech.talking else 0
            if self.speech.talking and self.overlap >= self._ticks(self.yield_after_s):
                self.speech.drop()
                return True
            return False
        if self.overlap and self.speech.talking:
            # Speech that began and ended under the agent's own without making it stop was a continuer, not a turn.
            del self.audio[-self.overlap :], self.meant[-self.overlap :]
        self.silent += 1
        self.overlap = 0
        return False

    async def _act(self, incoming: list[Message], truncated: bool) -> Chunk:
        if not incoming:
            return self._out(truncated)
        message = await self.inner.respond(incoming)
        if not isinstance(message, AssistantMessage):
            raise TypeError(f"expected AssistantMessage, got {type(message).__name__}")
        spoken, _ = split_stop(message.content or "")
        await self.speech.say(spoken)
        self.stopping = self.inner.is_stop(message)
        if message.tool_calls:
            self.waiting = True
            chunk = self._out(truncated)
            return attrs.evolve(chunk, tool_calls=tuple(message.tool_calls))
        return self._out(truncated)

    def _out(self, truncated: bool) -> Chunk:
        chunk = self.speech.next(None)
        stop = self.stopping and not self.speech.talking and not self.waiting
        if truncated or stop:
            chunk = attrs.evolve(chunk, truncated=truncated, stop=stop)
        return chunk

    def is_stop(self, message: AssistantMessage) -> bool:
        """A stop of the turn-based agent (solo agents only)."""
        return self.inner.is_stop(message)

    async def close(self) -> None:
        """Close the turn-based agent."""
        self.inner.termination = self.termination
        await self.inner.close()
