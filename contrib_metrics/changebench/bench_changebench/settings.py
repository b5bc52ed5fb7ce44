"""The run settings this plugin's task transforms own, checked as a run file may give them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bench_kernel import ConfigError


def run_setting(settings: Mapping[str, Any], key: str, kind: type) -> Any:
    """A run setting of the expected type (a count: at least 1), or None when unset."""
    value = settings.get(key)
    if value is None:
        return None
    counts = type(value) is int and value >= 1  # a bool is no count
    if (kind is int and not counts) or (kind is not int and type(value) is not kind):
        expected = {int: "a whole number of at least 1", str: "a string"}[kind]
        raise ConfigError(f"{key} must be {expected}, not {value!r} @ $.run.{key}")
    return value
