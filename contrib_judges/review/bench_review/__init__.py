"""bench-review: a reviewer model labels a run's conversations with the agent's and the user simulator's errors.

Adds `bench review RUN` (the `register_commands` hook), its tables (`register_migrations`, `bench_review.store`) and
the `review` report section (`register_report_sections`, `bench_review.section`). The rubric, categories and prompt
are in `bench_review.rubric`, the review of a stored run in `bench_review.reviewing` (`review_run`); README.md and
docs/review.md describe them. Registration imports none of the work's modules, so `bench --help` stays quick.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

import bench_kernel
from bench_kernel import ConfigError, db_option, echo_report, model_option_configs, parse_key_values, price_overrides, require_db

from .rubric import AGENT_CATEGORIES, CATEGORIES, MODES, SEVERITIES, USER_CATEGORIES, Finding, Review, ReviewReplyError, parse_review

if TYPE_CHECKING:
    from .reviewing import ReviewSummary

__all__ = [
    "AGENT_CATEGORIES",
    "CATEGORIES",
    "MODES",
    "SEVERITIES",
    "USER_CATEGORIES",
    "Finding",
    "Review",
    "ReviewReplyError",
    "parse_review",
]

ROLE, SECOND_ROLE = "reviewer", "reviewer-2"
ROLE_FLAGS = ("model", "backend", "base_url", "api_key_env", "sampling")


def role_options(func: Callable[..., object]) -> Callable[..., object]:
    """--reviewer-model, -backend, -base-url, -api-key-env and -sampling (BENCH_REVIEWER_* too), as the kernel's roles have."""
    for flag in reversed(ROLE_FLAGS):
        name = flag.replace("_", "-")
        func = click.option(
            f"--reviewer-{name}",
            f"reviewer_{flag}",
            envvar=f"BENCH_REVIEWER_{flag.upper()}",
            help=f"{flag.replace('_', ' ').capitalize()} of the first reviewer role" + (" (a JSON object)." if flag == "sampling" else "."),
        )(func)
    return func


def reviewer_models(role: str, flags: dict[str, str | None], model_options: tuple[str, ...]) -> dict[str, bench_kernel.ModelConfig]:
    """The model of every role: `--model-option ROLE.KEY=VALUE`, with the --reviewer-* flags for the first role on top."""
    pairs = parse_key_values(model_options, "ROLE.KEY=VALUE")
    for flag, value in flags.items():
        if value is not None:
            pairs[f"{role}.{flag}"] = parse_key_values([f"v={value}"])["v"] if flag == "sampling" else value
    return model_option_configs(pairs)


@click.command(name="review")
@click.argument("run_id")
@click.option("--failed-only", is_flag=True, help="Review only the conversations that failed their task.")
@click.option("--user-only", is_flag=True, help="Check only whether the simulated user kept to its scenario.")
@role_options
@click.option(
    "--model-option",
    "model_options",
    multiple=True,
    metavar="ROLE.KEY=VALUE",
    help=f"Any role's model setting, e.g. {SECOND_ROLE}.model=NAME for a second reviewer (repeatable).",
)
@click.option("--role", "role", default=ROLE, show_default=True, help="The first reviewer's model role.")
@click.option(
    "--second-role",
    default=SECOND_ROLE,
    show_default=True,
    help="A second reviewer's role, used when it has a model: every conversation is reviewed twice and the report gives their agreement.",
)
@click.option("--arm", default="agent", show_default=True, help="Which arm's conversations to review.")
@click.option("--task-id", "task_ids", multiple=True, help="Review only the conversations of this task (repeatable).")
@click.option("--limit", type=click.IntRange(1), help="Review at most N conversations not yet reviewed (the first in task order).")
@click.option("--redo", is_flag=True, help="Review again conversations already reviewed (their rows are replaced).")
@click.option("--cache/--no-cache", default=False, show_default=True, help="Answer repeated requests from the store.")
@click.option("--max-cost", type=float, help="Stop once the run's reviews have cost this much (USD, every resume counted).")
@click.option("--price", "prices", multiple=True, help="MODEL=PROMPT,COMPLETION in USD per million tokens (repeatable).")
@click.option("--concurrency", type=click.IntRange(1, 1024), default=8, show_default=True, help="Reviews in flight.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "json", "csv"]),
    default="table",
    show_default=True,
    help="Format of the review section printed at the end.",
)
@db_option
def review_command(
    run_id: str,
    failed_only: bool,
    user_only: bool,
    model_options: tuple[str, ...],
    role: str,
    second_role: str,
    arm: str,
    redo: bool,
    cache: bool,
    max_cost: float | None,
    prices: tuple[str, ...],
    concurrency: int,
    fmt: str,
    db_path: str,
    task_ids: tuple[str, ...],
    limit: int | None,
    **flags: str | None,
) -> None:
    """Label RUN's conversations with the agent's and the user simulator's errors (a reviewer model); resumable.

    Exits 1 when a review failed (a model error or a reply that is not a review): run it again to retry those.
    """
    from .reviewing import ReviewPlan, review_run

    require_db(db_path)
    models = reviewer_models(role, {k.removeprefix("reviewer_"): v for k, v in flags.items()}, model_options)
    roles = (role, second_role) if second_role in models and second_role != role else (role,)
    plan = ReviewPlan(
        run_id=run_id,
        roles=roles,
        models=models,
        mode="user-only" if user_only else "full",
        failed_only=failed_only,
        arm=arm,
        redo=redo,
        cache=cache,
        max_cost=max_cost,
        prices=price_overrides(prices),
        concurrency=concurrency,
        task_ids=task_ids,
        limit=limit,
    )
    summary = review_run(db_path, plan)
    for line in summary_lines(summary):
        click.echo(line, err=True)
    echo_report(db_path, run_id, fmt, section="review")
    if summary.stopped:
        raise ConfigError(f"review stopped: {summary.stopped}; run the same command again (with a higher --max-cost) to go on")
    if summary.errors:
        raise ConfigError(f"{len(summary.errors)} review(s) failed (recorded; run the same command again to retry them)")


def summary_lines(summary: ReviewSummary) -> list[str]:
    """What `bench review` tells its user on stderr."""
    lines = [
        f"reviewed {summary.reviewed} of {summary.selected} conversation(s) of run {summary.run_id} "
        f"({summary.mode}; reviewer{'s' if len(summary.roles) > 1 else ''} {', '.join(summary.roles)}); "
        f"{summary.skipped} review(s) already stored; {len(summary.errors)} failed (recorded, retried next time)"
    ]
    lines += [f"  failed: {line}" for line in grouped_errors(summary.errors)[:MAX_ERROR_LINES]]
    if len(grouped_errors(summary.errors)) > MAX_ERROR_LINES:
        lines.append(f"  ... and {len(grouped_errors(summary.errors)) - MAX_ERROR_LINES} more (the section lists them)")
    if summary.attributed:
        lines.append(f"attribution: {summary.attributed} failed conversation(s) relabelled from the reviews (docs/attribution.md)")
    lines += [f"note: {note}" for note in summary.notes]
    return lines


MAX_ERROR_LINES = 20


def grouped_errors(errors: list[str]) -> list[str]:
    """One line per distinct error, with how many reviews it failed and the first conversation it failed, most frequent first.

    Each error reads "CONVERSATION (ROLE): MESSAGE"; a message repeated across conversations (a refused model, an
    endpoint down) is one line.
    """
    by_message: dict[str, list[str]] = {}
    for error in errors:
        where, _, message = error.partition("): ")
        by_message.setdefault(message or error, []).append(f"{where})" if message else "")
    ordered = sorted(by_message.items(), key=lambda item: -len(item[1]))
    return [
        f"{message} ({len(where)} reviews, e.g. {where[0]})" if len(where) > 1 else f"{where[0]}: {message}".lstrip(": ")
        for message, where in ordered
    ]


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench review RUN`."""
    cli.add_command(review_command)


@bench_kernel.hookimpl
def register_migrations(register: Callable[[Any], None]) -> None:
    """The reviews and their findings."""
    from .store import migrations

    register(migrations)


@bench_kernel.hookimpl
def register_report_sections(register: Callable[[bench_kernel.ReportSection], None]) -> None:
    """The `review` section."""
    from .section import ReviewSection

    register(ReviewSection())
