"""Pure helpers for reading chat replies (no httpx): shared by this backend and backends built on it."""

from __future__ import annotations

import array
import base64
import binascii
import json
import math
import os
import sys
from collections.abc import Callable
from typing import Any

import attrs
import orjson

from bench_kernel import ChatResponse, ConfigError, ModelResponseError, ToolCall

_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19
"""19 digits in a row: where an integer may pass 64 bits (orjson reads those as floats, json as ints)."""


def loads(text: str) -> Any:
    """json.loads, by orjson where that gives the same value (about half the CPU on a reply); raises ValueError.

    orjson refuses what json reads leniently (NaN, Infinity, escaped lone surrogates, deep nesting): json reads those,
    as it did before. The one value orjson reads differently, an integer past 64 bits, needs 19 digits in a row.
    """
    try:
        if _LONG_NUMBER not in text.encode().translate(_DIGITS):
            return orjson.loads(text)
    except (orjson.JSONDecodeError, UnicodeEncodeError):
        pass
    return json.loads(text)


def evolved(inst: Any, **changes: Any) -> Any:
    """attrs.evolve without its per-call look-up of the class's fields (every reply is evolved twice)."""
    cls = type(inst)
    names = _INIT_FIELDS.get(cls)
    if names is None:
        names = _INIT_FIELDS[cls] = tuple((a.name, a.alias) for a in attrs.fields(cls) if a.init)
    for name, alias in names:
        if alias not in changes:
            changes[alias] = getattr(inst, name)
    return cls(**changes)


_INIT_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}


def arguments_object(name: str, arguments: Any) -> dict[str, Any]:
    """A call's arguments as an object: an object, a JSON string holding one, or nothing (`{}`)."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    value = arguments
    if isinstance(arguments, str):
        try:
            value = loads(arguments)
        except ValueError:
            raise ModelResponseError(f"tool call {name!r}: arguments are not valid JSON: {snippet(arguments)}") from None
    if not isinstance(value, dict):
        raise ModelResponseError(f"tool call {name!r}: arguments are not a JSON object: {snippet(arguments)}")
    return value


def snippet(value: Any, limit: int = 200) -> str:
    """A short text of a value for error messages."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


def read_api_key(variable: str | None) -> str | None:
    """The key from the named environment variable; the error names the variable, never a value."""
    if variable is None:
        return None
    key = os.environ.get(variable)
    if not key:
        raise ConfigError(f"environment variable {variable} is not set; it must hold the API key")
    return key


def text_of(content: Any) -> str | None:
    """Content as text: a string, or the text parts of a list of content parts."""
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict) and p.get("type") == "text") or None
    raise ModelResponseError(f"message content is neither text nor content parts: {snippet(content)}")


def int_or_none(value: Any) -> int | None:
    """A token count as an int, or None when the reply holds none."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def reasoning_of(message: dict[str, Any]) -> str | None:
    """The reasoning text servers put beside the content (`reasoning_content`, or `reasoning`)."""
    for field in ("reasoning_content", "reasoning"):
        value = message.get(field)
        if isinstance(value, str) and value:
            return value
    return None


def tool_call_of(call: Any, where: str, parse_arguments: Callable[[str, Any], dict[str, Any]] = arguments_object) -> ToolCall:
    """One OpenAI tool call: {"id", "type": "function", "function": {"name", "arguments": "<JSON>"}}."""
    function = call.get("function") if isinstance(call, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(call, dict) or not isinstance(function, dict) or not isinstance(name, str) or not name:
        raise ModelResponseError(f"{where}: a tool call has no function name: {snippet(call)}")
    return ToolCall(id=str(call.get("id") or ""), name=name, arguments=parse_arguments(name, function.get("arguments")))


def message_of(
    message: dict[str, Any],
    where: str,
    parse_tool_call: Callable[[Any], ToolCall] | None = None,
    parse_reasoning: Callable[[dict[str, Any]], str | None] = reasoning_of,
) -> ChatResponse:
    """Content, tool calls and reasoning of choices[0].message."""
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ModelResponseError(f"{where}: tool_calls is not a list: {snippet(calls)}")
    parse = parse_tool_call or (lambda call: tool_call_of(call, where))
    return ChatResponse(content=text_of(message.get("content")), tool_calls=[parse(call) for call in calls], reasoning=parse_reasoning(message))


def completion_of(body: dict[str, Any], where: str, parse_message: Callable[[dict[str, Any]], ChatResponse]) -> ChatResponse:
    """choices[0] and usage of a completion body; refuses a message with neither content nor tool calls."""
    choices = body.get("choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(choice, dict) or not isinstance(choice.get("message"), dict):
        raise ModelResponseError(f"{where}: the reply has no choices[0].message: {snippet(body)}")
    parsed = parse_message(choice["message"])
    if not parsed.content and not parsed.tool_calls:
        raise ModelResponseError(f"{where}: the reply has neither content nor tool calls: {snippet(choice)}")
    found = body.get("usage")
    usage: dict[str, Any] = found if isinstance(found, dict) else {}
    return evolved(
        parsed,
        finish_reason=choice.get("finish_reason"),
        prompt_tokens=int_or_none(usage.get("prompt_tokens")),
        completion_tokens=int_or_none(usage.get("completion_tokens")),
    )


def embeddings_of(body: dict[str, Any], count: int, where: str) -> tuple[list[list[float]], int | None]:
    """The vectors of an embeddings reply (`data[i].embedding`, in `index` order) and its prompt tokens.

    An embedding is a list of numbers or base64 of little-endian float32 values (`encoding_format: base64`).
    """
    data = body.get("data")
    if not isinstance(data, list) or len(data) != count:
        raise ModelResponseError(f"{where}: expected {count} embeddings in data, got {snippet(data)}")
    if not all(isinstance(item, dict) for item in data):
        raise ModelResponseError(f"{where}: an item of data is not an object: {snippet(data)}")
    order = [item["index"] if isinstance(item.get("index"), int) else n for n, item in enumerate(data)]
    items = [item for _, item in sorted(zip(order, data, strict=True), key=lambda pair: pair[0])]
    vectors = [_vector(item.get("embedding"), where) for item in items]
    usage = body.get("usage")
    return vectors, int_or_none(usage.get("prompt_tokens")) if isinstance(usage, dict) else None


def _vector(value: Any, where: str) -> list[float]:
    if isinstance(value, str):
        try:
            raw = base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError):
            raise ModelResponseError(f"{where}: an embedding is not base64: {snippet(value)}") from None
        if len(raw) % 4:
            raise ModelResponseError(f"{where}: a base64 embedding is not a whole number of float32 values")
        floats = array.array("f", raw)
        if sys.byteorder == "big":
            floats.byteswap()
        vector = floats.tolist()
    elif isinstance(value, list) and value and all(isinstance(x, int | float) and not isinstance(x, bool) for x in value):
        vector = [float(x) for x in value]
    else:
        raise ModelResponseError(f"{where}: an embedding is neither a list of numbers nor base64: {snippet(value)}")
    if not vector or not all(map(math.isfinite, vector)):
        raise ModelResponseError(f"{where}: an embedding is empty or holds a value that is not a finite number")
    return vector
