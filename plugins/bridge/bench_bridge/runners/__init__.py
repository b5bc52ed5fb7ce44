"""Runners: how one user message goes through a framework's own agent loop, and the registry that finds one for an agent.

A runner knows one framework. It recognises the framework's agent objects without importing the
framework (`matches`, by type and module), and plays one turn (`turn`): the user's message through the
framework's loop from its own history, returning the final text and the new history. Tools and model
calls need nothing from the runner: the factory built the agent with the bridge's tools and client.

A runner may also have `opening(messages) -> state`: the framework's history made from the conversation's opening
(the profile's greeting, or the task's history, as OpenAI chat messages), the state its first turn starts from.
Without it the framework's history starts empty.

Runner modules are imported lazily by path, so a framework that is not installed costs nothing; a
runner whose module or framework is absent is skipped. A third party adds a framework by appending a
`(module, class)` pair to `RUNNERS` from its own plugin's import.
"""

from __future__ import annotations

import contextvars
import importlib
import importlib.metadata
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from bench_kernel import ConfigError

if TYPE_CHECKING:
    from bench_bridge.context import FactoryContext


@runtime_checkable
class Runner(Protocol):
    """One framework's way of playing a turn."""

    name: str
    """"openai-agents", "langgraph", "pydantic-ai"."""
    distribution: str
    """The PyPI distribution whose version the run header shows."""

    def matches(self, agent: object) -> bool:
        """True for the framework's agent objects, judged by type and module (never by importing the framework)."""
        ...

    async def turn(self, agent: object, state: Any, message: str) -> tuple[str, Any]:
        """One user message through the framework's own loop from `state` (None on the first turn).

        Returns the final text and the new state (the framework's own history).
        """
        ...


RUNNERS: list[tuple[str, str] | Runner] = [
    ("bench_bridge.runners.agents_sdk", "AgentsSDKRunner"),
    ("bench_bridge.runners.langgraph", "LangGraphRunner"),
    ("bench_bridge.runners.pydantic_ai", "PydanticAIRunner"),
    ("bench_bridge.runners.remote", "RemoteRunner"),
]
"""Every runner, tried in order: (module, class) pairs imported when needed, or runner objects."""

_context: contextvars.ContextVar[FactoryContext | None] = contextvars.ContextVar("bench_bridge_context", default=None)


def current_context() -> FactoryContext | None:
    """The factory context of the conversation whose turn is running (runners may use its client, model or options)."""
    return _context.get()


def set_current_context(context: FactoryContext | None) -> contextvars.Token[FactoryContext | None]:
    """Make `context` the running turn's (the bridge sets it before it starts a turn's task)."""
    return _context.set(context)


def reset_current_context(token: contextvars.Token[FactoryContext | None]) -> None:
    """Undo `set_current_context`."""
    _context.reset(token)


def installed_runners() -> list[Runner]:
    """Every runner whose module imports (frameworks themselves are not imported)."""
    runners: list[Runner] = []
    for entry in RUNNERS:
        if not isinstance(entry, tuple):
            runners.append(entry)
            continue
        module_name, class_name = entry
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        runner = getattr(module, class_name, None)
        if runner is not None:
            runners.append(runner())
    return runners


def runner_for(agent: object) -> Runner:
    """The runner of the framework `agent` belongs to; ConfigError naming what is supported when there is none."""
    runners = installed_runners()
    for runner in runners:
        if runner.matches(agent):
            return runner
    kind = f"{type(agent).__module__}.{type(agent).__qualname__}"
    supported = ", ".join(f"{r.name} ({r.distribution} {framework_version(r) or 'not installed'})" for r in runners)
    raise ConfigError(f"the factory returned a {kind}, which no bridge runner plays; supported: {supported}")


def opening_state(runner: Runner, messages: list[dict[str, Any]]) -> Any:
    """The first turn's state: the runner's history made from the opening, or None (no opening, or no `opening`)."""
    opening = getattr(runner, "opening", None)
    return opening(messages) if messages and callable(opening) else None


def framework_version(runner: Runner) -> str | None:
    """The installed version of the runner's framework, None when it is not installed."""
    try:
        return importlib.metadata.version(runner.distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
