"""How to evaluate an agent built with another framework: wrap its agent object in a bench Agent.

Copy `FrameworkAgent` into your own plugin and register it with a factory that builds your
framework's agent for one conversation::

    from bench_kernel import hookimpl
    from bench_llm.examples import FrameworkAgent

    @hookimpl
    def register_agents(register):
        register(FrameworkAgent(name="my-bot", factory=lambda setup: MyBot(setup.policy, setup.agent_tools)))

The framework object needs one method, `reply(messages)`, plain or async: it receives the
OpenAI chat messages it has not seen yet (the same `messages` as the HTTP agent's turn payload,
see bench_llm.adapter) and returns ``{"content": ..., "tool_calls": [{"id", "name", "arguments"}]}``.
It keeps its own memory between calls. `PlanQuoteBot` below is a tiny rule-based example.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from bench_kernel import Agent, AgentSession, AssistantMessage, ConversationSetup, Message

from .adapter import message_from_reply
from .agents import solo_stop
from .chat import agent_view, new_messages


@attrs.define
class FrameworkSession(AgentSession):
    """One conversation with a framework's agent object."""

    setup: ConversationSetup
    bot: Any
    turn: int = 0

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """Hand the bot what is new, and turn its reply into an assistant message."""
        self.turn += 1
        messages = agent_view(new_messages(self.setup, incoming, first=self.turn == 1))
        reply = self.bot.reply(messages)
        if inspect.isawaitable(reply):
            reply = await reply
        return message_from_reply(reply, self.turn)

    def is_stop(self, message: AssistantMessage) -> bool:
        """In the no-user mode the bot ends by replying ###STOP###."""
        return solo_stop(self.setup, message)

    async def close(self) -> None:
        """Let the bot release what it holds, when it can."""
        close = getattr(self.bot, "close", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result


@attrs.define(kw_only=True)
class FrameworkAgent(Agent):
    """Adapts a framework's agent object: `factory(setup)` builds one per conversation."""

    name: str
    description: str = "An agent object from another framework, adapted to bench."
    factory: Callable[[ConversationSetup], Any]

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A session around a fresh framework object."""
        return FrameworkSession(setup, self.factory(setup))


@attrs.define
class PlanQuoteBot:
    """A stand-in for a framework's agent: looks up the plans, then names the fastest one and its price."""

    memory: list[dict[str, Any]] = attrs.field(factory=list)

    def reply(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The next step: look the plans up once the customer has spoken, then answer from the tool result."""
        self.memory += messages
        last = self.memory[-1] if self.memory else {"role": "user"}
        if last["role"] == "tool":
            plans = json.loads(last["content"])
            fastest = max(plans, key=lambda p: float(p["speed_mbps"]))
            answer = f"Our fastest plan is {fastest['name']} at {fastest['monthly_price']} per month."
            return {"content": answer, "tool_calls": None}
        if not any(m["role"] == "tool" for m in self.memory):
            return {"content": None, "tool_calls": [{"id": f"plans-{len(self.memory)}", "name": "list_plans", "arguments": {}}]}
        return {"content": "Is there anything else I can help you with?", "tool_calls": None}
