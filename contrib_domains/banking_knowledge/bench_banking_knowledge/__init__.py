"""bench-banking-knowledge: tau2-bench's banking_knowledge domain for bench, exact to its DB hash, with a suite of our own."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Domain, UserSimulator, hookimpl

from .domain import BankingKnowledgeDomain
from .users import BankingKnowledgeScriptedUser

__all__ = ["BankingKnowledgeDomain", "BankingKnowledgeScriptedUser", "register_domains", "register_user_simulators"]


@hookimpl
def register_domains(register: Callable[[Domain], None]) -> None:
    """Register the domain; its data is read later, in BankingKnowledgeDomain.load."""
    register(BankingKnowledgeDomain(name="banking_knowledge"))


@hookimpl
def register_user_simulators(register: Callable[[UserSimulator], None]) -> None:
    """Register the domain's scripted user (what runs asking for `scripted` use on this domain's tasks)."""
    register(BankingKnowledgeScriptedUser())
