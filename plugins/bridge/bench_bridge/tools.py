"""The conversation's tools as async Python functions, and the exchange that hands their calls to bench.

A framework runs its own tool loop: its model proposes calls (through the bridge's endpoint, which tells
`ToolExchange.proposed`), then it awaits the tool functions. The first invocation of a model turn hands
every call that turn proposed to bench as one assistant turn (ids as the model gave them); bench's
environment executes them, and the results, delivered at the agent's next `respond`, resolve the
awaiting invocations. Invocations are matched to proposals by name and arguments, in order; one that
nobody proposed becomes its own assistant turn.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import keyword
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, Union

import attrs

from bench_kernel import ToolCall, ToolMessage


class ToolFailed(Exception):
    """Raised by a tool function (with the agent option tool_errors=raise) when bench's tool refused the call."""


# --------------------------------------------------------------------------- signatures from JSON schemas

_SCALARS: dict[str, Any] = {"string": str, "integer": int, "number": float, "boolean": bool, "null": type(None)}


def annotation(schema: Any) -> Any:
    """The Python annotation a JSON schema stands for: scalars, enums as Literal, lists, dicts, unions."""
    if not isinstance(schema, Mapping):
        return Any
    if "enum" in schema and schema["enum"] and all(isinstance(v, str | int | bool) for v in schema["enum"]):
        return Literal[tuple(schema["enum"])]
    options = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(options, list) and options:
        return _union([annotation(option) for option in options])
    kind = schema.get("type")
    if isinstance(kind, list):
        return _union([annotation({**schema, "type": k}) for k in kind])
    if kind == "array":
        return list[annotation(schema.get("items"))]  # type: ignore[misc]
    if kind == "object":
        return dict[str, Any]
    return _SCALARS.get(kind, Any) if isinstance(kind, str) else Any


def _union(types: list[Any]) -> Any:
    unique = list(dict.fromkeys(types))
    return unique[0] if len(unique) == 1 else Union[tuple(unique)]  # noqa: UP007 - built at run time


def python_name(name: str) -> str:
    """A parameter name Python accepts for a JSON property name (`from` -> `from_`, `page-size` -> `page_size`)."""
    cleaned = re.sub(r"\W", "_", name) or "_"
    if cleaned[0].isdigit():
        cleaned = "_" + cleaned
    return cleaned + "_" if keyword.iskeyword(cleaned) else cleaned


@attrs.frozen
class ToolSpec:
    """A tool's function shape: its Python signature and docstring, and the JSON names behind the parameter names."""

    name: str
    signature: inspect.Signature
    doc: str
    json_names: Mapping[str, str]
    """Python parameter name -> JSON property name."""
    optional: frozenset[str]
    schema: Mapping[str, Any]


def tool_spec(schema: Mapping[str, Any]) -> ToolSpec:
    """The signature (required parameters first, optional ones defaulting to None) and docstring of an OpenAI tool schema."""
    function = schema["function"]
    parameters = function.get("parameters") or {}
    properties: Mapping[str, Any] = parameters.get("properties") or {}
    required = [p for p in properties if p in set(parameters.get("required") or [])]
    optional = [p for p in properties if p not in required]
    names = {prop: python_name(prop) for prop in properties}
    params = [inspect.Parameter(names[p], inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation(properties[p])) for p in required]
    params += [
        inspect.Parameter(names[p], inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None, annotation=annotation(properties[p]) | None)
        for p in optional
    ]
    doc = function.get("description") or function["name"]
    described = [(names[p], properties[p].get("description")) for p in properties if isinstance(properties[p], Mapping)]
    if any(text for _, text in described):
        doc += "\n\nArgs:\n" + "\n".join(f"    {name}: {text or ''}".rstrip() for name, text in described)
    return ToolSpec(
        name=function["name"],
        signature=inspect.Signature(params, return_annotation=str),
        doc=doc,
        json_names={python: prop for prop, python in names.items()},
        optional=frozenset(names[p] for p in optional),
        schema=schema,
    )


def tool_function(spec: ToolSpec, invoke: Callable[[str, dict[str, Any]], Awaitable[str]]) -> Callable[..., Awaitable[str]]:
    """An async function with the tool's name, signature, annotations and docstring, calling `invoke(name, arguments)`."""

    async def call_tool(*args: Any, **kwargs: Any) -> str:
        bound = spec.signature.bind(*args, **kwargs)
        # An optional parameter left at None is left out, so bench's tool applies its own default.
        arguments = {spec.json_names[k]: v for k, v in bound.arguments.items() if not (k in spec.optional and v is None)}
        return await invoke(spec.name, plain(arguments))

    call_tool.__name__ = call_tool.__qualname__ = python_name(spec.name)
    call_tool.__doc__ = spec.doc
    call_tool.__signature__ = spec.signature  # type: ignore[attr-defined]
    call_tool.__annotations__ = {p.name: p.annotation for p in spec.signature.parameters.values()} | {"return": str}
    call_tool.bench_schema = dict(spec.schema)  # type: ignore[attr-defined]
    return call_tool


def plain(value: Any) -> Any:
    """Arguments as plain JSON data (tuples to lists, models to dicts), for matching and for bench."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump()
    return json.loads(json.dumps(value, default=str))


# --------------------------------------------------------------------------- the exchange with bench


@attrs.frozen
class CallsTurn:
    """Tool calls for bench to execute, as one assistant turn."""

    calls: list[ToolCall]


@attrs.frozen
class StopTurn:
    """The solo agent called `done`: the conversation ends (calls proposed with it are dropped)."""

    dropped: list[ToolCall]


@attrs.frozen
class Failure:
    """The endpoint met a failure that ends the conversation whatever the framework does next."""

    error: BaseException


Step = CallsTurn | StopTurn | Failure


@attrs.define(eq=False)
class Proposal:
    """One call a model turn proposed, and the result bench sends back for it."""

    call: ToolCall
    result: asyncio.Future[ToolMessage]
    claimed: bool = False


@attrs.define
class ToolExchange:
    """The tool side of one conversation: proposals from the endpoint, invocations from the framework, results from bench."""

    tool_names: frozenset[str]
    done_tool: str | None = None
    """The solo agent's `done` (no-user mode), else None."""
    raise_errors: bool = False
    wait_s: float = 300.0
    steps: asyncio.Queue[Step] = attrs.field(factory=asyncio.Queue)
    batch: list[Proposal] = attrs.field(factory=list)
    sent: bool = False
    """Whether the current batch went to bench."""
    waiting: dict[str, Proposal] = attrs.field(factory=dict)
    """Proposals sent to bench and not yet answered, by call id."""
    _ids: Any = attrs.field(factory=lambda: itertools.count(1))

    def call_id(self) -> str:
        """A fresh id for a call that came without one."""
        return f"bridge-call-{next(self._ids)}"

    def proposed(self, calls: Sequence[ToolCall]) -> None:
        """The framework's model just answered: its calls of our tools are the batch invocations are matched against."""
        loop = asyncio.get_running_loop()
        self.batch = [Proposal(c, loop.create_future()) for c in calls if c.name in self.tool_names]
        self.sent = False

    async def invoke(self, name: str, arguments: dict[str, Any]) -> str:
        """One tool invocation by the framework: hand the calls to bench if not done yet, then await this one's result."""
        proposal = self._match(name, arguments)
        if proposal is None:
            proposal = Proposal(ToolCall(id=self.call_id(), name=name, arguments=arguments), asyncio.get_running_loop().create_future(), claimed=True)
            self._send([proposal])
        elif not self.sent:
            self.sent = True
            self._send(self.batch)
        async with asyncio.timeout(self.wait_s):  # not wait_for: on Python 3.11 it can swallow a cancellation
            result = await asyncio.shield(proposal.result)
        if result.error and self.raise_errors:
            raise ToolFailed(result.content or "the tool refused the call")
        return result.content or ""

    def _match(self, name: str, arguments: dict[str, Any]) -> Proposal | None:
        """The first unclaimed proposal of this tool with these arguments, else the first unclaimed one of this tool."""
        candidates = [p for p in self.batch if not p.claimed and p.call.name == name]
        exact = [p for p in candidates if _same_arguments(p.call.arguments, arguments)]
        if not candidates:
            return None
        chosen = (exact or candidates)[0]
        chosen.claimed = True
        return chosen

    def _send(self, proposals: list[Proposal]) -> None:
        calls = [p.call for p in proposals]
        stop = [c for c in calls if c.name == self.done_tool]
        if stop:
            self.steps.put_nowait(StopTurn(dropped=[c for c in calls if c.name != self.done_tool]))
            return
        self.waiting.update({p.call.id: p for p in proposals})
        self.steps.put_nowait(CallsTurn(calls))

    def deliver(self, results: Sequence[ToolMessage]) -> None:
        """bench executed the calls: resolve the invocations awaiting them."""
        for message in results:
            proposal = self.waiting.pop(message.id, None)
            if proposal is not None and not proposal.result.done():
                proposal.result.set_result(message)

    def fail(self, error: BaseException) -> None:
        """Tell the waiting `respond` that the conversation cannot go on."""
        self.steps.put_nowait(Failure(error))

    def cancel(self) -> None:
        """Drop every unanswered invocation (the conversation ended)."""
        for proposal in [*self.batch, *self.waiting.values()]:
            if not proposal.result.done():
                proposal.result.cancel()
        self.waiting.clear()


def _same_arguments(proposed: Mapping[str, Any], invoked: Mapping[str, Any]) -> bool:
    """Equal, leaving out nulls (a framework may fill optional parameters the model left out)."""

    def kept(arguments: Mapping[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in plain(dict(arguments)).items() if v is not None}

    return kept(proposed) == kept(invoked)


def tool_functions(schemas: Sequence[Mapping[str, Any]], exchange: ToolExchange) -> list[Callable[..., Awaitable[str]]]:
    """The conversation's tools as async functions bound to its exchange."""
    return [tool_function(tool_spec(schema), exchange.invoke) for schema in schemas]
