"""bench-trust: can a run's numbers be trusted? Task audits, failure attribution, noise and re-scoring (docs/audit.md,
docs/attribution.md, docs/noise.md, docs/results.md).

It registers the attribution rules (an attributor), `--exclude-flagged` (a task transform owning that run setting), the
talk-only and refuse floors, the noise, validity and attribution cards of every report and compare, and the commands
`bench audit`, `bench plan` and `bench rescore`. It loads with every run whatever `--plugin` names (entry-point group `bench.always`).
Importing it imports none of the work's modules (each hook imports what it registers): `bench --help` stays quick.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

import bench_kernel

if TYPE_CHECKING:
    from bench_kernel import Agent, Attributor, ReportSection, TaskTransform


@bench_kernel.hookimpl
def register_attributors(register: Callable[[Attributor], None]) -> None:
    """The attribution rules."""
    from .attributor import RulesAttributor

    register(RulesAttributor())


@bench_kernel.hookimpl
def register_task_transforms(register: Callable[[TaskTransform], None]) -> None:
    """`bench run --exclude-flagged`, and the static flags every run keeps for its validity card."""
    from .audit.runs import ExcludeFlagged

    register(ExcludeFlagged())


@bench_kernel.hookimpl
def register_agents(register: Callable[[Agent], None]) -> None:
    """The audit's floors beside the kernel's do-nothing: talk-only and refuse."""
    from .participants import floor_agents

    for agent in floor_agents():
        register(agent)


@bench_kernel.hookimpl
def register_report_sections(register: Callable[[ReportSection], None]) -> None:
    """The noise, validity and attribution cards."""
    from .cards import TrustCards

    register(TrustCards())


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench audit`, `bench plan` and `bench rescore`."""
    from .commands import add_commands

    add_commands(cli)
