"""bench-bridge: agents from other frameworks (OpenAI Agents SDK, LangGraph, pydantic-ai) with no glue.

`bench run --plugin bridge --agent framework --agent-option factory=MODULE:FUNCTION`: the factory builds the
framework's agent from a context (model, endpoint, tools, instructions); the framework keeps its own
loop, its model calls go through bench's model access and its tool calls through bench's environment.
Only bench_kernel is imported here: the endpoint's aiohttp and each framework load when a run uses them.
"""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Agent, hookimpl

from .agent import FrameworkAgent
from .context import FactoryContext
from .runners.remote import RemoteAgent
from .tools import ToolFailed

__all__ = ["FactoryContext", "FrameworkAgent", "RemoteAgent", "ToolFailed", "register_agents"]


@hookimpl
def register_agents(register: Callable[[Agent], None]) -> None:
    """The `framework` agent."""
    register(FrameworkAgent())
