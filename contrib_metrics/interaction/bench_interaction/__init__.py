"""bench-interaction: turn-taking figures of full-duplex conversations (tau2's interaction panel and bench's own)."""

from __future__ import annotations

from collections.abc import Callable

import click

from bench_kernel import Metric, ReportSection, hookimpl

from .metric import Interaction, InteractionSection
from .timeline_metrics import analyse, conversation_figures, load_timeline, run_figures

__all__ = [
    "Interaction",
    "InteractionSection",
    "analyse",
    "conversation_figures",
    "load_timeline",
    "register_commands",
    "register_metrics",
    "register_report_sections",
    "run_figures",
]


@hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """The interaction metric (it values only conversations that have a duplex.timeline event)."""
    register(Interaction())


@hookimpl
def register_report_sections(register: Callable[[ReportSection], None]) -> None:
    """The interaction section: the run's panel, bench's figures, one row per conversation."""
    register(InteractionSection())


@hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench interaction-plots RUN --out DIR`: the latency histogram and a timeline strip per conversation."""
    from .commands import interaction_plots  # the CLI's modules load only when the CLI runs

    cli.add_command(interaction_plots)
