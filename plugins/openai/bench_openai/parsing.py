"""Pure helpers for reading chat replies (no httpx): shared by this backend and backends built on it."""

from __future__ import annotations

import json
from typing import Any

from bench_kernel import ModelResponseError


def arguments_object(name: str, arguments: Any) -> dict[str, Any]:
    """A call's arguments as an object: an object, a JSON string holding one, or nothing (`{}`)."""
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        return {}
    value = arguments
    if isinstance(arguments, str):
        try:
            value = json.loads(arguments)
        except ValueError:
            raise ModelResponseError(f"tool call {name!r}: arguments are not valid JSON: {snippet(arguments)}") from None
    if not isinstance(value, dict):
        raise ModelResponseError(f"tool call {name!r}: arguments are not a JSON object: {snippet(arguments)}")
    return value


def snippet(value: Any, limit: int = 200) -> str:
    """A short text of a value for error messages."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit] + "…"
