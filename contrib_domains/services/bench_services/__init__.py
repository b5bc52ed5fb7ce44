"""bench-services: a multi-service domain (SGD-shaped) with asynchronous bookings, multi-goal tasks, their generator and a planned user."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench_atod import GoalsExtension

from bench_kernel import Domain, TaskExtension, UserSimulator, hookimpl

from .domain import ServicesDomain
from .plan import PlanExtension
from .user import PlannedUser

__all__ = ["PlannedUser", "ServicesDomain", "register_commands", "register_domains", "register_task_extensions", "register_user_simulators"]


@hookimpl
def register_domains(register: Callable[[Domain], None]) -> None:
    """Register the services domain; its data is read later, in ServicesDomain.load."""
    register(ServicesDomain(name="services"))


@hookimpl
def register_task_extensions(register: Callable[[TaskExtension], None]) -> None:
    """The task fields `goals` (bench-atod's, which bench-atod and bench-memory register too) and `plan`: the user's moves."""
    register(GoalsExtension())
    register(PlanExtension())


@hookimpl
def register_user_simulators(register: Callable[[UserSimulator], None]) -> None:
    """The planned user (`--user planned`)."""
    register(PlannedUser())


@hookimpl
def register_commands(cli: Any) -> None:
    """Add `bench services generate`, which writes the default suite (or another seed's) to a directory."""
    from .commands import services_group

    cli.add_command(services_group)
