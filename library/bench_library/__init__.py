"""bench-library: a small lending library domain for bench."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Domain, hookimpl

from .domain import LibraryDomain

__all__ = ["LibraryDomain", "register_domains"]


@hookimpl
def register_domains(register: Callable[[Domain], None]) -> None:
    """Register the domain; its data is read later, in LibraryDomain.load."""
    register(LibraryDomain())
