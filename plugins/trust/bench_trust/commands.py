"""`bench audit`, `bench plan`, `bench rescore`: command bodies that parse options and call the library (imported when they run)."""

from __future__ import annotations

from typing import Any

import click

from bench_kernel import db_option, domain_options, format_option, plugin_option

MAX_SHOWN = 10
"""Notes of one kind a command prints at most."""


def add_commands(cli: click.Group) -> None:
    """Add `bench audit`, `bench plan` and `bench rescore` to the root group."""
    cli.add_command(audit_command)
    cli.add_command(plan_command)
    cli.add_command(rescore_command)


@click.command(name="audit")
@plugin_option
@domain_options
@click.option("--concurrency", type=click.IntRange(1), default=32, show_default=True, help="Audit conversations in flight.")
@click.option("--no-cache", is_flag=True, help="Audit every task anew (the new audits replace the stored ones).")
@db_option
@format_option("table", "json", "markdown")
def audit_command(plugins: tuple[str, ...], fmt: str, db_path: str, concurrency: int, no_cache: bool, **options: Any) -> None:
    """Audit a domain's tasks: the oracle's ceiling, the do-nothing, talk-only and refuse floors, and flags (docs/audit.md)."""
    from bench_kernel import RunConfig, checked_plugins, collect, load_domain, open_store

    from .audit.auditing import audit_domain
    from .audit.render import render_audit

    # the floors are this plugin's agents: it loads with whatever --plugin names, as with a run
    registry = collect(checked_plugins(list(plugins) or None, lambda text: click.echo(text, err=True)))
    data = load_domain(registry, RunConfig(**options))  # the domain options, as `bench check` and `bench run` read them
    store = open_store(db_path, registry.migrations)
    try:
        document = audit_domain(registry, data, data.tasks, store, concurrency=concurrency, reuse=not no_cache)
    finally:
        store.close()
    click.echo(render_audit(document, fmt), nl=False)


@click.command(name="plan")
@click.option("--baseline", "run_id", required=True, help="The stored run whose per-task outcomes and ledger size the plan.")
@db_option
@click.option("--delta", type=float, required=True, help="The pass^1 difference to detect, between 0 and 1 (0.05: five points).")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="Level of the two-sided test.")
@click.option("--power", type=float, default=0.8, show_default=True, help="Chance of detecting a true difference of --delta.")
@click.option("--max-trials", type=int, default=16, show_default=True, help="Most trials per task before asking for more tasks.")
@format_option("table", "json")
def plan_command(run_id: str, db_path: str, delta: float, alpha: float, power: float, max_trials: int, fmt: str) -> None:
    """How many trials (or tasks) two runs need to detect a pass^1 difference of --delta, and what they cost (docs/noise.md)."""
    from bench_kernel import open_store_for_reading, require_db

    from .plan import build_plan, render_plan

    require_db(db_path)
    store = open_store_for_reading(db_path)
    try:
        plan = build_plan(store, run_id, delta, alpha=alpha, power=power, max_trials=max_trials)
    finally:
        store.close()
    click.echo(render_plan(plan, fmt), nl=False)


@click.command(name="rescore")
@click.argument("run_id")
@db_option
@format_option("table", "json", "markdown", "csv", "none")
@click.option("--run-id", "new_run_id", help="Id of the new run (default: RUN_ID-rescore-N, the first free N).")
@click.option("--rejudge", is_flag=True, help="Judge the NL assertions again with the run's judge (default: keep its verdicts).")
@click.option("--plugin", "-p", "plugins", multiple=True, help="Load only this plugin (repeatable); no:NAME blocks one. Default: the run's.")
@click.option("--cache", is_flag=True, help="Answer repeated model requests (metrics', the judge's) from the SQLite cache.")
@click.option("--concurrency", type=click.IntRange(1), default=32, show_default=True, help="Conversations scored at once.")
def rescore_command(
    run_id: str, db_path: str, fmt: str, new_run_id: str | None, rejudge: bool, plugins: tuple[str, ...], cache: bool, concurrency: int
) -> None:
    """Score a stored run's conversations again with the metrics and reward components installed now, into a new run
    linked to it: nothing is played again, no agent or user model is called (docs/results.md)."""
    from bench_kernel import checked_plugins, echo_report, require_db

    from .rescore import RescoreOptions, rescore

    require_db(db_path)
    options = RescoreOptions(run_id=new_run_id, rejudge=rejudge, plugins=list(plugins) or None, cache=cache, concurrency=concurrency)
    summary = rescore(run_id, db_path, options, load_plugins=lambda selected: checked_plugins(selected, lambda text: click.echo(text, err=True)))
    click.echo(
        f"run {summary.run_id}: {summary.rescored} conversations of run {summary.source} scored again, none played "
        f"({summary.conversations - summary.rescored} infrastructure errors copied), {len(summary.changed)} rewards "
        f"or components changed, {summary.rejudged} judged again ({db_path})",
        err=True,
    )
    for mismatch in summary.replay_mismatches[:MAX_SHOWN]:
        click.echo(f"note: a replayed tool call gave another result, the final state may differ: {mismatch}", err=True)
    if fmt != "none":
        echo_report(db_path, summary.run_id, fmt)
