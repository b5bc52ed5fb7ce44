"""bench-telecom: mobile-phone tech support with dual control (tau2-bench's telecom), its task generator and our own data."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Domain, hookimpl

from .domain import TelecomDomain

__all__ = ["TelecomDomain", "register_domains"]


@hookimpl
def register_domains(register: Callable[[Domain], None]) -> None:
    """Register the telecom domain; its data is read later, in TelecomDomain.load."""
    register(TelecomDomain(name="telecom"))
