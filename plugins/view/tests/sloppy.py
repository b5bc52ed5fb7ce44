"""A scripted agent that makes a new user's mistake: it replays the gold actions, but its writes get one argument wrong."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from bench_kernel import Agent, AgentSession, AssistantMessage, ConversationSetup, Message, OracleAgent, ToolCall, hookimpl

READS = ("get_", "search_", "list_", "find_", "calculate", "think")
"""Tool name prefixes of reads: the sloppy agent calls them as the gold does."""


def wrong(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments with the last scalar one changed (a number plus one, a text with 'X' appended)."""
    keys = [k for k, v in arguments.items() if isinstance(v, int | float | str) and not isinstance(v, bool)]
    if not keys:
        return arguments
    key = keys[-1]
    value = arguments[key]
    return {**arguments, key: value + 1 if not isinstance(value, str) else value + "X"}


@attrs.define
class SloppySession(AgentSession):
    """The oracle's session with every write's last scalar argument changed."""

    inner: AgentSession

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """The oracle's next message, its writes made wrong."""
        message = await self.inner.respond(incoming)
        if not message.tool_calls:
            return message
        calls = [c if c.name.startswith(READS) else ToolCall(id=c.id, name=c.name, arguments=wrong(c.arguments)) for c in message.tool_calls]
        return attrs.evolve(message, tool_calls=calls)

    def is_stop(self, message: AssistantMessage) -> bool:
        """As the oracle."""
        return self.inner.is_stop(message)


@attrs.define(kw_only=True)
class SloppyAgent(Agent):
    """Replays the gold actions with each write's last scalar argument wrong."""

    name: str = "sloppy"
    description: str = "The oracle with every write's last scalar argument wrong (a test agent)."
    calls_models_itself: bool = False

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A fresh sloppy session."""
        return SloppySession(OracleAgent().start(setup))


class Plugin:
    """Registers the sloppy agent (for get_plugin_manager's `extra`)."""

    @hookimpl
    def register_agents(self, register: Callable[[Agent], None]) -> None:
        """The sloppy agent."""
        register(SloppyAgent())
