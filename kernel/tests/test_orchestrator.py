"""Tests of the conversation loop with scripted sessions on the toy domain."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, ClassVar

import attrs
import pytest
from toy_domain import ToyDomain

from bench_kernel import DomainOptions, build_environment
from bench_kernel.conversation.orchestrator import Conversation, Limits, initial_messages, run_conversation
from bench_kernel.conversation.participants import GREETING, AgentSession, UserSession
from bench_kernel.schema.events import EventLog
from bench_kernel.schema.messages import (
    AssistantMessage,
    Message,
    Mode,
    TerminationReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from bench_kernel.tools.environment import Environment

Reply = Any  # a message, an exception to raise, or an async callable producing the message


class Script:
    """Replies in order, then the fallback forever; records everything a session received."""

    def __init__(self, replies: Sequence[Reply], fallback: Reply | None = None) -> None:
        self.replies = list(replies)
        self.fallback = fallback
        self.received: list[list[Message]] = []

    async def next(self, incoming: Sequence[Message]) -> Any:
        self.received.append(list(incoming))
        if self.replies:
            reply = self.replies.pop(0)
        elif self.fallback is not None:
            reply = self.fallback
        else:
            raise AssertionError("script exhausted")
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return await reply(incoming)
        return reply


class ScriptedAgent(AgentSession):
    def __init__(self, *replies: Reply, fallback: Reply | None = None, stop_word: str | None = None) -> None:
        self.script = Script(replies, fallback)
        self.stop_word = stop_word

    @property
    def received(self) -> list[list[Message]]:
        return self.script.received

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        return await self.script.next(incoming)

    def is_stop(self, message: AssistantMessage) -> bool:
        return self.stop_word is not None and self.stop_word in (message.content or "")


class ScriptedUser(UserSession):
    def __init__(self, *replies: Reply, fallback: Reply | None = None) -> None:
        self.script = Script(replies, fallback)

    @property
    def received(self) -> list[list[Message]]:
        return self.script.received

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        return await self.script.next(incoming)


def says(text: str) -> AssistantMessage:
    return AssistantMessage(content=text)


def user_says(text: str) -> UserMessage:
    return UserMessage(content=text)


def agent_calls(*calls: tuple[str, dict[str, Any]], prefix: str = "a") -> AssistantMessage:
    return AssistantMessage(tool_calls=[ToolCall(id=f"{prefix}{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls)])


def user_calls(*calls: tuple[str, dict[str, Any]], prefix: str = "u") -> UserMessage:
    return UserMessage(tool_calls=[ToolCall(id=f"{prefix}{i}", name=n, arguments=a, requestor="user") for i, (n, a) in enumerate(calls)])


@pytest.fixture
def env() -> Environment:
    return build_environment(ToyDomain().load(DomainOptions()), None)


@pytest.fixture
def solo_env() -> Environment:
    return build_environment(ToyDomain().load(DomainOptions()), None, solo=True)


def converse(
    env: Environment,
    agent: AgentSession,
    user: UserSession | None,
    *,
    mode: Mode = Mode.DEFAULT,
    history: Sequence[Message] | None = None,
    **limits: Any,
) -> Conversation:
    opening = initial_messages([], mode) if history is None else list(history)
    return asyncio.run(run_conversation(env, agent, user, mode=mode, history=opening, limits=Limits(**limits)))


def unstamped(value: Any) -> Any:
    """Messages without the turn index, timestamp and latency the orchestrator stamps on them."""
    if isinstance(value, list | tuple):
        return [unstamped(v) for v in value]
    changes = {"turn_idx": None, "timestamp": None}
    if hasattr(value, "latency_ms"):
        changes["latency_ms"] = None
    return attrs.evolve(value, **changes)


def roles(convo: Conversation) -> list[str]:
    return [m.role for m in convo.messages]


# --------------------------------------------------------------------------- opening and stopping


def test_greeting_opens_and_the_user_speaks_first(env: Environment) -> None:
    agent = ScriptedAgent()
    user = ScriptedUser(user_says("Bye ###STOP###"))
    convo = converse(env, agent, user)
    assert unstamped(convo.messages[0]) == unstamped(AssistantMessage(content=GREETING, cost=0.0))
    assert unstamped(user.received) == unstamped([[convo.messages[0]]])
    assert agent.received == []
    assert convo.termination is TerminationReason.USER_STOP


def test_initial_messages() -> None:
    history = [UserMessage(content="earlier")]
    assert initial_messages([], Mode.DEFAULT) == [AssistantMessage(content=GREETING, cost=0.0)]
    assert initial_messages([], Mode.ORACLE_PLAN)[0].content == GREETING
    assert initial_messages([], Mode.NO_USER) == []
    assert initial_messages(history, Mode.DEFAULT) == history


@pytest.mark.parametrize("token", ["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"])
def test_user_stop_tokens_end_the_conversation_and_are_kept(env: Environment, token: str) -> None:
    agent = ScriptedAgent(says("Anything else?"))
    user = ScriptedUser(user_says("Hello"), user_says(f"No, thanks. {token}"))
    convo = converse(env, agent, user)
    assert convo.termination is TerminationReason.USER_STOP
    assert convo.messages[-1].content == f"No, thanks. {token}"
    assert roles(convo) == ["assistant", "user", "assistant", "user"]
    assert convo.error is None


def test_stop_token_beside_a_tool_call_is_not_a_stop(env: Environment) -> None:
    message = UserMessage(content="###STOP###", tool_calls=[ToolCall(id="u0", name="look_at_lamp", requestor="user")])
    user = ScriptedUser(message, user_says("done ###STOP###"))
    convo = converse(env, ScriptedAgent(), user)
    assert convo.termination is TerminationReason.USER_STOP
    assert roles(convo) == ["assistant", "user", "tool", "user"]
    assert user.received[1] == [convo.messages[2]]


def test_agent_stop(env: Environment) -> None:
    agent = ScriptedAgent(says("I am done. <END>"), stop_word="<END>")
    convo = converse(env, agent, ScriptedUser(user_says("Hi")))
    assert convo.termination is TerminationReason.AGENT_STOP
    assert convo.messages[-1].content == "I am done. <END>"


# --------------------------------------------------------------------------- tool calls


def test_tool_results_go_back_only_to_their_caller(env: Environment) -> None:
    agent = ScriptedAgent(agent_calls(("increment", {"name": "a", "by": 3})), says("Done, now switch your lamp."))
    user = ScriptedUser(user_says("Please add three."), user_calls(("switch_lamp", {"on": True})), user_says("Thanks ###STOP###"))
    convo = converse(env, agent, user)

    assert convo.termination is TerminationReason.USER_STOP
    assert roles(convo) == ["assistant", "user", "assistant", "tool", "assistant", "user", "tool", "user"]
    agent_result, user_result = convo.messages[3], convo.messages[6]
    assert (agent_result.id, agent_result.requestor, agent_result.error) == ("a0", "assistant", False)
    assert (user_result.id, user_result.requestor, user_result.content) == ("u0", "user", "ok")

    assert agent.received == [[convo.messages[1]], [agent_result]]
    assert user.received == [[convo.messages[0]], [convo.messages[4]], [user_result]]
    assert env.agent_tools.state.counters["a"] == {"value": 3}
    assert env.user_tools.state.device["lamp"] == {"on": True}


def test_several_calls_in_one_message_return_together_in_order(env: Environment) -> None:
    agent = ScriptedAgent(agent_calls(("get_counter", {"name": "b"}), ("increment", {"name": "a"}), ("nope", {})), says("All three done."))
    user = ScriptedUser(user_says("Go"), user_says("###STOP###"))
    convo = converse(env, agent, user)
    results = agent.received[1]
    assert [m.id for m in results] == ["a0", "a1", "a2"]
    assert [m.error for m in results] == [False, False, True]
    assert convo.errors == 1


def test_agent_calls_are_forced_to_the_agent_side(env: Environment) -> None:
    sneaky = AssistantMessage(tool_calls=[ToolCall(id="x", name="switch_lamp", arguments={"on": True}, requestor="user")])
    agent = ScriptedAgent(sneaky, says("done"))
    convo = converse(env, agent, ScriptedUser(user_says("Hi"), user_says("###STOP###")))
    assert convo.messages[2].tool_calls[0].requestor == "assistant"
    assert convo.messages[3].error is True
    assert env.user_tools.state.device["lamp"] == {"on": False}


def test_user_calls_are_forced_to_the_user_side(env: Environment) -> None:
    sneaky = UserMessage(tool_calls=[ToolCall(id="x", name="increment", arguments={"name": "a"})])
    user = ScriptedUser(sneaky, user_says("###STOP###"))
    convo = converse(env, ScriptedAgent(), user)
    assert convo.messages[1].tool_calls[0].requestor == "user"
    assert convo.messages[2].requestor == "user" and convo.messages[2].error is True
    assert env.agent_tools.state.counters["a"] == {"value": 0}


# --------------------------------------------------------------------------- limits


def test_max_steps_counts_every_hop(env: Environment) -> None:
    agent = ScriptedAgent(fallback=says("And?"))
    user = ScriptedUser(fallback=user_says("Go on."))
    convo = converse(env, agent, user, max_steps=5)
    assert convo.termination is TerminationReason.MAX_STEPS
    assert convo.steps == 5
    assert len(convo.messages) == 1 + 5


def test_pending_tool_call_runs_before_the_step_limit(env: Environment) -> None:
    agent = ScriptedAgent(agent_calls(("increment", {"name": "a"})), fallback=says("unreachable"))
    user = ScriptedUser(user_says("Add one."), fallback=user_says("more"))
    convo = converse(env, agent, user, max_steps=2)
    assert convo.termination is TerminationReason.MAX_STEPS
    assert isinstance(convo.messages[-1], ToolMessage) and convo.messages[-1].error is False
    assert convo.steps == 3
    assert env.agent_tools.state.counters["a"] == {"value": 1}
    assert len(agent.received) == 1, "the agent does not get the result once the limit hit"


def test_max_errors_counts_errors_cumulatively_not_in_a_row(env: Environment) -> None:
    bad, good = agent_calls(("nope", {})), agent_calls(("get_counter", {"name": "a"}))
    agent = ScriptedAgent(bad, good, bad, good, bad, good, fallback=says("unreachable"))
    user = ScriptedUser(user_says("Hi"), fallback=user_says("more"))
    convo = converse(env, agent, user, max_errors=3, max_steps=100)
    assert convo.termination is TerminationReason.TOO_MANY_ERRORS
    assert convo.errors == 3
    assert [m.error for m in convo.messages if isinstance(m, ToolMessage)] == [True, False, True, False, True]


def test_user_tool_errors_count_too(env: Environment) -> None:
    agent = ScriptedAgent(agent_calls(("nope", {})), fallback=says("ok"))
    user = ScriptedUser(user_calls(("no_device_tool", {})), fallback=user_says("more"))
    convo = converse(env, agent, user, max_errors=2)
    assert convo.termination is TerminationReason.TOO_MANY_ERRORS
    assert [(m.requestor, m.error) for m in convo.messages if isinstance(m, ToolMessage)] == [("user", True), ("assistant", True)]


def test_errors_in_one_message_each_count(env: Environment) -> None:
    agent = ScriptedAgent(agent_calls(("nope", {}), ("nope", {}), ("nope", {})), fallback=says("ok"))
    convo = converse(env, agent, ScriptedUser(user_says("Hi"), fallback=user_says("more")), max_errors=3)
    assert convo.termination is TerminationReason.TOO_MANY_ERRORS
    assert convo.errors == 3
    assert convo.steps == 3


def test_timeout_keeps_the_partial_trajectory(env: Environment) -> None:
    async def stall(incoming: Sequence[Message]) -> AssistantMessage:
        await asyncio.sleep(30)
        return says("too late")

    agent = ScriptedAgent(agent_calls(("increment", {"name": "a"})), stall)
    user = ScriptedUser(user_says("Add one."))
    convo = converse(env, agent, user, timeout_s=0.05)
    assert convo.termination is TerminationReason.TIMEOUT
    assert roles(convo) == ["assistant", "user", "assistant", "tool"]
    assert convo.messages[1].content == "Add one."


# --------------------------------------------------------------------------- participant failures


def test_agent_raising_is_an_agent_error_with_its_text(env: Environment) -> None:
    agent = ScriptedAgent(RuntimeError("model backend down"))
    convo = converse(env, agent, ScriptedUser(user_says("Hi")))
    assert convo.termination is TerminationReason.AGENT_ERROR
    assert convo.error == "agent: RuntimeError: model backend down"
    assert roles(convo) == ["assistant", "user"]


def test_user_raising_is_a_user_error(env: Environment) -> None:
    user = ScriptedUser(user_says("Hi"), ValueError("bad json"))
    convo = converse(env, ScriptedAgent(says("Hello")), user)
    assert convo.termination is TerminationReason.USER_ERROR
    assert convo.error == "user: ValueError: bad json"
    assert roles(convo) == ["assistant", "user", "assistant"]


@pytest.mark.parametrize("empty", [AssistantMessage(), AssistantMessage(content="  \n"), AssistantMessage(content="", tool_calls=[])])
def test_empty_agent_message_is_an_agent_error(env: Environment, empty: AssistantMessage) -> None:
    convo = converse(env, ScriptedAgent(empty), ScriptedUser(user_says("Hi")))
    assert convo.termination is TerminationReason.AGENT_ERROR
    assert "empty message" in (convo.error or "")
    assert len(convo.messages) == 2, "the empty message is not stored"


def test_empty_user_message_is_a_user_error(env: Environment) -> None:
    convo = converse(env, ScriptedAgent(), ScriptedUser(UserMessage(content=" ")))
    assert convo.termination is TerminationReason.USER_ERROR
    assert "empty message" in (convo.error or "")


def test_agent_returning_the_wrong_kind_is_an_agent_error(env: Environment) -> None:
    convo = converse(env, ScriptedAgent(user_says("I am not an assistant message")), ScriptedUser(user_says("Hi")))
    assert convo.termination is TerminationReason.AGENT_ERROR
    assert "expected AssistantMessage, got UserMessage" in (convo.error or "")


# --------------------------------------------------------------------------- no-user mode


def test_no_user_agent_opens_with_nothing_and_acts_on_both_sides(solo_env: Environment) -> None:
    agent = ScriptedAgent(agent_calls(("increment", {"name": "a"}), ("switch_lamp", {"on": True})), says("###STOP###"), stop_word="###STOP###")
    convo = converse(solo_env, agent, None, mode=Mode.NO_USER)
    assert agent.received[0] == []
    assert convo.termination is TerminationReason.AGENT_STOP
    assert roles(convo) == ["assistant", "tool", "tool", "assistant"]
    assert [m.error for m in convo.messages if isinstance(m, ToolMessage)] == [False, False]
    assert solo_env.user_tools.state.device["lamp"] == {"on": True}


def test_no_user_text_that_is_not_a_stop_is_an_agent_error(solo_env: Environment) -> None:
    agent = ScriptedAgent(says("Could you tell me more?"), stop_word="###STOP###")
    convo = converse(solo_env, agent, None, mode=Mode.NO_USER)
    assert convo.termination is TerminationReason.AGENT_ERROR
    assert "no-user" in (convo.error or "")
    assert convo.messages[-1].content == "Could you tell me more?"


def test_default_mode_without_a_user_is_an_agent_error(env: Environment) -> None:
    convo = converse(env, ScriptedAgent(says("hello?")), None, history=[UserMessage(content="Hi")])
    assert convo.termination is TerminationReason.AGENT_ERROR
    assert "has none" in (convo.error or "")


# --------------------------------------------------------------------------- resuming a message history


def test_history_ending_with_agent_text_goes_to_the_user(env: Environment) -> None:
    history = [UserMessage(content="Hi"), AssistantMessage(content="What can I do?")]
    user = ScriptedUser(user_says("###STOP###"))
    agent = ScriptedAgent()
    convo = converse(env, agent, user, history=history)
    assert unstamped(user.received) == unstamped([[history[1]]])
    assert agent.received == []
    assert unstamped(convo.messages[:2]) == unstamped(history)


def test_history_ending_with_user_text_goes_to_the_agent(env: Environment) -> None:
    history = [AssistantMessage(content="Hello"), UserMessage(content="Add one to a.")]
    agent = ScriptedAgent(says("Sure."))
    convo = converse(env, agent, ScriptedUser(user_says("###STOP###")), history=history)
    assert unstamped(agent.received[0]) == unstamped([history[1]])
    assert convo.termination is TerminationReason.USER_STOP


def test_history_ending_with_a_pending_agent_call_runs_it_first(env: Environment) -> None:
    history = [UserMessage(content="Add one."), agent_calls(("increment", {"name": "a"}), prefix="h")]
    agent = ScriptedAgent(says("Done."))
    user = ScriptedUser(user_says("###STOP###"))
    convo = converse(env, agent, user, history=history)
    result = convo.messages[2]
    assert isinstance(result, ToolMessage) and result.id == "h0" and result.error is False
    assert unstamped(agent.received[0]) == unstamped([result])
    assert env.agent_tools.state.counters["a"] == {"value": 1}


def test_history_ending_with_a_pending_user_call_returns_to_the_user(env: Environment) -> None:
    history = [AssistantMessage(content="Switch it on."), user_calls(("switch_lamp", {"on": True}), prefix="h")]
    user = ScriptedUser(user_says("###STOP###"))
    agent = ScriptedAgent()
    converse(env, agent, user, history=history)
    assert [(m.id, m.requestor) for m in user.received[0]] == [("h0", "user")]
    assert agent.received == []


def test_history_ending_with_agent_tool_results_goes_to_the_agent(env: Environment) -> None:
    history = [
        UserMessage(content="Read both."),
        agent_calls(("get_counter", {"name": "a"}), ("get_counter", {"name": "b"}), prefix="h"),
        ToolMessage(id="h0", content='{"value": "0"}'),
        ToolMessage(id="h1", content='{"value": "41"}'),
    ]
    agent = ScriptedAgent(says("a is 0 and b is 41"))
    converse(env, agent, ScriptedUser(user_says("###STOP###")), history=history)
    assert unstamped(agent.received[0]) == unstamped(history[2:])


def test_history_ending_with_user_tool_results_goes_to_the_user(env: Environment) -> None:
    history = [
        AssistantMessage(content="Look at the lamp."),
        user_calls(("look_at_lamp", {}), prefix="h"),
        ToolMessage(id="h0", content="off", requestor="user"),
    ]
    user = ScriptedUser(user_says("It is off. ###STOP###"))
    agent = ScriptedAgent()
    converse(env, agent, user, history=history)
    assert unstamped(user.received[0]) == unstamped([history[2]])
    assert agent.received == []


def test_history_ending_with_a_user_stop_is_already_over(env: Environment) -> None:
    history = [AssistantMessage(content="Done."), UserMessage(content="Thanks ###STOP###")]
    agent = ScriptedAgent(says("unreachable"))
    convo = converse(env, agent, ScriptedUser(), history=history)
    assert convo.termination is TerminationReason.USER_STOP
    assert agent.received == []
    assert unstamped(convo.messages) == unstamped(history)


def test_history_is_not_mutated(env: Environment) -> None:
    history = (UserMessage(content="Hi"),)
    converse(env, ScriptedAgent(says("Hello")), ScriptedUser(user_says("###STOP###")), history=history)
    assert history == (UserMessage(content="Hi"),)


# --------------------------------------------------------------------------- the world moves on


@attrs.frozen(kw_only=True)
class BookingConfirmed:
    """A typed event a world that moves on by itself records (as bench-services records goal status changes)."""

    kind: ClassVar[str] = "toy.booking"
    booking: str


def test_environment_ticks_after_every_step_and_its_events_belong_to_the_next_message(env: Environment) -> None:
    seen: list[int] = []

    def advance(environment: Environment, position: int, events: EventLog) -> None:
        seen.append(position)
        if position == 3:
            events.emit(BookingConfirmed(booking="b1"), source="toy")

    env.advance = advance
    agent = ScriptedAgent(says("One moment."), says("Done."))
    user = ScriptedUser(user_says("Book it"), user_says("Is it confirmed?"), user_says("Thanks ###STOP###"))
    log = EventLog()
    opening = initial_messages([], Mode.DEFAULT)
    convo = asyncio.run(run_conversation(env, agent, user, mode=Mode.DEFAULT, history=opening, events=log))
    assert seen == [2, 3, 4, 5, 6]  # greeting, then user, agent, user, agent, user
    [(event, change)] = log.typed(BookingConfirmed)
    assert change.booking == "b1" and event.message_index == 3 and event.source == "toy"
    assert convo.messages[2].content == "One moment." and convo.messages[3].content == "Is it confirmed?"


def test_the_scripted_users_opening_line_leaves_out_the_stop_tokens_its_scenario_mentions() -> None:
    from bench_kernel.builtin.participants import opening_line

    scenario = "You want a new card. When the agent has ordered it, say ###STOP###; if refused, ###TRANSFER###."
    assert opening_line(scenario) == "You want a new card. When the agent has ordered it, say ; if refused, ."
