"""bench-retail: an online-shop customer-service domain for bench (tau2-bench's retail tools), with our own generated suite."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench_kernel import Domain, hookimpl

from .domain import RetailDomain

__all__ = ["RetailDomain", "register_commands", "register_domains"]


@hookimpl
def register_domains(register: Callable[[Domain], None]) -> None:
    """Register the retail domain; its data is read later, in RetailDomain.load."""
    register(RetailDomain(name="retail"))


@hookimpl
def register_commands(cli: Any) -> None:
    """Add `bench retail generate`, which writes our own suite from a seed."""
    from .cli import retail_group

    cli.add_command(retail_group)
