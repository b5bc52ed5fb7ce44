"""bench-atod: ATOD's multi-goal metrics (dGCR, NTC, MRA, PE, quality), per-goal partial credit, and ATOD dialogue import.

Adds `bench import atod-dialogues FILE` to the kernel's `import` command group.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

import bench_kernel
from bench_kernel import (
    CombinationRule,
    ConfigError,
    Metric,
    ReportSection,
    RewardComponent,
    checked_plugins,
    db_option,
    echo_report,
    plugin_option,
)

from .formulas import EdgeScores, GoalCounts, annotated_edges, dependency_f1, dependency_scores, goal_counts, pooled
from .importer import ImportSummary, import_dialogues, read_dialogues
from .metrics import GoalCompletion, MemoryRecall, Proactivity, Quality, TurnsToCompletion, all_metrics
from .reward import GoalCreditRule, GoalsComponent
from .summary import ComplexitySection

__all__ = [
    "ComplexitySection", "EdgeScores", "GoalCompletion", "GoalCounts", "GoalCreditRule", "GoalsComponent", "ImportSummary", "MemoryRecall",
    "Proactivity", "Quality", "TurnsToCompletion", "annotated_edges", "dependency_f1", "dependency_scores", "goal_counts",
    "import_dialogues", "pooled", "read_dialogues",
]


@bench_kernel.hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """dgcr, ntc, mra, pe and quality."""
    for metric in all_metrics():
        register(metric)


@bench_kernel.hookimpl
def register_reward_components(register: Callable[[RewardComponent], None]) -> None:
    """GOALS: one check per task goal, met when it ends completed."""
    register(GoalsComponent())


@bench_kernel.hookimpl
def register_combination_rules(register: Callable[[CombinationRule], None]) -> None:
    """goal-credit: the share of a task's goals completed."""
    register(GoalCreditRule())


@bench_kernel.hookimpl
def register_report_sections(register: Callable[[ReportSection], None]) -> None:
    """Every ATOD figure by complexity class, micro and per conversation, beside ATOD's published values."""
    register(ComplexitySection())


@click.command(name="atod-dialogues")
@click.argument("dialogues_file", type=click.Path(dir_okay=False, exists=True))
@plugin_option
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json", "csv"]), default="table", show_default=True,
              help="Report format.")
@db_option
def import_atod(dialogues_file: str, plugins: tuple[str, ...], fmt: str, db_path: str) -> None:
    """Store ATOD's annotated dialogues (its released JSON, unchanged) as a run and score them with the loaded metrics."""
    selected = checked_plugins(list(plugins) or None, lambda text: click.echo(text, err=True))
    summary = import_dialogues(Path(dialogues_file), db_path, plugins=selected)
    classes = ", ".join(f"{n} {c}" for c, n in sorted(summary.by_class.items()))
    click.echo(f"imported {summary.dialogues} dialogues ({classes}) into run {summary.run_id}", err=True)
    echo_report(db_path, summary.run_id, fmt)


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench import atod-dialogues`."""
    target = cli.commands.get("import")
    if not isinstance(target, click.Group):
        raise ConfigError("the bench CLI has no 'import' command group")
    target.add_command(import_atod)
