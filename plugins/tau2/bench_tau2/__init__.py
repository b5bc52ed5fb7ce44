"""bench-tau2: tau2-bench results files, exported from our runs and imported (re-scored offline) from theirs,
and tau2's profile dumped from the user's own tau2 install.

Adds `bench export tau2-results RUN`, `bench export tau2-submission RUN... -o DIR` and `bench import tau2-results FILE`
to the kernel's `import`/`export` command groups, and the `bench tau2` group with `bench tau2 profile`.
"""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import click

import bench_kernel
from bench_kernel import ConfigError, Store, checked_plugins, db_option, echo_report, plugin_option, require_db
from bench_tau2.results import TASK_SOURCES, ImportSummary, export_run, import_results, write_results
from bench_tau2.submission import Exported, Submitter, export_submission
from bench_tau2.tau2_profile import WrittenProfile, make_tau2_profile

__all__ = [
    "TASK_SOURCES",
    "Exported",
    "ImportSummary",
    "Submitter",
    "WrittenProfile",
    "export_run",
    "export_submission",
    "import_results",
    "make_tau2_profile",
    "write_results",
]


@click.command(name="tau2-results")
@click.argument("results_file", type=click.Path(exists=True))
@plugin_option
@click.option("--data-dir", type=click.Path(file_okay=False), help="Load the domain's data from this directory.")
@click.option("--judge", help="Judge for NL assertions (needs its model options in the environment).")
@click.option(
    "--tasks",
    "task_source",
    type=click.Choice(TASK_SOURCES),
    default="embedded",
    show_default=True,
    help="Grade with the file's own tasks (as tau2 does) or the domain's current ones.",
)
@click.option("--run-id", help="Run id (default: derived from the file and these options, so importing again resumes).")
@db_option
def import_tau2(
    results_file: str, plugins: tuple[str, ...], data_dir: str | None, judge: str | None, task_source: str, run_id: str | None, db_path: str
) -> None:
    """Re-score a tau2 results.json (or a results directory) offline: replay its tool calls on our domain and evaluate.

    A simulation bench cannot interpret is skipped with a warning naming it; the others are imported.
    """
    selected = checked_plugins(list(plugins) or None, lambda text: click.echo(text, err=True))
    summary = import_results(Path(results_file), db_path, plugins=selected, data_dir=data_dir, judge=judge, tasks=task_source, run_id=run_id)
    for line in summary_lines(summary):
        click.echo(line, err=True)
    if summary.skipped and not summary.conversations:
        raise ConfigError(f"{results_file}: none of its simulations could be imported ({len(summary.skipped)} skipped, named above)")
    echo_report(db_path, summary.run_id, "table")


def summary_lines(summary: ImportSummary) -> list[str]:
    """What an import tells its user: agreement, infrastructure errors, and tasks whose two versions differ."""
    lines = [
        f"imported {summary.conversations} conversations into run {summary.run_id} ({summary.domain}); "
        f"our reward equals theirs for {summary.agreeing} of {summary.compared}" + (f"; {len(summary.skipped)} skipped" if summary.skipped else "")
    ]
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
        lines.append(
            f"warning: {len(summary.differing_tasks)} task(s) differ between the file and domain {summary.domain!r} "
            f"in {', '.join(summary.differing_fields)} "
            f"(graded with the {summary.tasks} version; --tasks {other} for the other): {shown}"
        )
    return lines


@click.command(name="tau2-results")
@click.argument("run_id")
@click.option("--output", "-o", type=click.Path(), help="Write here instead of stdout (with --layout dir: a directory or its results.json).")
@click.option(
    "--layout",
    type=click.Choice(["json", "dir"]),
    default="json",
    show_default=True,
    help="One JSON file, or tau2's dir format (results.json + simulations/<id>.json, as tau2 writes voice runs).",
)
@db_option
def export_tau2(run_id: str, output: str | None, layout: str, db_path: str) -> None:
    """Write a run in tau2's results format (a full-duplex run as tau2's voice simulations: ticks, mode full_duplex)."""
    require_db(db_path)
    if layout == "dir" and not output:
        raise ConfigError("--layout dir writes files: name the directory with --output")
    store = Store(db_path)
    try:
        document = export_run(store, run_id)
    finally:
        store.close()
    if output:
        written = write_results(document, Path(output), layout)
        if layout == "dir":
            click.echo(f"wrote {written[0]} and {len(written) - 1} simulation file(s) in {written[0].parent / 'simulations'}")
    else:
        click.echo(json.dumps(document, indent=2))


@click.command(name="tau2-submission")
@click.argument("run_ids", nargs=-1, required=True, metavar="RUN...")
@click.option(
    "--output",
    "-o",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="The submission directory to write (submission.json and trajectories/).",
)
@click.option("--model-organization", required=True, help="Who developed the model.")
@click.option("--model-name", help="The model's name on the leaderboard (default: the runs' agent model).")
@click.option("--submitting-organization", help="Who ran the evaluation (default: the model organization).")
@click.option("--email", help="Contact email for questions about the submission.")
@click.option("--contact-name", help="The submitter's name.")
@click.option("--github", help="The submitter's GitHub user name.")
@click.option("--reasoning-effort", help="The reasoning effort the model ran with (high, low, none, ...).")
@click.option(
    "--reference",
    "references",
    multiple=True,
    metavar="TITLE=URL",
    help="A link to a paper, repository or post (repeatable); custom submissions should link their method.",
)
@click.option("--notes", help="Methodology notes added after bench's own.")
@click.option("--new", "is_new", is_flag=True, help="Ask the leaderboard to highlight the model as new.")
@click.option("--date", "submission_date", type=click.DateTime(["%Y-%m-%d"]), help="The submission date (default today).")
@click.option("--force", is_flag=True, help="Replace a submission written into the directory before.")
@db_option
def export_submission_command(
    run_ids: tuple[str, ...],
    output: Path,
    model_organization: str,
    model_name: str | None,
    submitting_organization: str | None,
    email: str | None,
    contact_name: str | None,
    github: str | None,
    reasoning_effort: str | None,
    references: tuple[str, ...],
    notes: str | None,
    is_new: bool,
    submission_date: datetime.datetime | None,
    force: bool,
    db_path: str,
) -> None:
    """Write tau2-bench's leaderboard submission (submission.json and trajectories) from one run per domain.

    Refuses what the leaderboard refuses (task filters, missing tasks or trials, mixed models, incomplete runs), naming
    each reason; the methodology is "standard" only with tau2's profile, data and scaffold, else "custom" with the
    differences named. Check the directory with tau2's own `tau2 submit validate DIR`.
    """
    require_db(db_path)
    pairs = [r.partition("=") for r in references]
    if any(not title or not sep or not url for title, sep, url in pairs):
        raise ConfigError("--reference takes TITLE=URL")
    submitter = Submitter(
        model_name=model_name,
        model_organization=model_organization,
        submitting_organization=submitting_organization,
        email=email,
        contact_name=contact_name,
        github=github,
        reasoning_effort=reasoning_effort,
        references=[(t, u) for t, _, u in pairs],
        notes=notes,
        is_new=is_new,
        date=submission_date.date() if submission_date else None,
    )
    store = Store(db_path)
    try:
        exported = export_submission(store, run_ids, output, submitter, force=force)
    finally:
        store.close()
    for line in submission_lines(exported):
        click.echo(line, err=True)


def submission_lines(exported: Exported) -> list[str]:
    """What `bench export tau2-submission` tells its user: where, which type and why, the figures, what to do next."""
    submission = exported.submission
    lines = [
        f"wrote {exported.directory}/submission.json and {len(exported.files)} trajectory file(s): "
        f"{submission['submission_type']} submission of {submission['model_name']}"
    ]
    lines += [f"  custom because: {change}" for change in exported.changes]
    for domain, results in submission["results"].items():
        figures = ", ".join(f"pass^{k} {results[f'pass_{k}']:.2f}%" for k in range(1, 5) if f"pass_{k}" in results)
        lines.append(f"  {domain}: {figures}" + (f", cost {results['cost']:.4f} USD per conversation" if "cost" in results else ""))
    lines += [f"note: {note}" for note in exported.notes]
    lines.append(f"check it with tau2's own validator: tau2 submit validate {exported.directory}")
    return lines


@click.group(name="tau2")
def tau2_group() -> None:
    """tau2-bench's own commands."""


@tau2_group.command(name="profile")
@click.option(
    "--tau2-python", "python", required=True, metavar="PY", help="A Python where `import tau2` works (your tau2 install's); the dump runs inside it."
)
@click.option(
    "--output", "-o", type=click.Path(file_okay=False, path_type=Path), required=True, help="The profile directory to write (docs/profiles.md)."
)
@click.option(
    "--data-dir",
    type=click.Path(file_okay=False, exists=True),
    help="tau2's data directory (TAU2_DATA_DIR for the dump: user-simulator guidelines, domain data); default: "
    "TAU2_DATA_DIR, else the one tau2 finds, else data/ of the checkout pip installed tau2 from.",
)
@click.option("--domain", "domains", multiple=True, help="A domain of tau2's registry (repeatable; default: every domain whose environment builds).")
@click.option("--user-simulator", help="The registry name of the tau2 user simulator whose prompt to take (default: tau2's UserSimulator).")
@click.option("--name", help="The profile's name (default: tau2).")
@click.option("--force", is_flag=True, help="Overwrite the profile in a non-empty directory.")
def profile_tau2(
    python: str, output: Path, data_dir: str | None, domains: tuple[str, ...], user_simulator: str | None, name: str | None, force: bool
) -> None:
    """Write tau2-bench's profile (prompts, tool schemas, sampling, seeds, greeting) from your tau2 install."""
    written = make_tau2_profile(python, output, data_dir=data_dir, domains=domains, name=name, force=force, user_simulator=user_simulator)
    for line in profile_lines(written):
        click.echo(line, err=True)


def profile_lines(written: WrittenProfile) -> list[str]:
    """What `bench tau2 profile` tells its user: where, which domains and tools, which domains were skipped."""
    shown = ", ".join(
        f"{domain} ({agent} agent tools, " + ("no user tools" if user is None else f"{user} user tools") + ")"
        for domain, (agent, user) in written.tools.items()
    )
    lines = [f"wrote profile {written.name!r} (tau2 {written.version}) to {written.directory}: {shown}"]
    if written.data_dir:
        lines.append(f"  tau2's data read from {written.data_dir}")
    lines += [f"  skipped domain {domain!r}: {error}" for domain, error in written.skipped.items()]
    return lines


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench import tau2-results`, `bench export tau2-results`, `bench export tau2-submission` and the `bench tau2` group."""
    for group, command in (("import", import_tau2), ("export", export_tau2), ("export", export_submission_command)):
        target = cli.commands.get(group)
        if not isinstance(target, click.Group):
            raise ConfigError(f"the bench CLI has no {group!r} command group")
        target.add_command(command)
    existing = cli.commands.get("tau2")
    if isinstance(existing, click.Group):  # another plugin made the group first: join it
        existing.add_command(profile_tau2)
    else:
        cli.add_command(tau2_group)
