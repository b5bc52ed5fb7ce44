"""bench-memory: ATOD's agentic memory evaluator (goal store + vector index + judge), online as a metric and offline as a command."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import click
from bench_atod import GoalsExtension
from sqlite_utils import Migrations

import bench_kernel
from bench_kernel import Metric, TaskExtension, db_option, parse_key_values, require_db

from .api import DialogueEvaluation, evaluate_conversation, evaluate_dialogues, make_judge
from .atod import AtodDialogue, evaluate_atod_file, read_atod
from .evaluator import MemoryEvaluator, TurnTrace
from .index import LexicalIndex, MiniLMIndex, RoleIndex, VectorIndex, make_index
from .judges import Candidate, LLMJudge, MemoryJudge, MemoryJudgeError, RulesJudge
from .metric import MemoryMetric
from .offline import OfflineSummary, evaluate_run
from .store import GoalStore, StoredGoal, migrations

__all__ = [
    "AtodDialogue",
    "Candidate",
    "DialogueEvaluation",
    "GoalStore",
    "LLMJudge",
    "LexicalIndex",
    "MemoryEvaluator",
    "MemoryJudge",
    "MemoryJudgeError",
    "MemoryMetric",
    "MiniLMIndex",
    "OfflineSummary",
    "RoleIndex",
    "RulesJudge",
    "StoredGoal",
    "TurnTrace",
    "VectorIndex",
    "evaluate_atod_file",
    "evaluate_conversation",
    "evaluate_dialogues",
    "evaluate_run",
    "make_index",
    "make_judge",
    "read_atod",
]


@click.group(name="memory")
def memory_group() -> None:
    """ATOD's agentic memory evaluator over stored runs."""


@memory_group.command(name="evaluate")
@click.argument("run_id")
@click.option(
    "--judge",
    type=click.Choice(["rules", "llm"]),
    default="rules",
    show_default=True,
    help="Decision steps: deterministic rules, or the memory-judge model role.",
)
@click.option(
    "--index",
    type=click.Choice(["lexical", "minilm", "embeddings"]),
    default="lexical",
    show_default=True,
    help="Vector index: hashed words and trigrams, MiniLM + faiss (extra bench-memory[vectors]), or the embeddings role.",
)
@click.option("--goals-file", type=click.Path(dir_okay=False, exists=True), help="ATOD annotated dialogues or a task file giving the goals.")
@click.option("--model-option", "model_options", multiple=True, help="ROLE.KEY=VALUE for the memory-judge and embeddings roles.")
@click.option("--arm", default="agent", show_default=True, help="Which arm's conversations to evaluate.")
@db_option
def evaluate_command(run_id: str, judge: str, index: str, goals_file: str | None, model_options: tuple[str, ...], arm: str, db_path: str) -> None:
    """Re-run the memory evaluator over RUN's stored conversations (no replay) and store its figures with the run."""
    require_db(db_path)
    summary = asyncio.run(
        evaluate_run(
            db_path,
            run_id,
            judge=judge,
            index=index,
            goals_file=Path(goals_file) if goals_file else None,
            model_options=parse_key_values(model_options, "ROLE.KEY=VALUE"),
            arm=arm,
        )
    )
    click.echo(f"memory evaluator: {summary.evaluated} conversations of run {summary.run_id} ({judge} judge, {index} index)")
    for name, value in summary.figures.items():
        click.echo(f"  {name}: {'-' if value is None else f'{value:.4f}'}")
    for task_id in summary.skipped:
        click.echo(f"  skipped {task_id}: no goals", err=True)
    for line in summary.errors:
        click.echo(f"  error {line}", err=True)


@memory_group.command(name="evaluate-file")
@click.argument("atod_file", type=click.Path(dir_okay=False, exists=True))
@click.option("--judge", type=click.Choice(["rules", "llm"]), default="rules", show_default=True)
@click.option("--index", type=click.Choice(["lexical", "minilm", "embeddings"]), default="lexical", show_default=True)
@click.option("--model-option", "model_options", multiple=True, help="ROLE.KEY=VALUE for the memory-judge and embeddings roles.")
@click.option("--limit", type=int, help="Only the first N dialogues.")
def evaluate_file_command(atod_file: str, judge: str, index: str, model_options: tuple[str, ...], limit: int | None) -> None:
    """Run the memory evaluator over ATOD's annotated dialogues (annotated_dialogues.json) and print its figures per complexity class."""
    figures, errors = asyncio.run(
        evaluate_atod_file(Path(atod_file), judge=judge, index=index, model_options=parse_key_values(model_options, "ROLE.KEY=VALUE"), limit=limit)
    )
    for group, values in figures.items():
        click.echo(f"{group}:")
        for name, value in values.items():
            click.echo(f"  {name}: {'-' if value is None else f'{value:.4f}'}")
    for line in errors:
        click.echo(f"  error {line}", err=True)


@bench_kernel.hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """The memory metric."""
    register(MemoryMetric())


@bench_kernel.hookimpl
def register_task_extensions(register: Callable[[TaskExtension], None]) -> None:
    """The task field `goals` the metric reads (bench-atod's, which bench-atod registers too): any domain's task file may carry it."""
    register(GoalsExtension())


@bench_kernel.hookimpl
def register_migrations(register: Callable[[Migrations], None]) -> None:
    """The goal store's tables."""
    register(migrations)


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench memory evaluate RUN`."""
    cli.add_command(memory_group)
