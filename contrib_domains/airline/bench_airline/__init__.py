"""bench-airline: tau2-bench's airline domain for bench, exact to its DB hash, with a generated suite of our own."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench_kernel import Domain, hookimpl

from .domain import AirlineDomain

__all__ = ["AirlineDomain", "register_commands", "register_domains"]


@hookimpl
def register_domains(register: Callable[[Domain], None]) -> None:
    """Register the airline domain; its data is read later, in AirlineDomain.load."""
    register(AirlineDomain(name="airline"))


@hookimpl
def register_commands(cli: Any) -> None:
    """Add `bench airline generate`, which writes our own suite from a seed."""
    from .commands import airline_group

    cli.add_command(airline_group)
