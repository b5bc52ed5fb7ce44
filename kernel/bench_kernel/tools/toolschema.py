"""OpenAI function schemas from Python tools, and the text a tool's return value shows the model.

Both follow tau2-bench so prompts and tool messages read the same as there: schemas mirror what
its pydantic-and-docstring tool wrapper emits (inlined, without ``anyOf`` for optionals). Results are
plain JSON by default; a domain that mirrors tau2 asks for tau2's ``Environment.to_json_str`` rendering
(`DomainData.tool_results = "tau2"`), which turns the numbers and booleans of plain containers into strings.
"""

from __future__ import annotations

import collections.abc
import datetime
import enum
import inspect
import json
import re
import textwrap
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args

import attrs

__all__ = ["TOOL_RESULT_STYLES", "ToolResultStyle", "function_schema", "tool_result_text"]

ToolResultStyle = Literal["json", "tau2"]
"""How a tool's return value becomes its message text: plain JSON, or tau2's rendering (scalars in plain containers as strings)."""
TOOL_RESULT_STYLES: tuple[str, ...] = get_args(ToolResultStyle)

_SKIPPED = frozenset({"self", "cls"})
_ARG_SECTIONS = frozenset({"Args", "Arguments", "Parameters", "Params"})
_OTHER_SECTIONS = frozenset(
    {"Returns", "Yields", "Raises", "Exceptions", "Except", "Attributes", "Example", "Examples"}
)
_SECTION_RE = re.compile(
    r"^(" + "|".join(sorted(_ARG_SECTIONS | _OTHER_SECTIONS)) + r"):[ \t]*$", re.MULTILINE
)
_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARRAYS = (list, set, frozenset, collections.abc.Sequence, collections.abc.Set)
_OBJECTS = (dict, collections.abc.Mapping)
_NO_DEFAULT = object()


# --------------------------------------------------------------------------- docstrings


@attrs.frozen
class _Docstring:
    """The parts of a Google-style docstring a schema uses."""

    summary: str
    details: str
    args: dict[str, str]


def _parse_docstring(doc: str | None) -> _Docstring:
    """Split a Google-style docstring into summary, details and Args descriptions."""
    text = inspect.cleandoc(doc or "")
    headers = list(_SECTION_RE.finditer(text))
    head = text[: headers[0].start()] if headers else text
    # tau2 (via docstring_parser) takes only the first line as the summary, the rest as details
    summary, _, details = head.partition("\n")
    args: dict[str, str] = {}
    for header, following in zip(headers, [*headers[1:], None], strict=False):
        if header.group(1) in _ARG_SECTIONS:
            body = text[header.end() : following.start() if following else len(text)]
            args.update(_parse_args(body))
    return _Docstring(summary.strip(), details.strip(), args)


def _parse_args(body: str) -> dict[str, str]:
    """Map each entry of an Args section body to its (possibly multi-line) description."""
    entries: list[list[str]] = []
    for line in textwrap.dedent(body).splitlines():
        if line and not line[0].isspace():
            entries.append([line])
        elif entries:
            entries[-1].append(line)
    return dict(_parse_arg_entry(lines) for lines in entries)


def _parse_arg_entry(lines: list[str]) -> tuple[str, str]:
    """Return the name and description of one Args entry such as ``name (int): text``."""
    spec, _, first = lines[0].partition(":")
    name = spec.split("(", 1)[0].strip().lstrip("*")
    # continuation lines keep their line breaks, as docstring_parser does for tau2
    rest = inspect.cleandoc("\n".join(lines[1:]))
    return name, "\n".join(part for part in (first.strip(), rest) if part)


# --------------------------------------------------------------------------- schemas


def function_schema(func: Callable[..., Any], *, name: str | None = None) -> dict[str, Any]:
    """Build the OpenAI function-calling schema of func from its signature and docstring."""
    tool_name = name or func.__name__
    doc = _parse_docstring(func.__doc__)
    params = _tool_parameters(func, tool_name)
    unknown = sorted(set(doc.args) - set(params) - _SKIPPED)
    if unknown:
        raise ValueError(f"tool {tool_name!r}: docstring documents unknown parameters {unknown}")
    hints = _type_hints(func, tool_name)
    properties: dict[str, Any] = {}
    for param in params.values():
        try:
            properties[param.name] = _property_schema(
                param.name, hints.get(param.name, Any), param.default, doc.args.get(param.name)
            )
        except TypeError as exc:
            raise ValueError(f"tool {tool_name!r}, parameter {param.name!r}: {exc}") from exc
    required = [p.name for p in params.values() if p.default is inspect.Parameter.empty]
    return {
        "type": "function",
        "function": {
            "name": tool_name,
            "description": _description(doc, tool_name),
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def _tool_parameters(func: Callable[..., Any], tool_name: str) -> dict[str, inspect.Parameter]:
    """Return the parameters the model fills in, refusing ``*args`` and ``**kwargs``."""
    params = {n: p for n, p in inspect.signature(func).parameters.items() if n not in _SKIPPED}
    variadic = [
        p.name
        for p in params.values()
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    ]
    if variadic:
        raise ValueError(f"tool {tool_name!r}: a model cannot fill variadic parameters {variadic}")
    return params


def _type_hints(func: Callable[..., Any], tool_name: str) -> dict[str, Any]:
    """Resolve func's annotations, which are strings under postponed evaluation."""
    try:
        return typing.get_type_hints(func)
    except Exception as exc:
        raise ValueError(f"tool {tool_name!r}: cannot resolve its annotations: {exc}") from exc


def _description(doc: _Docstring, tool_name: str) -> str:
    """Return the summary, plus the details after a blank line when there are any."""
    if not doc.summary:
        return tool_name
    return f"{doc.summary}\n\n{doc.details}" if doc.details else doc.summary


def _property_schema(
    name: str, annotation: Any, default: Any, description: str | None
) -> dict[str, Any]:
    """Return the schema of one parameter or attrs field."""
    schema: dict[str, Any] = {"title": _title(name), **_type_schema(annotation)}
    if description:
        schema["description"] = description
    value = _json_default(default)
    if value is not _NO_DEFAULT:
        schema["default"] = value
    return schema


def _title(name: str) -> str:
    """Title-case a parameter name the way pydantic does for tau2 (``a_b`` -> ``A B``)."""
    return name.replace("_", " ").title()


def _json_default(default: Any) -> Any:
    """Return default as plain JSON data, or _NO_DEFAULT when it has none worth showing."""
    if default is None or default is inspect.Parameter.empty or default is attrs.NOTHING:
        return _NO_DEFAULT
    if isinstance(default, enum.Enum):
        default = default.value
    try:
        return json.loads(json.dumps(default))
    except (TypeError, ValueError):
        return _NO_DEFAULT


def _type_schema(annotation: Any) -> dict[str, Any]:
    """Return the JSON schema of a resolved annotation, or raise TypeError if it has none."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}
    if origin is Union or origin is types.UnionType:
        return _union_schema(args)
    if origin is Literal:
        return _enum_schema(list(args))
    if annotation in _SCALARS:
        return {"type": _SCALARS[annotation]}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum_schema([member.value for member in annotation])
    if isinstance(annotation, type) and attrs.has(annotation):
        return _attrs_schema(annotation)
    if annotation is tuple or origin is tuple:
        homogeneous = len(args) == 2 and args[1] is Ellipsis
        return _array_schema(args[0] if homogeneous else None)
    if annotation in _ARRAYS or origin in _ARRAYS:
        return _array_schema(args[0] if args else None)
    if annotation in _OBJECTS or origin in _OBJECTS:
        return {"type": "object"}
    raise TypeError(f"no JSON schema for annotation {annotation!r}")


def _union_schema(members: tuple[Any, ...]) -> dict[str, Any]:
    """Return the schema of a union, collapsing ``X | None`` to the schema of X."""
    present = [m for m in members if m is not type(None)]
    if len(present) == 1:
        return _type_schema(present[0])
    return {"anyOf": [_type_schema(m) for m in present]}


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    """Return an enum schema, typed when all values share one JSON scalar type."""
    kinds = {type(v) for v in values}
    kind = kinds.pop() if len(kinds) == 1 else None
    if kind in _SCALARS:
        return {"type": _SCALARS[kind], "enum": values}
    return {"enum": values}


def _array_schema(item: Any) -> dict[str, Any]:
    """Return an array schema, with items when the element type is known."""
    if item is None:
        return {"type": "array"}
    return {"type": "array", "items": _type_schema(item)}


def _attrs_schema(cls: type) -> dict[str, Any]:
    """Return the object schema of an attrs class from its init fields."""
    hints = typing.get_type_hints(cls)
    fields = [f for f in attrs.fields(cls) if f.init]
    return {
        "type": "object",
        "properties": {
            f.name: _property_schema(f.name, hints.get(f.name, Any), f.default, None)
            for f in fields
        },
        "required": [f.name for f in fields if f.default is attrs.NOTHING],
    }


# --------------------------------------------------------------------------- results


def tool_result_text(value: object, style: ToolResultStyle = "json") -> str:
    """Serialise a tool's return value into the tool message text: plain JSON, or as tau2's to_json_str does.

    Strings pass unchanged in both styles. "json" keeps numbers and booleans as JSON numbers and booleans;
    "tau2" turns those inside plain lists and dicts (and a bare one) into strings, as tau2 does.
    """
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, str):
        return value
    if style == "tau2":
        return json.dumps(_plain(value), default=_leftover)
    if style != "json":
        raise ValueError(f"unknown tool result style {style!r} (known: {', '.join(TOOL_RESULT_STYLES)})")
    return json.dumps(_json_data(value), default=_leftover)


def _json_data(value: Any) -> Any:
    """Turn value into JSON data, keeping numbers and booleans as they are."""
    if attrs.has(type(value)):
        return attrs.asdict(value, recurse=True)
    if isinstance(value, enum.Enum):
        return _json_data(value.value)
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_json_data(item) for item in value]
    if isinstance(value, dict):
        return {key: _json_data(item) for key, item in value.items()}
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return str(value)


def _plain(value: Any) -> Any:
    """Turn value into JSON data, stringifying the scalars of plain containers like tau2."""
    if attrs.has(type(value)):
        # tau2's records are pydantic models dumped as they are: numbers stay numbers there
        return attrs.asdict(value, recurse=True)
    if isinstance(value, enum.Enum):
        return _plain(value.value)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value)
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return str(value)


def _leftover(value: Any) -> Any:
    """Encode what json cannot inside a record: enums by value, anything else with str()."""
    if isinstance(value, enum.Enum):
        return value.value
    return str(value)
