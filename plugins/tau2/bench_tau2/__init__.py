"""bench-tau2: tau2-bench results files, exported from our runs and imported (re-scored offline) from theirs.

Adds `bench export tau2-results RUN` and `bench import tau2-results FILE` to the kernel's
`import`/`export` command groups.
"""

from __future__ import annotations

import json
from pathlib import Path

import click

import bench_kernel
from bench_kernel import ConfigError, Store, checked_plugins, db_option, echo_report, plugin_option, require_db
from bench_tau2.results import TASK_SOURCES, ImportSummary, export_run, import_results

__all__ = ["TASK_SOURCES", "ImportSummary", "export_run", "import_results"]


@click.command(name="tau2-results")
@click.argument("results_file", type=click.Path(exists=True))
@plugin_option
@click.option("--data-dir", type=click.Path(file_okay=False), help="Load the domain's data from this directory.")
@click.option("--judge", help="Judge for NL assertions (needs its model options in the environment).")
@click.option("--tasks", "task_source", type=click.Choice(TASK_SOURCES), default="embedded", show_default=True,
              help="Grade with the file's own tasks (as tau2 does) or the domain's current ones.")
@click.option("--run-id", help="Run id (default: derived from the file and these options, so importing again resumes).")
@db_option
def import_tau2(results_file: str, plugins: tuple[str, ...], data_dir: str | None, judge: str | None, task_source: str,
                run_id: str | None, db_path: str) -> None:
    """Re-score a tau2 results.json (or a results directory) offline: replay its tool calls on our domain and evaluate.

    A simulation bench cannot interpret is skipped with a warning naming it; the others are imported.
    """
    selected = checked_plugins(list(plugins) or None, lambda text: click.echo(text, err=True))
    summary = import_results(Path(results_file), db_path, plugins=selected, data_dir=data_dir, judge=judge,
                             tasks=task_source, run_id=run_id)
    for line in summary_lines(summary):
        click.echo(line, err=True)
    if summary.skipped and not summary.conversations:
        raise ConfigError(f"{results_file}: none of its simulations could be imported ({len(summary.skipped)} skipped, "
                          "named above)")
    echo_report(db_path, summary.run_id, "table")


def summary_lines(summary: ImportSummary) -> list[str]:
    """What an import tells its user: agreement, infrastructure errors, and tasks whose two versions differ."""
    lines = [f"imported {summary.conversations} conversations into run {summary.run_id} ({summary.domain}); "
             f"our reward equals theirs for {summary.agreeing} of {summary.compared}"
             + (f"; {len(summary.skipped)} skipped" if summary.skipped else "")]
    if summary.infrastructure_errors:
        lines.append(f"  {summary.infrastructure_errors} stored as infrastructure errors in the file: kept as such, not graded")
    if summary.unrewarded:
        lines.append(f"  {summary.unrewarded} with no reward in the file: graded, not compared")
    lines += [f"  differs: {line}" for line in summary.disagreeing]
    lines += [f"note: {note}" for note in summary.notes]
    lines += [f"warning: skipped {line}" for line in summary.skipped]
    if summary.differing_tasks:
        other = "current" if summary.tasks == "embedded" else "embedded"
        shown = ", ".join(summary.differing_tasks[:10]) + (", ..." if len(summary.differing_tasks) > 10 else "")
        lines.append(f"warning: {len(summary.differing_tasks)} task(s) differ between the file and domain {summary.domain!r} "
                     f"(graded with the {summary.tasks} version; --tasks {other} for the other): {shown}")
    return lines


@click.command(name="tau2-results")
@click.argument("run_id")
@click.option("--output", "-o", type=click.Path(dir_okay=False), help="Write here instead of stdout.")
@db_option
def export_tau2(run_id: str, output: str | None, db_path: str) -> None:
    """Write a run in tau2's results.json format."""
    require_db(db_path)
    store = Store(db_path)
    try:
        text = json.dumps(export_run(store, run_id), indent=2)
    finally:
        store.close()
    if output:
        Path(output).write_text(text + "\n", encoding="utf-8")
    else:
        click.echo(text)


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench import tau2-results` and `bench export tau2-results`."""
    for group, command in (("import", import_tau2), ("export", export_tau2)):
        target = cli.commands.get(group)
        if not isinstance(target, click.Group):
            raise ConfigError(f"the bench CLI has no {group!r} command group")
        target.add_command(command)
