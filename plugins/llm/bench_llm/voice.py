"""The model-driven voice user (voice-user): a customer on a full-duplex phone line, tau2's voice user in our words.

The kernel's `TurnTakingUser` does the turn-taking (tau2's counters and thresholds) and speaks through the channel;
this session adds what a model decides. Its replies come from the llm-user machinery, but the context is the call as
heard on the line (`bench_llm.line`): both sides' words, silence notes, the agent's unfinished sentence marked, roles
flipped, then a reminder. While the agent talks, every interruption-check interval, the model is asked (in parallel)
whether to cut in and whether to say a continuer; cutting in wins, only an exact "YES" is yes, and a failing call is
a no (recorded as a `voice_user.decision_error` event).
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
from bench_duplex import Chunk, DuplexChannelSession, TurnTakingUser, duplex_settings

from bench_kernel import (
    BudgetExceededError,
    ChatRequest,
    ConfigError,
    ConversationSetup,
    Message,
    ModelUnavailableError,
    ToolMessage,
    UserMessage,
    UserSession,
)

from .chat import chat_log, require_model, user_view
from .line import Item, Line, chat_messages, transcript
from .prompts import voice_user_prompt
from .texts import own_render, own_text
from .user import ModelUserSession

DECISION_ROLE = "user-decisions"
"""The optional model role of the yes/no decisions; the `user` role's model answers them when it is not configured."""
BEHAVIOUR = {
    "control": (False, False),
    "regular": (True, True),
    "control_audio": (False, False),
    "control_accents": (False, False),
    "control_behavior": (True, True),
    "control_audio_accents": (False, False),
    "control_audio_behavior": (True, True),
    "control_accents_behavior": (True, True),
}
"""tau2's speech complexity levels: (the persona interrupts, it uses the model's backchannel decisions)."""


@attrs.frozen(kw_only=True)
class DecisionError:
    """A decision call that failed and counted as NO."""

    kind: ClassVar[str] = "voice_user.decision_error"
    tick: int
    decision: str
    """interrupt or backchannel."""
    error: str


def behaviour(level: str) -> tuple[bool, bool]:
    """(interrupts, model backchannels) at a speech complexity level; an unknown level behaves by its name."""
    if level in BEHAVIOUR:
        return BEHAVIOUR[level]
    acts = level == "regular" or level.endswith("_behavior")
    return acts, acts


@attrs.define
class HeardUserSession(ModelUserSession):
    """llm-user's session answering from the call as heard on the line instead of turn-based messages."""

    line: Line = attrs.field(kw_only=True)

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        """Ask the user model with the call so far (what arrived is already on the line) and a closing reminder."""
        profile = self.setup.profile
        self.log.history = [
            *chat_messages(heard_items(self.setup, self.line), profile.messages),
            {"role": "system", "content": own_text(profile, "voice_reminder")},
        ]
        return self.message(await self.log.ask(self.setup.user_tools, "auto"))


def heard_items(setup: ConversationSetup, line: Line) -> list[Item]:
    """The call written out with the profile's silence note and incomplete-speech marker."""
    profile = setup.profile
    return line.items(lambda seconds: own_render(profile, "voice_silence", seconds=seconds).strip(), own_text(profile, "voice_incomplete").strip())


@attrs.define
class VoiceUserSession(TurnTakingUser):
    """A model-played customer on the line: tau2's turn-taking with the model's interrupt and backchannel decisions."""

    setup: ConversationSetup = attrs.field(kw_only=True)
    line: Line = attrs.field(kw_only=True)
    name: str = attrs.field(kw_only=True, default="voice-user")
    """The user simulator's registered name: its events' source."""
    model_backchannels: bool = attrs.field(kw_only=True, default=False)
    decisions: dict[str, Any] = attrs.field(factory=dict)
    """This tick's decisions (answer, time taken), kept in the chunk's info."""
    pending_backchannel: tuple[int, bool] | None = None
    """The backchannel answer computed alongside this tick's interrupt check."""
    backchannels: int = 0

    async def step(self, tick: int, heard: Chunk, results: Sequence[ToolMessage]) -> Chunk:
        """Note what was heard and the results that arrived, take the turn, note what was said."""
        self.line.hear(tick, heard)
        self.line.results(results)
        self.decisions = {}
        chunk = await super().step(tick, heard, results)
        self.line.said(tick, chunk)
        if self.decisions:
            chunk = attrs.evolve(chunk, info={**chunk.info, "decisions": self.decisions})
        return chunk

    async def wants_interrupt(self, tick: int) -> bool:
        """Ask whether to cut in, and meanwhile whether to say a continuer (kept for `wants_backchannel`)."""
        interrupt, backchannel = await asyncio.gather(self.decide("interrupt", tick), self.model_backchannel(tick))
        self.pending_backchannel = (tick, backchannel)
        return interrupt

    async def wants_backchannel(self, tick: int) -> bool:
        """The continuer decision of this tick (already asked alongside the interrupt check when the persona interrupts)."""
        if self.pending_backchannel is not None and self.pending_backchannel[0] == tick:
            return self.pending_backchannel[1]
        return await self.model_backchannel(tick)

    def backchannel_text(self, tick: int) -> str:
        """A continuer from the profile's list, picked from the conversation's seed (no global randomness)."""
        phrases = [p.strip() for p in own_text(self.setup.profile, "voice_backchannels").splitlines() if p.strip()]
        digest = hashlib.sha256(f"{self.setup.seed}/backchannel/{self.backchannels}".encode()).digest()
        self.backchannels += 1
        return phrases[int.from_bytes(digest[:8], "big") % len(phrases)] if phrases else "mm-hmm"

    async def model_backchannel(self, tick: int) -> bool:
        """The model's continuer decision, when this level uses it."""
        return await self.decide("backchannel", tick) if self.model_backchannels else False

    async def decide(self, decision: str, tick: int) -> bool:
        """One yes/no call on the call's last lines; anything but an exact YES is no, and so is a failed call."""
        text = transcript(heard_items(self.setup, self.line))
        prompt = own_render(self.setup.profile, f"voice_{decision}", transcript=text)
        models = self.setup.models
        role = DECISION_ROLE if models.has(DECISION_ROLE) else "user"
        started = time.perf_counter()
        try:
            response = await models.complete(role, ChatRequest(messages=[{"role": "user", "content": prompt}], seed=self.setup.seed))
            answer, error = (response.content or "").strip(), None
        except (BudgetExceededError, ModelUnavailableError):
            raise  # the run's own limits and outages are not a participant's decision
        except Exception as exc:  # noqa: BLE001 - a failed decision is a no, never the end of the call
            answer, error = "", f"{type(exc).__name__}: {exc}"
            self.setup.events.emit(DecisionError(tick=tick, decision=decision, error=error), source=self.name)
        elapsed_ms = round((time.perf_counter() - started) * 1000, 1)
        self.decisions[decision] = {"yes": answer == "YES", "ms": elapsed_ms, **({"error": error} if error else {})}
        return answer == "YES"


def start_session(name: str, setup: ConversationSetup) -> UserSession:
    """The session of voice-user (registered as `name`) on the conversation's line (refused outside full duplex)."""
    settings = duplex_settings(setup)
    if settings is None:
        raise ConfigError(
            f"user simulator {name!r} talks on a full-duplex line only: run with --mode full-duplex, or use llm-user for turn-based conversations"
        )
    require_model(setup.models, "user", f"user simulator {name!r}")
    turn = settings.turn_taking
    line = Line(
        tick_s=settings.tick_ms / 1000,
        integration_ticks=turn.ticks(turn.integration_s, settings.tick_ms),
        silence_ticks=turn.ticks(turn.silence_annotation_s, settings.tick_ms),
    )
    inner = HeardUserSession(setup, chat_log(setup, "user", voice_user_prompt(setup), user_view), line=line)
    interrupts, backchannels = behaviour(settings.speech_complexity)
    line_channel = DuplexChannelSession()  # the loop attaches the conversation's channel
    return VoiceUserSession(inner, line_channel, settings, interrupts=interrupts, setup=setup, line=line, model_backchannels=backchannels, name=name)
