"""bench-banking: retail banking for bench, AgentChangeBench's tools (two defects fixed, switchable back) and our own suite."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench_kernel import Domain, hookimpl

from .domain import BankingDomain

__all__ = ["BankingDomain", "register_commands", "register_domains"]


@hookimpl
def register_domains(register: Callable[[Domain], None]) -> None:
    """Register the banking domain; its data is read later, in BankingDomain.load."""
    register(BankingDomain(name="banking"))


@hookimpl
def register_commands(cli: Any) -> None:
    """Add `bench banking generate`, which writes our own suite from a seed."""
    from .commands import banking_group

    cli.add_command(banking_group)
