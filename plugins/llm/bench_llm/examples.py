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
see bench_llm.adapter) and returns ``{"content": ..., "tool_calls": [{"id", "name", "arguments"}]}``,
optionally with ``"usage"`` and ``"model"`` as an HTTP agent's reply may carry them.
It keeps its own memory between calls. `PlanQuoteBot` below is a tiny rule-based example.

The agent's code is part of the run's identity (`FrameworkAgent.fingerprint`): the sha256 of the source of the
package (or module) that defines the factory, plus any `source_modules` you name, and the version of the
`framework` distribution. Editing the bot or upgrading the framework gives a new run id, and resuming an old run
with changed code is refused.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import inspect
import json
import types
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import Agent, AgentSession, AssistantMessage, ConfigError, ConversationSetup, Message

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
    framework: str | None = None
    """The distribution of the framework the bot is built with (e.g. "openai-agents"): its version is fingerprinted."""
    source_modules: tuple[str, ...] = ()
    """Further modules or packages whose source decides the bot's behaviour, beyond the factory's own package."""

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A session around a fresh framework object."""
        return FrameworkSession(setup, self.factory(setup))

    def fingerprint(self, options: Mapping[str, Any]) -> dict[str, str]:
        """The framework's version, the factory's name and the sha256 of the source behind it."""
        found: dict[str, str] = {}
        if self.framework:
            try:
                found[self.framework] = importlib.metadata.version(self.framework)
            except importlib.metadata.PackageNotFoundError:
                raise ConfigError(f"agent {self.name!r}: its framework {self.framework!r} is not installed") from None
        factory = self.factory.func if isinstance(self.factory, functools.partial) else self.factory
        module = inspect.getmodule(factory)
        found["factory"] = f"{getattr(module, '__name__', '?')}:{getattr(factory, '__qualname__', type(factory).__name__)}"
        roots = [_package_of(module)] if module is not None else []
        roots += [importlib.import_module(name) for name in self.source_modules]
        found["sha256"] = source_hash(roots)
        return found


def _package_of(module: types.ModuleType) -> types.ModuleType:
    """The top-level package a module belongs to (the module itself when it is not in a package)."""
    top = module.__name__.partition(".")[0]
    return importlib.import_module(top) if top != module.__name__ else module


def source_hash(modules: Sequence[types.ModuleType]) -> str:
    """sha256 over the Python source files of modules and packages (each file's path within its package, then its
    bytes), in path order; a module without a source file counts by its name alone."""
    digest = hashlib.sha256()
    for name, path in sorted(set(_source_files(modules))):
        digest.update(f"{name}\0".encode())
        digest.update(path.read_bytes() if path is not None else b"")
        digest.update(b"\0")
    return digest.hexdigest()


def _source_files(modules: Sequence[types.ModuleType]) -> Iterator[tuple[str, Path | None]]:
    for module in modules:
        file = getattr(module, "__file__", None)
        if file is None or not file.endswith(".py"):
            yield module.__name__, None
        elif Path(file).name == "__init__.py":  # a package: every source file under it
            root = Path(file).parent
            for path in root.rglob("*.py"):
                yield f"{module.__name__}/{path.relative_to(root).as_posix()}", path
        else:
            yield module.__name__, Path(file)


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
