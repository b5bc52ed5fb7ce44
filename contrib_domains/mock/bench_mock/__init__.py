"""bench-mock: a small home-internet helpdesk domain for bench, and the template for new domains."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Domain, hookimpl

from .domain import MockDomain

__all__ = ["MockDomain", "register_domains"]


@hookimpl
def register_domains(register: Callable[[Domain], None]) -> None:
    """Register the mock domain; its data is read later, in MockDomain.load."""
    register(MockDomain(name="mock"))
