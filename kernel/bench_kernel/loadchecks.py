"""Checks made when a plugin loads: a `def` the kernel awaits (or the reverse), hooks pluggy would ignore or cannot name."""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from typing import Any

from bench_kernel.errors import did_you_mean
from bench_kernel.markers import PROJECT

ASYNC, PLAIN = "async", "plain"
# Per component kind: the component's own methods and how the kernel calls them.
COMPONENT_METHODS: dict[str, dict[str, str]] = {
    "domain": {"load": PLAIN},
    "judge": {"judge": ASYNC},
    "metric": {"summarize": PLAIN},  # score may be either: the kernel awaits it only when it is awaitable
    "reward component": {"score": ASYNC, "applies": PLAIN},
    "report section": {"build": PLAIN, "cards": PLAIN, "compare_cards": PLAIN},
    "report builder": {"build": PLAIN},
    "attributor": {"attribute": PLAIN},
    "task transform": {"domain": PLAIN, "tasks": PLAIN, "prepare": ASYNC, "header": PLAIN, "finished": PLAIN},
    "executor": {"execute": ASYNC, "check": PLAIN},
    "profile reader": {"read": PLAIN},
    "channel": {"start": PLAIN},
    "conversation loop": {"play": ASYNC, "configure": PLAIN},
    "agent": {"start": PLAIN},
    "user simulator": {"start": PLAIN},
}
# Per kind that starts sessions: the session's methods and how the kernel calls them.
SESSION_METHODS: dict[str, dict[str, str]] = {
    "channel": {"to_agent": ASYNC, "to_user": ASYNC, "close": ASYNC},
    "agent": {"respond": ASYNC, "is_stop": PLAIN, "close": ASYNC},
    "user simulator": {"respond": ASYNC, "is_stop": PLAIN, "close": ASYNC},
}


def component_problems(kind: str, component: object) -> list[str]:
    """What is wrong with a registered component's methods, and with its declared session class's."""
    owner = type(component)
    problems = _method_problems(owner, COMPONENT_METHODS.get(kind, {}))
    session = declared_session(component) if kind in SESSION_METHODS else None
    if session is not None:
        problems += _method_problems(session, SESSION_METHODS[kind], f" (the session class {owner.__name__}.start returns)")
    return [f"{kind} {_name(component)!r}: {p}" for p in problems]


def session_problem(kind: str, component: object, session: object, plugin: str | None = None) -> str | None:
    """What is wrong with the session a component's `start` returned (None when it conforms): checked per class, once."""
    problems = _session_class_problems(typing.cast(typing.Hashable, type(session)), kind)
    if not problems:
        return None
    who = f"plugin {plugin!r}: " if plugin else ""
    return f"{who}{kind} {_name(component)!r}: " + "; ".join(problems) + f" (the session class {type(component).__name__}.start returned)"


@functools.cache
def _session_class_problems(cls: typing.Hashable, kind: str) -> tuple[str, ...]:
    assert isinstance(cls, type)
    return tuple(_method_problems(cls, SESSION_METHODS.get(kind, {})))


def declared_session(component: object) -> type | None:
    """The session class `start` is annotated to return, when its annotation resolves to a class."""
    # The base AgentSession says nothing: `session_problem` checks the class returned at the first conversation too.
    start = getattr(type(component), "start", None)
    if start is None:
        return None
    try:
        hint = typing.get_type_hints(start).get("return")
    except Exception:  # noqa: BLE001 - an annotation naming what only type checkers import: checked at first use
        return None
    return hint if isinstance(hint, type) else None


def _method_problems(cls: type, methods: dict[str, str], where: str = "") -> list[str]:
    problems = []
    for name, wanted in methods.items():
        method = inspect.getattr_static(cls, name, None)
        if isinstance(method, staticmethod | classmethod):
            method = method.__func__
        if not inspect.isfunction(method):
            continue
        is_async = _is_async(method)
        if wanted == ASYNC and not is_async:
            problems.append(f"{_qualname(cls, name)} is a plain def, but the kernel awaits it: write `async def {name}`{where}")
        elif wanted == PLAIN and is_async:
            problems.append(f"{_qualname(cls, name)} is an async def, but the kernel calls it without awaiting: write `def {name}`{where}")
    return problems


def _is_async(function: Callable[..., Any]) -> bool:
    # A decorator that keeps __wrapped__ may hide the coroutine function it wraps.
    return inspect.iscoroutinefunction(function) or inspect.iscoroutinefunction(inspect.unwrap(function))


def _qualname(cls: type, method: str) -> str:
    return f"{cls.__module__}.{cls.__qualname__}.{method}"


def _name(component: object) -> str:
    return str(getattr(component, "name", type(component).__name__))


def unmarked_hooks(plugin: object, hook_names: typing.Iterable[str]) -> list[str]:
    """Functions of a plugin object named like a hook but without the hookimpl marker (pluggy registers none of them)."""
    markers = (f"{PROJECT}_impl", f"{PROJECT}_spec")
    return [name for name in hook_names if callable(value := getattr(plugin, name, None)) and not any(hasattr(value, m) for m in markers)]


def unknown_hooks(plugin: object, hook_names: typing.Collection[str]) -> list[str]:
    """Functions of a plugin object marked as implementing a hook bench does not have, each with the closest hook's name."""
    # pluggy refuses them too, but names neither the function nor the hook that was meant.
    found = []
    for attr in dir(plugin):
        try:
            value = getattr(plugin, attr, None)
        except Exception:  # noqa: BLE001 - an attribute that cannot be read is no hook implementation
            continue
        options = getattr(value, f"{PROJECT}_impl", None) if callable(value) else None
        if not isinstance(options, dict):
            continue
        hook = options.get("specname") or attr
        if hook not in hook_names:
            meant = f" (specname {hook!r})" if hook != attr else ""
            found.append(f"{attr}{meant}{did_you_mean(hook, hook_names)}")
    return found
