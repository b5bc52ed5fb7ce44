"""bench-atod: ATOD's multi-goal tasks (the `goals` field, goal status events), metrics (dGCR, NTC, MRA, PE, quality),
per-goal partial credit, and ATOD dialogue import.

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
    ModelConfig,
    ReportSection,
    RewardComponent,
    TaskExtension,
    checked_plugins,
    db_option,
    echo_report,
    model_option_configs,
    parse_key_values,
    plugin_option,
)

from .formulas import EdgeScores, GoalCounts, annotated_edges, dependency_f1, dependency_scores, goal_counts, pooled
from .goals import DECIDED, FINISHED, GOAL_STATUSES, Goal, GoalsExtension, GoalStatusChange, StatusEntry, goal_problems, task_goals
from .importer import ImportSummary, import_dialogues, read_dialogues
from .metrics import DialogueQuality, GoalCompletion, MemoryRecall, Proactivity, TurnQuality, TurnsToCompletion, all_metrics
from .reward import GoalCreditRule, GoalsComponent
from .summary import ComplexitySection

__all__ = [
    "DECIDED",
    "FINISHED",
    "GOAL_STATUSES",
    "ComplexitySection",
    "DialogueQuality",
    "EdgeScores",
    "Goal",
    "GoalCompletion",
    "GoalCounts",
    "GoalCreditRule",
    "GoalStatusChange",
    "GoalsComponent",
    "GoalsExtension",
    "ImportSummary",
    "MemoryRecall",
    "Proactivity",
    "StatusEntry",
    "TurnQuality",
    "TurnsToCompletion",
    "annotated_edges",
    "dependency_f1",
    "dependency_scores",
    "goal_counts",
    "goal_problems",
    "import_dialogues",
    "pooled",
    "read_dialogues",
    "task_goals",
]


@bench_kernel.hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """dgcr, ntc, mra, pe, turn_quality and dialogue_quality."""
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
def register_task_extensions(register: Callable[[TaskExtension], None]) -> None:
    """The multi-goal task field `goals` (ATOD's goal list); bench-services and bench-memory register the same one."""
    register(GoalsExtension())


@bench_kernel.hookimpl
def register_report_sections(register: Callable[[ReportSection], None]) -> None:
    """Every ATOD figure by complexity class, micro and per conversation, beside ATOD's published values."""
    register(ComplexitySection())


def model_configs(options: tuple[str, ...]) -> dict[str, ModelConfig]:
    """`ROLE.KEY=VALUE` options as model configurations by role; each role needs a model."""
    pairs = parse_key_values(options, "ROLE.KEY=VALUE")
    undotted = [key for key in pairs if "." not in key.strip(".")]
    if undotted:
        raise ConfigError(f"--model-option expects ROLE.KEY=VALUE (e.g. atod-judge.model=NAME), got {undotted[0]!r}")
    missing = sorted({key.partition(".")[0] for key in pairs} - {key.partition(".")[0] for key in pairs if key.endswith(".model")})
    if missing:
        raise ConfigError(f"the {missing[0]} role needs a model: --model-option {missing[0]}.model=NAME")
    return model_option_configs(pairs)


@click.command(name="atod-dialogues")
@click.argument("dialogues_file", type=click.Path(dir_okay=False, exists=True))
@plugin_option
@click.option(
    "--model-option",
    "model_options",
    multiple=True,
    metavar="ROLE.KEY=VALUE",
    help="A model role for the metrics, e.g. atod-judge.model=NAME (default: the deterministic judge).",
)
@click.option("--cache/--no-cache", default=False, show_default=True, help="Reuse identical model replies from the store.")
@click.option("--format", "fmt", type=click.Choice(["table", "markdown", "json", "csv"]), default="table", show_default=True, help="Report format.")
@db_option
def import_atod(dialogues_file: str, plugins: tuple[str, ...], model_options: tuple[str, ...], cache: bool, fmt: str, db_path: str) -> None:
    """Store ATOD's annotated dialogues (its released JSON, unchanged) as a run and score them with the loaded metrics."""
    selected = checked_plugins(list(plugins) or None, lambda text: click.echo(text, err=True))
    summary = import_dialogues(Path(dialogues_file), db_path, plugins=selected, models=model_configs(model_options), cache=cache)
    classes = ", ".join(f"{n} {c}" for c, n in sorted(summary.by_class.items()))
    click.echo(f"imported {summary.dialogues} dialogues ({classes}) into run {summary.run_id}", err=True)
    for problem in summary.problems:
        click.echo(f"  goal list: {problem}", err=True)
    echo_report(db_path, summary.run_id, fmt)


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench import atod-dialogues`."""
    target = cli.commands.get("import")
    if not isinstance(target, click.Group):
        raise ConfigError("the bench CLI has no 'import' command group")
    target.add_command(import_atod)
