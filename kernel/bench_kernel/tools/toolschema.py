"""OpenAI function schemas from Python tools (as tau2's wrapper writes them: prompts read the same), tool arguments, tool result texts."""

from __future__ import annotations

import collections.abc
import contextlib
import datetime
import enum
import functools
import inspect
import json
import re
import textwrap
import types
import typing
from collections.abc import Callable
from typing import Any, Literal, Union, get_args

import attrs

from bench_kernel.errors import ToolError

__all__ = ["TOOL_RESULT_STYLES", "ToolResultStyle", "function_schema", "tool_arguments", "tool_result_text"]

ToolResultStyle = Literal["json", "tau2"]
"""How a tool's return value becomes its message text: plain JSON, or tau2's rendering (scalars in plain containers as strings)."""
TOOL_RESULT_STYLES: tuple[str, ...] = get_args(ToolResultStyle)

_SKIPPED = frozenset({"self", "cls"})
_ARG_SECTIONS = frozenset({"Args", "Arguments", "Parameters", "Params"})
_OTHER_SECTIONS = frozenset({"Returns", "Yields", "Raises", "Exceptions", "Except", "Attributes", "Example", "Examples"})
_SECTION_RE = re.compile(r"^(" + "|".join(sorted(_ARG_SECTIONS | _OTHER_SECTIONS)) + r"):[ \t]*$", re.MULTILINE)
_SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
_ARRAYS = (list, set, frozenset, collections.abc.Sequence, collections.abc.Set)
_OBJECTS = (dict, collections.abc.Mapping)


# --------------------------------------------------------------------------- docstrings


@attrs.frozen
class _Docstring:
    """The parts of a Google-style docstring a schema uses."""

    summary: str
    details: str
    args: dict[str, str]
    types: dict[str, str]
    """The type written in parentheses after each documented name (``name (int): ...``), when there is one."""


def _parse_docstring(doc: str | None) -> _Docstring:
    """Split a Google-style docstring into summary, details and Args descriptions."""
    text = inspect.cleandoc(doc or "")
    headers = list(_SECTION_RE.finditer(text))
    head = text[: headers[0].start()] if headers else text
    # tau2 (via docstring_parser) takes only the first line as the summary, the rest as details
    summary, _, details = head.partition("\n")
    pairs = zip(headers, [*headers[1:], None], strict=False)
    bodies = [text[header.end() : after.start() if after else len(text)] for header, after in pairs if header.group(1) in _ARG_SECTIONS]
    entries = [entry for body in bodies for entry in _parse_args(body)]
    types = {name: written for name, written, _ in entries if written}
    return _Docstring(summary.strip(), details.strip(), {name: description for name, _, description in entries}, types)


def _parse_args(body: str) -> list[tuple[str, str, str]]:
    """Each entry of an Args section body: its name, written type and (possibly multi-line) description."""
    entries: list[list[str]] = []
    for line in textwrap.dedent(body).splitlines():
        if line and not line[0].isspace():
            entries.append([line])
        elif entries:
            entries[-1].append(line)
    found = []
    for first_line, *more in entries:  # ``name (int): text``
        spec, _, first = first_line.partition(":")
        name, _, written = spec.partition("(")
        # continuation lines keep their line breaks, as docstring_parser does for tau2
        description = "\n".join(part for part in (first.strip(), inspect.cleandoc("\n".join(more))) if part)
        found.append((name.strip().lstrip("*"), written.rpartition(")")[0].strip(), description))
    return found


# --------------------------------------------------------------------------- schemas


def function_schema(func: Callable[..., Any], *, name: str | None = None, strict: bool = True) -> dict[str, Any]:
    """Build the OpenAI function-calling schema of func from its signature and docstring (docs/plugins.md)."""
    # Not strict: an undocumented or mistyped parameter passes, without description, as tau2's wrapper gives it.
    tool_name = name or func.__name__
    doc = _parse_docstring(func.__doc__)
    params = {n: p for n, p in inspect.signature(func).parameters.items() if n not in _SKIPPED}
    variadic = [p.name for p in params.values() if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
    if variadic:
        raise ValueError(f"tool {tool_name!r}: a model cannot fill variadic parameters {variadic}")
    unknown = sorted(set(doc.args) - set(params) - _SKIPPED)
    if unknown:
        raise ValueError(f"tool {tool_name!r}: docstring documents unknown parameters {unknown}")
    missing = [p for p in params if p not in doc.args] if strict else []
    if missing:
        raise ValueError(
            f"tool {tool_name!r}: docstring does not document parameters {missing} "
            "(add each under Args: as `name (type): what it is`; the model sees only what is written)"
        )
    try:  # strings under postponed evaluation
        hints = typing.get_type_hints(func)
    except Exception as exc:
        raise ValueError(f"tool {tool_name!r}: cannot resolve its annotations: {exc}") from exc
    if strict:
        _check_documented_types(func, tool_name, doc, hints)
    properties: dict[str, Any] = {}
    for param in params.values():
        try:
            properties[param.name] = _property_schema(param.name, hints.get(param.name, Any), param.default, doc.args.get(param.name))
        except TypeError as exc:
            raise ValueError(f"tool {tool_name!r}, parameter {param.name!r}: {exc}") from exc
    required = [p.name for p in params.values() if p.default is inspect.Parameter.empty]
    parameters = {"type": "object", "properties": properties, "required": required}
    # Summary, then the details after a blank line (a docstring without a summary has no details either).
    description = "\n\n".join(filter(None, (doc.summary, doc.details))) or tool_name
    return {"type": "function", "function": {"name": tool_name, "description": description, "parameters": parameters}}


def _check_documented_types(func: Callable[..., Any], tool_name: str, doc: _Docstring, hints: dict[str, Any]) -> None:
    """Refuse a documented type that cannot hold what the annotation says (compared as JSON types)."""
    for name, written in doc.types.items():
        if name not in hints:
            continue
        documented = _written_kinds(written, getattr(func, "__globals__", {}))
        annotated = _annotation_kinds(hints[name])  # none when it has no schema: reported when the parameter's is built
        if documented and annotated and not documented & annotated:
            raise ValueError(
                f"tool {tool_name!r}, parameter {name!r}: the docstring says ({written}) but the annotation "
                f"is {_annotation_text(hints[name])} ({' or '.join(sorted(documented))} against "
                f"{' or '.join(sorted(annotated))})"
            )


_WRITTEN_KINDS = {
    word: kind
    for kind, words in (
        ("string", "str string"),
        ("integer", "int integer"),
        ("number", "float number"),
        ("boolean", "bool boolean"),
        ("array", "list sequence tuple set frozenset array iterable"),
        ("object", "dict mapping object"),
    )
    for word in words.split()
}
_WRAPPERS = frozenset({"optional", "required", "annotated"})


def _written_kinds(written: str, namespace: dict[str, Any]) -> set[str]:
    """The JSON types a docstring's written type allows, or an empty set when it cannot be read (then not compared)."""
    text = re.sub(r",\s*(optional|required)\s*$", "", written.strip(), flags=re.IGNORECASE).strip()
    if not text:
        return set()
    parts = _split_top(text, "|")  # `A | B`, or else `A or B`
    parts = parts if len(parts) > 1 else re.split(r"\s+or\s+", parts[0])
    if len(parts) > 1:
        kinds = [_written_kinds(p, namespace) for p in parts if p.lower() not in ("none", "null")]
        return set().union(*kinds) if all(kinds) else set()
    head, _, inner = text.partition("[")
    head = head.strip().split(".")[-1]
    if head.lower() in _WRAPPERS and inner:
        return _written_kinds(inner.rpartition("]")[0].split(",")[0] if head.lower() == "annotated" else inner.rpartition("]")[0], namespace)
    if head.lower() == "union" and inner:
        return _written_kinds(" | ".join(_split_top(inner.rpartition("]")[0], ",")), namespace)
    if head.lower() in _WRITTEN_KINDS:
        return {_WRITTEN_KINDS[head.lower()]}
    found = namespace.get(head)
    return _annotation_kinds(found) if isinstance(found, type) else set()


def _annotation_kinds(annotation: Any) -> set[str]:
    """The JSON types an annotation's schema allows (empty when it has no schema)."""
    try:
        return _schema_kinds(_type_schema(annotation))
    except TypeError:
        return set()


def _split_top(text: str, separator: str) -> list[str]:
    """Split on a separator outside brackets."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char == "["
        depth -= char == "]"
        if char == separator and depth == 0:
            parts.append(current.strip())
            current = ""
        else:
            current += char
    return [*parts, current.strip()]


def _schema_kinds(schema: dict[str, Any]) -> set[str]:
    """The JSON types a schema allows (empty when it allows anything or only enumerates values)."""
    if "anyOf" in schema:
        kinds = [_schema_kinds(member) for member in schema["anyOf"]]
        return set().union(*kinds) if all(kinds) else set()
    kind = schema.get("type")
    return {kind} if isinstance(kind, str) else set()


def _annotation_text(annotation: Any) -> str:
    return annotation.__name__ if isinstance(annotation, type) else str(annotation).replace("typing.", "")


def _property_schema(name: str, annotation: Any, default: Any, description: str | None) -> dict[str, Any]:
    """Return the schema of one parameter or attrs field."""
    # Title-cased as pydantic does for tau2 (``a_b`` -> ``A B``).
    schema: dict[str, Any] = {"title": name.replace("_", " ").title(), **_type_schema(annotation)}
    if description:
        schema["description"] = description
    if default is not None and default is not inspect.Parameter.empty and default is not attrs.NOTHING:
        with contextlib.suppress(TypeError, ValueError):  # a default JSON cannot hold is not shown
            schema["default"] = json.loads(json.dumps(default.value if isinstance(default, enum.Enum) else default))
    return schema


def _type_schema(annotation: Any) -> dict[str, Any]:
    """Return the JSON schema of a resolved annotation, or raise TypeError if it has none."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if annotation is Any or annotation is inspect.Parameter.empty:
        return {}
    if origin is Union or origin is types.UnionType:  # ``X | None`` collapses to the schema of X
        present = [m for m in args if m is not type(None)]
        return _type_schema(present[0]) if len(present) == 1 else {"anyOf": [_type_schema(m) for m in present]}
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


def _enum_schema(values: list[Any]) -> dict[str, Any]:
    """Return an enum schema, typed when all values share one JSON scalar type."""
    kinds = {type(v) for v in values}
    kind = kinds.pop() if len(kinds) == 1 else None
    return {"type": _SCALARS[kind], "enum": values} if kind in _SCALARS else {"enum": values}


def _array_schema(item: Any) -> dict[str, Any]:
    """Return an array schema, with items when the element type is known."""
    return {"type": "array"} if item is None else {"type": "array", "items": _type_schema(item)}


def _attrs_schema(cls: type) -> dict[str, Any]:
    """Return the object schema of an attrs class from its init fields."""
    hints = typing.get_type_hints(cls)
    fields = [f for f in attrs.fields(cls) if f.init]
    properties = {f.name: _property_schema(f.name, hints.get(f.name, Any), f.default, None) for f in fields}
    return {"type": "object", "properties": properties, "required": [f.name for f in fields if f.default is attrs.NOTHING]}


# --------------------------------------------------------------------------- arguments


def tool_arguments(func: Callable[..., Any], arguments: collections.abc.Mapping[str, Any]) -> dict[str, Any]:
    """The JSON arguments of a call as func's annotations ask for them (table in docs/plugins.md); a misfit raises ToolError."""
    found = dict(arguments)
    for name, annotation in _structured_parameters(getattr(func, "__func__", func)).items():
        value = found.get(name)
        # Python callers may pass the object itself (set-up code); only JSON needs structuring.
        if value is not None and not (isinstance(annotation, type) and isinstance(value, annotation)):
            found[name] = _structure_argument(name, value, annotation)
    return found


@functools.cache
def _structured_parameters(func: Callable[..., Any]) -> dict[str, Any]:
    """The parameters of func whose annotation holds an Enum or an attrs class (once per function)."""
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # noqa: BLE001 - annotations a schema cannot read either: the arguments pass as they are
        return {}
    return {name: hint for name, hint in hints.items() if name not in ("return", *_SKIPPED) and _needs_structuring(hint)}


def _needs_structuring(annotation: Any) -> bool:
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if isinstance(annotation, type) and (issubclass(annotation, enum.Enum) or attrs.has(annotation)):
        return True
    if origin is Union or origin is types.UnionType:
        present = [a for a in args if a is not type(None)]
        return len(present) == 1 and _needs_structuring(present[0])
    if origin is tuple or origin in _ARRAYS:
        return any(_needs_structuring(a) for a in args if a is not Ellipsis)
    if origin in _OBJECTS and len(args) == 2:
        return _needs_structuring(args[1])
    return False


@functools.cache
def _argument_converter() -> Any:
    import cattrs

    return cattrs.Converter(forbid_extra_keys=True)


def _structure_argument(name: str, value: Any, annotation: Any) -> Any:
    import cattrs

    try:
        return _argument_converter().structure(value, annotation)
    except Exception as exc:  # noqa: BLE001 - cattrs raises several kinds; each becomes the tool's error text
        if isinstance(exc, cattrs.BaseValidationError):
            problems = cattrs.transform_error(exc, path=name)
        elif isinstance(annotation, type) and issubclass(annotation, enum.Enum):  # its values listed, so the model can pick one
            problems = [f"{value!r:.60} is not one of {[member.value for member in annotation]} @ {name}"]
        else:
            problems = [f"cannot read {value!r:.60} as {_annotation_text(annotation)} ({exc}) @ {name}"]
        raise ToolError(f"invalid arguments: {'; '.join(problems)}") from None


# --------------------------------------------------------------------------- results


def tool_result_text(value: object, style: ToolResultStyle = "json") -> str:
    """Serialise a tool's return value into the tool message text: plain JSON, or as tau2's to_json_str does (strings as they are)."""
    if isinstance(value, enum.Enum):
        value = value.value
    if isinstance(value, str):
        return value
    if style not in TOOL_RESULT_STYLES:
        raise ValueError(f"unknown tool result style {style!r} (known: {', '.join(TOOL_RESULT_STYLES)})")
    return json.dumps(_json_data(value, tau2=style == "tau2"), default=_leftover)


def _json_data(value: Any, *, tau2: bool = False) -> Any:
    """Turn value into JSON data, keeping numbers and booleans as they are (tau2: stringifying those of plain containers)."""
    if attrs.has(type(value)):
        # tau2's records are pydantic models dumped as they are: numbers stay numbers there
        return attrs.asdict(value, recurse=True)
    if isinstance(value, enum.Enum):
        return _json_data(value.value, tau2=tau2)
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return str(value) if tau2 else value
    if isinstance(value, (list, tuple)):
        return [_json_data(item, tau2=tau2) for item in value]
    if isinstance(value, dict):
        return {key: _json_data(item, tau2=tau2) for key, item in value.items()}
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat()
    return str(value)


def _leftover(value: Any) -> Any:
    """Encode what json cannot inside a record: enums by value, anything else with str()."""
    return value.value if isinstance(value, enum.Enum) else str(value)
