"""Discoverable tools: toolkit methods the model never sees in its tool list, reached by name.

The agent learns their names from the knowledge base, unlocks them and calls them through
`call_discoverable_agent_tool`; the agent gives the user's ones to the user. What the unlock and
give outputs say about a tool (description, parameters, success line) is read from its docstring
(our own words, Google style), or, under a profile that carries tau2's texts, from the profile.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import attrs

from bench_kernel import ToolKind, tool

F = TypeVar("F", bound=Callable[..., Any])

DEFAULT_RETURNS = "Action completed successfully."
PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")

FORMATS: dict[str, str] = {
    "card": "Name: {{name}}\nWhat it does: {{description}}\nArguments:\n{{params}}",
    "param_required": "  * {{name}} ({{type}}, required): {{description}}",
    "param_optional": "  * {{name}} ({{type}}, optional): {{description}}",
    "param_separator": "\n",
    "no_params": "  none",
    "unlocked": (
        "Unlocked {{name}}.\n\n{{card}}\n\nRun it with `call_discoverable_agent_tool`: "
        "agent_tool_name='{{name}}' and its arguments as a JSON object text."
    ),
    "given": (
        "Gave {{name}} to the customer: {{description}}\nSuggested arguments: {{arguments}}\n\n"
        "The customer runs it with `call_discoverable_user_tool` (discoverable_tool_name='{{name}}', the same arguments)."
    ),
    "no_arguments": "none",
}
"""Our layouts of the unlock and give messages; a profile's `formats` (tau2's layouts under tau2's profile) replace them."""


def render(template: str, values: Mapping[str, str]) -> str:
    """Fill `{{key}}` placeholders in one pass (values are never scanned for placeholders)."""
    return PLACEHOLDER.sub(lambda match: values.get(match.group(1), match.group(0)), template)


_ARGS_HEADER = re.compile(r"\n\s*Args:\s*\n")
_RETURNS_HEADER = re.compile(r"\n\s*Returns:\s*\n")
_PARAM_LINE = re.compile(r"^\s*(\w+)\s*(?:\(([^)]+)\))?\s*:\s*(.+?)$", re.MULTILINE)
_OPTIONAL = re.compile(r",?\s*optional", re.IGNORECASE)


def discoverable(kind: ToolKind) -> Callable[[F], F]:
    """Mark a toolkit method as a discoverable tool of this kind (WRITE ones are replayed and always logged).

    It is also a hidden kernel tool: tau2 runs a discoverable method that a call names directly (no unlock, no
    log) and replays it when it writes, but never offers it in the tool list.
    """

    def mark(func: F) -> F:
        func.__bench_discoverable__ = ToolKind(kind)  # type: ignore[attr-defined]
        return tool(kind, offered=False)(func)

    return mark


def discoverable_kind(func: Any) -> ToolKind | None:
    """The kind a method was marked with, or None when it is not a discoverable tool."""
    kind = getattr(func, "__bench_discoverable__", None)
    return kind if isinstance(kind, ToolKind) else None


def discoverable_methods(cls: type) -> dict[str, Callable[..., Any]]:
    """Every discoverable tool of a toolkit class, by name."""
    found: dict[str, Callable[..., Any]] = {}
    for name, member in inspect.getmembers(cls, inspect.isfunction):
        if not name.startswith("_") and discoverable_kind(member) is not None:
            found[name] = member
    return found


@attrs.frozen
class Param:
    """One parameter as the unlock output lists it."""

    name: str
    type: str
    optional: bool
    description: str


@attrs.frozen
class ToolInfo:
    """What the discovery outputs say about one discoverable tool."""

    name: str
    description: str
    params: tuple[Param, ...] = ()
    returns: str = DEFAULT_RETURNS

    def card(self, formats: Mapping[str, str] = FORMATS) -> str:
        """The tool as the unlock output shows it: name, description, one line per parameter."""
        lines = [
            render(formats["param_optional" if p.optional else "param_required"], {"name": p.name, "type": p.type, "description": p.description})
            for p in self.params
        ]
        params = formats["param_separator"].join(lines) if lines else formats["no_params"]
        return render(formats["card"], {"name": self.name, "description": self.description, "params": params})

    def unlocked_text(self, formats: Mapping[str, str] = FORMATS) -> str:
        """What unlocking the tool answers."""
        return render(formats["unlocked"], {"name": self.name, "description": self.description, "card": self.card(formats)})

    def given_text(self, arguments: str | None, formats: Mapping[str, str] = FORMATS) -> str:
        """What giving the tool to the customer answers (arguments as shown, None when there are none)."""
        shown = formats["no_arguments"] if arguments is None else arguments
        return render(formats["given"], {"name": self.name, "description": self.description, "arguments": shown})


def parse_docstring(name: str, doc: str) -> ToolInfo:
    """A tool's info from a Google-style docstring: text before `Args:`, `name (type[, optional]): text` lines, `Returns:`."""
    head, _, rest = _split(_ARGS_HEADER, doc)
    if not rest:  # no parameters: the description stops at `Returns:`
        head, _, returns = _split(_RETURNS_HEADER, doc)
        first = returns.strip().split("\n")[0].strip() if returns else DEFAULT_RETURNS
        return ToolInfo(name=name, description=head.strip(), returns=first)
    args, _, returns = _split(_RETURNS_HEADER, rest)
    params = tuple(_param(match) for match in _PARAM_LINE.finditer(args))
    first = returns.strip().split("\n")[0].strip() if returns else DEFAULT_RETURNS
    return ToolInfo(name=name, description=head.strip(), params=params, returns=first)


def _split(pattern: re.Pattern[str], text: str) -> tuple[str, bool, str]:
    parts = pattern.split(text, maxsplit=1)
    return (parts[0], True, parts[1]) if len(parts) > 1 else (parts[0], False, "")


def _param(match: re.Match[str]) -> Param:
    type_info = match.group(2) or "string"
    kind = _OPTIONAL.sub("", type_info).strip() or "string"
    return Param(name=match.group(1), type=kind, optional="optional" in type_info.lower(), description=match.group(3).strip())


def info_from_profile(name: str, entry: Mapping[str, Any]) -> ToolInfo:
    """A tool's info from a profile's entry (`description`, `params`, `returns`)."""
    params = tuple(
        Param(name=str(p["name"]), type=str(p.get("type") or "string"), optional=bool(p.get("optional")), description=str(p.get("description") or ""))
        for p in entry.get("params") or ()
    )
    return ToolInfo(name=name, description=str(entry.get("description") or ""), params=params, returns=str(entry.get("returns") or DEFAULT_RETURNS))


def tool_info(func: Callable[..., Any], texts: Mapping[str, Any] | None = None) -> ToolInfo:
    """A discoverable tool's info: the profile's texts when they name it, else its docstring."""
    name = func.__name__
    if texts is not None and name in texts:
        return info_from_profile(name, texts[name])
    return parse_docstring(name, inspect.getdoc(func) or "")
