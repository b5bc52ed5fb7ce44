"""Toolkits (a domain's tools as plain Python methods) and the environment that runs them."""

from __future__ import annotations

import enum
import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, TypeVar

import attrs

from bench_kernel.errors import ToolError
from bench_kernel.schema.events import EventLog
from bench_kernel.schema.messages import Requestor, ToolCall, ToolMessage
from bench_kernel.schema.results import Check
from bench_kernel.schema.tasks import EnvAssertion, EnvFunctionCall, Task
from bench_kernel.tools.state import State
from bench_kernel.tools.toolschema import ToolResultStyle, function_schema, tool_arguments, tool_result_text

F = TypeVar("F", bound=Callable[..., Any])


class ToolKind(str, enum.Enum):
    """What a tool does to the state; only WRITE tools mutate it."""

    READ = "read"
    WRITE = "write"
    THINK = "think"
    GENERIC = "generic"


def tool(kind: ToolKind = ToolKind.READ, *, offered: bool = True) -> Callable[[F], F]:
    """Mark a toolkit method as a tool the model may call (`offered=False`: a hidden tool, never in the tool list)."""

    def mark(func: F) -> F:
        func.__bench_tool__ = ToolKind(kind)  # type: ignore[attr-defined]
        func.__bench_offered__ = offered  # type: ignore[attr-defined]
        return func

    return mark


@attrs.frozen
class ToolSpec:
    """A tool's name, kind and OpenAI function schema (hidden tools: a plain one, never sent)."""

    name: str
    kind: ToolKind
    schema: dict[str, Any]
    offered: bool = True

    @property
    def mutates(self) -> bool:
        """True when calling the tool may change the state."""
        return self.kind is ToolKind.WRITE


@attrs.define(kw_only=True)
class ToolContext:
    """What a toolkit may know of the conversation it serves, beyond its state (all None outside a conversation)."""

    task: Task | None = None
    """The task being played (e.g. a per-task allowlist derived from its gold actions)."""
    profile: Any = None
    """The run's `Profile`: texts a tool shows the model (e.g. descriptions of tools discovered mid-conversation)."""
    models: Any = None
    """The conversation's model access, for tools that call models (bench-knowledge's `await embed(models, role, texts)`)."""


@attrs.define
class Toolkit:
    """A domain's tools over one state; subclasses add methods marked with `@tool`."""

    state: State
    context: ToolContext = attrs.field(factory=ToolContext, kw_only=True)
    """The conversation the toolkit serves (`build_environment` sets it)."""
    hidden_methods: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    @functools.cache
    def specs(cls) -> dict[str, ToolSpec]:
        """Every tool of this toolkit class, by name (computed once per class; getmembers sorts them)."""
        found = {}
        for name, member in inspect.getmembers(cls, inspect.isfunction):
            if hasattr(member, "__bench_tool__"):
                offered = getattr(member, "__bench_offered__", True)
                schema = function_schema(member, name=name) if offered else _hidden_schema(name, member)
                found[name] = ToolSpec(name, member.__bench_tool__, schema, offered)
        return found

    def schemas(self, include: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """OpenAI schemas of the offered tools, optionally restricted to the names in include."""
        specs = {name: spec for name, spec in self.specs().items() if spec.offered}
        names = list(specs) if include is None else [n for n in include if n in specs]
        return [specs[n].schema for n in names]

    def call_tool(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run one tool with the model's arguments (enums and attrs classes structured: `tool_arguments`)."""
        if name not in self.specs():
            raise ToolError(f"Tool '{name}' not found.")
        method = getattr(self, name)
        return method(**tool_arguments(method, arguments))

    def call_function(self, name: str, arguments: dict[str, Any]) -> Any:
        """Run any public method (initialization actions and assertions use non-tool methods)."""
        if name.startswith("_") or name in self.hidden_methods or not callable(getattr(self, name, None)):
            raise ToolError(f"Function '{name}' not found.")
        method = getattr(self, name)
        return method(**tool_arguments(method, arguments))


def _hidden_schema(name: str, method: Callable[..., Any]) -> dict[str, Any]:
    # Never sent: the model learns of a hidden tool from the domain's own texts, so its docstring is free-form.
    params = {p: {"type": "string"} for p in list(inspect.signature(method).parameters)[1:]}
    description = (inspect.getdoc(method) or name).split("\n")[0]
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {"type": "object", "properties": params}}}


def _nothing(*args: Any) -> None:
    """The default `sync` and `advance`: a world that needs no sync and never moves on by itself."""


@attrs.define
class Environment:
    """The agent's toolkit, the user's toolkit (dual control) and the rule that keeps them in sync."""

    agent_tools: Toolkit
    user_tools: Toolkit | None = None
    solo: bool = False
    sync: Callable[[Environment], None] = _nothing
    advance: Callable[[Environment, int, EventLog], None] = _nothing
    """Called after every conversation step with the number of messages so far (a world that moves on by itself)."""
    tool_calls: int = 0
    tool_results: ToolResultStyle = "json"
    """How tool return values become message texts (`DomainData.tool_results`): plain JSON, or tau2's rendering."""

    def toolkit_for(self, requestor: Requestor, name: str | None = None) -> Toolkit:
        """The toolkit a call from requestor goes to (solo agents reach the user's tools)."""
        if requestor == "user":
            if self.user_tools is None or self.solo:
                raise ToolError("This domain has no user tools.")
            return self.user_tools
        if self.solo and self.user_tools is not None and name in self.user_tools.specs():
            return self.user_tools
        return self.agent_tools

    def execute(self, call: ToolCall, *, sync: bool = True, turn_idx: int | None = None, timestamp: str | None = None) -> ToolMessage:
        """Run a tool call; any failure becomes an error tool message, never an exception."""
        self.tool_calls += 1
        try:
            result = self.toolkit_for(call.requestor, call.name).call_tool(call.name, dict(call.arguments))
            if inspect.isawaitable(result):
                getattr(result, "close", lambda: None)()  # a coroutine never awaited would warn at garbage collection
                # Gold replays and `bench check` have no event loop: only model-calling tools need `async def`.
                raise ToolError(
                    f"tool {call.name!r} is an async def, which runs only inside a conversation: write `def {call.name}` unless it calls models"
                )
            content, error = tool_result_text(result, self.tool_results), False
        except Exception as exc:  # noqa: BLE001 - a tool failure is information for the caller
            content, error = f"Error: {_error_text(exc)}", True
        return self._message(call, content, error, sync, turn_idx, timestamp)

    async def execute_async(self, call: ToolCall, *, sync: bool = True, turn_idx: int | None = None, timestamp: str | None = None) -> ToolMessage:
        """Run a tool call inside a conversation, awaiting tools written as coroutines (those that call models)."""
        self.tool_calls += 1
        try:
            result = self.toolkit_for(call.requestor, call.name).call_tool(call.name, dict(call.arguments))
            if inspect.isawaitable(result):
                result = await result
            content, error = tool_result_text(result, self.tool_results), False
        except Exception as exc:  # noqa: BLE001 - a tool failure is information for the caller
            content, error = f"Error: {_error_text(exc)}", True
        return self._message(call, content, error, sync, turn_idx, timestamp)

    def _message(self, call: ToolCall, content: str, error: bool, sync: bool, turn_idx: int | None, timestamp: str | None) -> ToolMessage:
        if sync and not error:
            self.sync(self)
        return ToolMessage(id=call.id, content=content, requestor=call.requestor, error=error, turn_idx=turn_idx, timestamp=timestamp)

    def tick(self, position: int, events: EventLog) -> None:
        """Let the world move on: `position` messages have been written so far."""
        self.advance(self, position, events)

    def run_function(self, call: EnvFunctionCall) -> Any:
        """Run an initialization action or assertion function, then sync."""
        toolkit = self.user_tools if call.env_type == "user" else self.agent_tools
        if toolkit is None:
            raise ToolError(f"no {call.env_type} toolkit for {call.func_name}")
        result = toolkit.call_function(call.func_name, dict(call.arguments))
        self.sync(self)
        return result

    def check_assertion(self, assertion: EnvAssertion) -> Check:
        """Run an env assertion and compare its boolean result with assert_value."""
        subject = f"{assertion.env_type}:{assertion.func_name}({assertion.arguments})"
        try:
            result = self.run_function(assertion)
        except Exception as exc:  # noqa: BLE001 - a broken assertion fails, with its reason
            return Check(subject=subject, met=False, detail=f"raised {_error_text(exc)}")
        if not isinstance(result, bool):
            return Check(subject=subject, met=False, detail=f"returned {result!r}, not a bool")
        if result == assertion.assert_value:
            return Check(subject=subject, met=True, detail=assertion.message or f"returned {result}")
        # A failure says what was expected and what came back, then what the task says it means.
        found = f"returned {result}, expected {assertion.assert_value}"
        return Check(subject=subject, met=False, detail=f"{found}: {assertion.message}" if assertion.message else found)

    def agent_schemas(self) -> list[dict[str, Any]]:
        """What the agent may call (agent tools, plus user tools in solo mode)."""
        schemas = self.agent_tools.schemas()
        if self.solo and self.user_tools is not None:
            schemas += self.user_tools.schemas()
        return schemas

    def user_schemas(self, include: Iterable[str] | None = None) -> list[dict[str, Any]] | None:
        """What the user may call, or None without user tools (or in solo mode)."""
        if self.user_tools is None or self.solo:
            return None
        return self.user_tools.schemas(include) or None

    def hashes(self) -> tuple[str, str | None]:
        """Content hashes of the agent state and the user state."""
        user = self.user_tools.state.content_hash() if self.user_tools is not None else None
        return self.agent_tools.state.content_hash(), user

    def mutates(self, call: ToolCall) -> bool:
        """True when the call names a known tool that may change state."""
        try:
            toolkit = self.toolkit_for(call.requestor, call.name)
        except ToolError:
            return False
        spec = toolkit.specs().get(call.name)
        return spec is not None and spec.mutates


def _error_text(exc: BaseException) -> str:
    if isinstance(exc, TypeError):
        return f"invalid arguments: {exc}"
    if isinstance(exc, KeyError) and exc.args:
        return str(exc.args[0])
    return str(exc)
