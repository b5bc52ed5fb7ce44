"""The user's factory (`--agent-option factory=MODULE:FUNCTION`) and the context it receives."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import ConfigError, ConversationSetup

AGENT = "framework"
"""The agent's registered name (`--agent framework`)."""
PROBE_BASE_URL = "http://127.0.0.1:9/v1"
"""Where a probe context's client points: the factory is called once before the run, and must not call a model then."""


@attrs.define(kw_only=True)
class FactoryContext:
    """What a factory receives to build one conversation's agent."""

    model: str
    """The agent role's model name (bench sends every call to the role's model, whatever name the framework uses)."""
    base_url: str
    """The bridge endpoint's OpenAI base URL (`http://127.0.0.1:PORT/v1`)."""
    api_key: str
    """This conversation's bearer token for the endpoint."""
    tools: list[Callable[..., Awaitable[str]]]
    """The conversation's tools as async functions with real signatures and docstrings."""
    tool_schemas: list[dict[str, Any]]
    """The same tools as the OpenAI tools array `llm-fc` sends under the run's profile, byte for byte (the profile's
    schemas, in its order; `done` last in the no-user mode): bind these to send the profile's tools."""
    instructions: str
    """The system prompt, rendered from the run's profile (policy, mode, `done` tool) as bench's agents get it."""
    mode: str
    """"default", "no-user" or "oracle-plan"."""
    ticket: str | None
    """The task's ticket in the no-user mode (it is also the first message), else None."""
    setup: ConversationSetup | None
    """The whole conversation set-up (None in the probe call made before the run starts)."""
    options: Mapping[str, Any] = attrs.field(factory=dict)
    """The agent options (`--agent-option KEY=VALUE`), for the factory's own settings."""
    tool_choice: str | None = None
    """The `tool_choice` `llm-fc` sends with those tools ("auto"; "required" in the no-user mode)."""
    history: list[dict[str, Any]] = attrs.field(factory=list)
    """The conversation's opening as chat messages (the profile's greeting, or the task's history): the runner starts
    the framework's own history with it."""
    mcp_url: str | None = None
    """Where the same tools are served over MCP for this conversation (with `api_key` as the bearer token), when the run
    serves them (bench_bridge.mcp_server); None otherwise."""
    probe: bool = False
    """True for the calls made before the run: the factory's check (no tools) and the profile check (probe.py)."""
    _invoke: Callable[[str, dict[str, Any]], Awaitable[str]] | None = None
    _client: Any = None

    async def call_tool(self, name: str, arguments: Mapping[str, Any]) -> str:
        """Run one of `tool_schemas` by its name with JSON arguments, through bench, as the tool functions do."""
        if self._invoke is None:
            raise ConfigError(f"agent {AGENT!r}: the factory's check has no tools to call")
        return await self._invoke(name, json.loads(json.dumps(dict(arguments), default=str)))

    @property
    def client(self) -> Any:
        """An `openai.AsyncOpenAI` bound to the endpoint with this conversation's key (made on first use; no retries of its own)."""
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self.api_key,
                max_retries=0,
                timeout=600.0,
                http_client=openai.DefaultAsyncHttpxClient(trust_env=False),
            )
        return self._client

    async def aclose(self) -> None:
        """Close the client if one was made."""
        if self._client is not None:
            await self._client.close()
            self._client = None


def probe_context(options: Mapping[str, Any]) -> FactoryContext:
    """The context of the call made before the run starts: no conversation, no tools, a client that reaches nothing."""
    return FactoryContext(
        model="probe",
        base_url=PROBE_BASE_URL,
        api_key="probe",
        tools=[],
        tool_schemas=[],
        instructions="",
        mode="default",
        ticket=None,
        setup=None,
        options=dict(options),
        probe=True,
    )


@attrs.frozen
class Factory:
    """A loaded factory: the function, its spec and its module's source hash."""

    spec: str
    function: Callable[[FactoryContext], Any]
    source_sha256: str


def factory_spec(options: Mapping[str, Any]) -> str:
    """The `factory` agent option, checked for its MODULE:FUNCTION shape."""
    spec = options.get("factory")
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(
            f"agent {AGENT!r} needs --agent-option factory=MODULE:FUNCTION (a function that builds your framework's agent from a context)"
        )
    module, _, name = spec.strip().rpartition(":")
    if not module or not name:
        raise ConfigError(f"agent {AGENT!r}: factory must be MODULE:FUNCTION (or FILE.py:FUNCTION), not {spec!r}")
    return spec.strip()


def load_factory(spec: str) -> Factory:
    """Import the factory's module (a dotted name importable from here or the working directory, or a .py file)."""
    module_name, _, name = spec.rpartition(":")
    module = _import(module_name, spec)
    target: Any = module
    for part in name.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ConfigError(f"agent {AGENT!r}: factory {spec!r}: module {module_name!r} has no {name!r}")
    if not callable(target):
        raise ConfigError(f"agent {AGENT!r}: factory {spec!r} is a {type(target).__name__}, not a function")
    return Factory(spec=spec, function=target, source_sha256=_source_hash(module))


def _import(module_name: str, spec: str) -> Any:
    try:
        if module_name.endswith(".py"):
            return _import_file(Path(module_name))
        if os.getcwd() not in sys.path and "" not in sys.path:
            # `bench` is a console script: its sys.path lacks the directory the user runs it from.
            sys.path.append(os.getcwd())
        return importlib.import_module(module_name)
    except ConfigError:
        raise
    except Exception as exc:
        raise ConfigError(f"agent {AGENT!r}: cannot import the factory {spec!r}: {type(exc).__name__}: {exc}") from exc


def _import_file(path: Path) -> Any:
    if not path.is_file():
        raise ConfigError(f"agent {AGENT!r}: no factory file {str(path)!r}")
    name = f"bench_bridge_factory_{hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]}"
    if name in sys.modules:
        return sys.modules[name]
    loader_spec = importlib.util.spec_from_file_location(name, path)
    assert loader_spec is not None and loader_spec.loader is not None
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    try:
        loader_spec.loader.exec_module(module)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def _source_hash(module: Any) -> str:
    """sha256 of the module's source file (what changes when the user edits their agent)."""
    path = getattr(module, "__file__", None)
    if path and Path(path).is_file():
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    try:
        return hashlib.sha256(inspect.getsource(module).encode()).hexdigest()
    except (OSError, TypeError):
        return "unknown"
