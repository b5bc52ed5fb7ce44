"""The conversation loop: agent, user and environment take turns until someone stops or a limit hits."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Sequence
from typing import Any, Literal

import attrs

from bench_kernel.conversation.channels import ChannelSession
from bench_kernel.conversation.participants import GREETING, AgentSession, UserSession
from bench_kernel.errors import INFRASTRUCTURE_FAILURES
from bench_kernel.logs import get_logger
from bench_kernel.schema.events import ChannelTranscript, EventLog
from bench_kernel.schema.messages import AssistantMessage, Message, Mode, ParticipantMessage, TerminationReason, ToolMessage, UserMessage
from bench_kernel.serialization import utc_now
from bench_kernel.tools.environment import Environment

Role = Literal["agent", "user", "env"]
log = get_logger()


@attrs.frozen(kw_only=True)
class Limits:
    """When a conversation is cut short."""

    max_steps: int = 200
    max_errors: int = 10
    timeout_s: float | None = None


@attrs.define
class Conversation:
    """A conversation's mutable progress; the trajectory survives a timeout or a crash."""

    messages: list[Message] = attrs.field(factory=list)
    steps: int = 0
    errors: int = 0
    termination: TerminationReason | None = None
    error: str | None = None


@attrs.define
class _Turn:
    to: Role
    caller: Role
    incoming: list[Message]
    pending: ParticipantMessage | None = None


@attrs.frozen
class _Parties:
    env: Environment
    agent: AgentSession
    user: UserSession | None
    channel: ChannelSession | None
    events: EventLog
    mode: Mode


async def run_conversation(
    env: Environment,
    agent: AgentSession,
    user: UserSession | None,
    *,
    mode: Mode,
    history: Sequence[Message] = (),
    limits: Limits = Limits(),
    channel: ChannelSession | None = None,
    events: EventLog | None = None,
) -> Conversation:
    """Run one conversation to its end and return it (never raises for participant failures; docs/plugins.md)."""
    convo = Conversation(messages=stamp_history(history))
    log = events if events is not None else EventLog()
    log.position = lambda: len(convo.messages)
    log.clock = utc_now
    parties = _Parties(env, agent, user, channel, log, mode)
    try:
        if limits.timeout_s is None:
            await _loop(convo, parties, limits)
        else:
            async with asyncio.timeout(limits.timeout_s):
                await _loop(convo, parties, limits)
    except TimeoutError:
        convo.termination = TerminationReason.TIMEOUT
    return convo


def stamp_history(history: Sequence[Message]) -> list[Message]:
    """The opening messages with their turn indices (and a timestamp where they have none)."""
    return [_stamped(m, i) for i, m in enumerate(history)]


def _stamped(message: Message, index: int, **changes: Any) -> Any:
    if message.turn_idx == index and message.timestamp is not None and not changes:
        return message
    return _copy_with(message, turn_idx=index, timestamp=message.timestamp or utc_now(), **changes)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _copy_with(message: Any, **changes: Any) -> Any:
    """attrs.evolve for messages, without re-running __init__ (this is the hot path: every message of every run)."""
    cls = type(message)
    copy = object.__new__(cls)
    for name in _FIELDS.get(cls) or _FIELDS.setdefault(cls, tuple(f.name for f in attrs.fields(cls))):
        object.__setattr__(copy, name, changes[name] if name in changes else getattr(message, name))
    return copy


def initial_messages(history: Sequence[Message], mode: Mode, greeting: str = GREETING) -> list[Message]:
    """The conversation's opening: the task's history, or the agent's fixed greeting (the profile's)."""
    if history or mode is Mode.NO_USER:
        return list(history)
    return [AssistantMessage(content=greeting, cost=0.0)]


def first_turn(convo: Conversation) -> _Turn:
    """Who speaks first: the agent when there is no history, else whoever the history says."""
    last = convo.messages[-1] if convo.messages else None
    if isinstance(last, ToolMessage):
        results = list(itertools.takewhile(lambda m: isinstance(m, ToolMessage), reversed(convo.messages)))[::-1]
        return _Turn("user" if last.requestor == "user" else "agent", "env", results)
    if isinstance(last, AssistantMessage):
        return _Turn("env", "agent", [], last) if last.tool_calls else _Turn("user", "agent", [last])
    if isinstance(last, UserMessage):
        return _Turn("env", "user", [], last) if last.tool_calls else _Turn("agent", "user", [last])
    return _Turn("agent", "env", [])


async def _loop(convo: Conversation, parties: _Parties, limits: Limits) -> None:
    turn = first_turn(convo)
    convo.termination = _stopped_already(convo.messages, parties.agent, parties.user)
    while convo.termination is None:
        if turn.to == "env":
            turn = await _environment_turn(convo, parties.env, turn)
        elif turn.to == "agent":
            turn = await _agent_turn(convo, parties, turn)
        else:
            turn = await _user_turn(convo, parties, turn)
        convo.steps += 1
        parties.env.tick(len(convo.messages), parties.events)
        if convo.termination is None and turn.to != "env":
            _check_limits(convo, limits)


def _stopped_already(history: Sequence[Message], agent: AgentSession, user: UserSession | None) -> TerminationReason | None:
    # As in tau2: a history that already ends with a stop is a finished conversation.
    last = history[-1] if history else None
    if isinstance(last, UserMessage) and user is not None and user.is_stop(last):
        return TerminationReason.USER_STOP
    if isinstance(last, AssistantMessage) and agent.is_stop(last):
        return TerminationReason.AGENT_STOP
    return None


async def _environment_turn(convo: Conversation, env: Environment, turn: _Turn) -> _Turn:
    assert turn.pending is not None and turn.pending.tool_calls
    start, now = len(convo.messages), utc_now()
    results = [await env.execute_async(call, turn_idx=start + i, timestamp=now) for i, call in enumerate(turn.pending.tool_calls)]
    convo.errors += sum(r.error for r in results)
    convo.messages.extend(results)
    return _Turn(turn.caller, "env", list(results))


async def _agent_turn(convo: Conversation, parties: _Parties, turn: _Turn) -> _Turn:
    agent, mode = parties.agent, parties.mode
    started = time.perf_counter()
    try:
        message = _checked(await agent.respond(turn.incoming), AssistantMessage)
    except INFRASTRUCTURE_FAILURES:
        raise
    except Exception as exc:  # noqa: BLE001 - a failing agent ends only its own conversation
        return _fail(convo, TerminationReason.AGENT_ERROR, "agent", exc)
    message = _written(convo, message, "assistant", started)
    if agent.is_stop(message):
        convo.termination = TerminationReason.AGENT_STOP
    elif message.tool_calls:
        return _Turn("env", "agent", [], message)
    elif mode is Mode.NO_USER:
        convo.termination = TerminationReason.AGENT_ERROR
        convo.error = "agent sent text in the no-user mode instead of a tool call or a stop"
    if parties.channel is not None:
        message = _heard(parties.events, "to_user", message, await parties.channel.to_user(message), len(convo.messages) - 1)
    return _Turn("user", "agent", [message])


async def _user_turn(convo: Conversation, parties: _Parties, turn: _Turn) -> _Turn:
    user = parties.user
    if user is None:
        convo.termination = TerminationReason.AGENT_ERROR
        convo.error = "the agent addressed a user, but this conversation has none"
        return turn
    started = time.perf_counter()
    try:
        message = _checked(await user.respond(turn.incoming), UserMessage)
    except INFRASTRUCTURE_FAILURES:
        raise
    except Exception as exc:  # noqa: BLE001 - a failing simulator ends only its own conversation
        return _fail(convo, TerminationReason.USER_ERROR, "user", exc)
    message = _written(convo, message, "user", started)
    if user.is_stop(message):
        convo.termination = TerminationReason.USER_STOP
    elif message.tool_calls:
        return _Turn("env", "user", [], message)
    if parties.channel is not None:
        message = _heard(parties.events, "to_agent", message, await parties.channel.to_agent(message), len(convo.messages) - 1)
    return _Turn("agent", "user", [message])


def _written(convo: Conversation, message: Any, requestor: Literal["assistant", "user"], started: float) -> Any:
    """Fix the tool calls' requestor, stamp the message and append it to the trajectory."""
    changes: dict[str, Any] = {"latency_ms": int((time.perf_counter() - started) * 1000)}
    calls = message.tool_calls
    if calls and any(c.requestor != requestor for c in calls):
        changes["tool_calls"] = [attrs.evolve(c, requestor=requestor) for c in calls]
    message = _stamped(message, len(convo.messages), **changes)
    convo.messages.append(message)
    return message


def _heard(events: EventLog, direction: Literal["to_agent", "to_user"], meant: ParticipantMessage, heard: Any, index: int) -> Any:
    """What the channel delivered, its transcript recorded when that differs from what was meant."""
    if heard is not meant and heard.content != meant.content:
        events.emit(ChannelTranscript(direction=direction, meant=meant.content, heard=heard.content), source="channel", message_index=index)
    return heard


def _checked(message: object, kind: type) -> ParticipantMessage:
    if not isinstance(message, kind):
        raise TypeError(f"expected {kind.__name__}, got {type(message).__name__}")
    assert isinstance(message, AssistantMessage | UserMessage)
    if not message.tool_calls and not message.has_text():
        raise ValueError("empty message: no text and no tool call")
    return message


def _fail(convo: Conversation, reason: TerminationReason, who: str, exc: BaseException) -> _Turn:
    convo.termination = reason
    convo.error = f"{who}: {type(exc).__name__}: {exc}"
    log.warning("conversation.participant_failed", who=who, error=convo.error)
    return _Turn("env", "env", [])


def _check_limits(convo: Conversation, limits: Limits) -> None:
    if convo.steps >= limits.max_steps:
        convo.termination = TerminationReason.MAX_STEPS
    elif convo.errors >= limits.max_errors:
        convo.termination = TerminationReason.TOO_MANY_ERRORS
