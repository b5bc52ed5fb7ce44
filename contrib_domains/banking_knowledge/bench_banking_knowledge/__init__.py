"""bench-banking-knowledge: tau2-bench's banking_knowledge domain for bench, exact to its DB hash, with a suite of our own."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Domain, hookimpl

from .domain import BankingKnowledgeDomain

__all__ = ["BankingKnowledgeDomain", "register_domains"]


@hookimpl
def register_domains(register: Callable[[Domain], None]) -> None:
    """Register the domain; its data is read later, in BankingKnowledgeDomain.load."""
    register(BankingKnowledgeDomain(name="banking_knowledge"))
