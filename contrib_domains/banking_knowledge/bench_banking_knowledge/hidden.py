"""A toolkit base whose discoverable tools run when named but stay out of the model's tool list.

tau2 keeps discoverable methods among a toolkit's tools: a call that names one directly runs it
(no unlock, no call log) and evaluation replays it when it writes. They are the kernel's hidden
tools (`@tool(kind, offered=False)`, which `discoverable` applies): in `specs()`, not in `schemas()`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from bench_kernel import Toolkit

from .db import BankDB
from .discovery import FORMATS, ToolInfo, discoverable_methods, tool_info

DOMAIN = "banking_knowledge"


def parse_arguments(text: str) -> Any:
    """A discovery call's JSON arguments with every integer read as a float, as tau2 reads them."""
    return json.loads(text, parse_int=float)


def type_error_text(exc: TypeError, method: Callable[..., Any], owner: str) -> str:
    """A TypeError's text naming the method as tau2's class does (`KnowledgeTools.name()`)."""
    name = getattr(method, "__name__", "")
    return str(exc).replace(f"{getattr(method, '__qualname__', name)}(", f"{owner}.{name}(")


@attrs.define
class HiddenToolsToolkit(Toolkit):
    """A toolkit over the bank database whose discoverable tools are callable but never offered."""

    @classmethod
    @functools.cache
    def discoverable(cls) -> dict[str, Callable[..., Any]]:
        """The discoverable tools of this toolkit class, by name."""
        return discoverable_methods(cls)

    @property
    def db(self) -> BankDB:
        """The bank database this toolkit works on."""
        return BankDB(self.state)

    def texts(self, side: str) -> Any:
        """The profile's texts for this side's discoverable tools, or None to use our docstrings."""
        profile = self.context.profile
        return None if profile is None else profile.discoverable_tools(DOMAIN, side)

    def formats(self) -> Mapping[str, str]:
        """The layouts of the unlock and give messages: the profile's when it has them, else ours."""
        profile = self.context.profile
        found = None if profile is None else profile.discoverable_formats(DOMAIN)
        return {**FORMATS, **found} if found else FORMATS

    def describe(self, method: Callable[..., Any], side: str) -> ToolInfo:
        """What the discovery outputs say about one discoverable tool."""
        return tool_info(method, self.texts(side))
