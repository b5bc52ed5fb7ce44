"""The `bench` command line: command bodies parse options and call the library."""

from __future__ import annotations

import contextlib
import gc
import json
import os
import shlex
import signal
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from bench_kernel.errors import BenchError, ConfigError, DeferredDataError
from bench_kernel.logs import configure_logging
from bench_kernel.modelhub.hub import ROLES
from bench_kernel.plugins import apply_commands, collect, get_plugin_manager, with_backend_plugins
from bench_kernel.redact import redact
from bench_kernel.run.config import DOMAIN_SETTINGS, MODEL_OPTIONS, RUN_OPTIONS, RunOption
from bench_kernel.run.progress import MODES as PROGRESS_MODES
from bench_kernel.scaffold import KINDS, new_help

if TYPE_CHECKING:
    from bench_kernel.store.store import Store

# Command bodies import what they use (runner, store, report, ...): `bench run` then loads the run's modules only,
# and `bench --help` or a plugin command none of them (docs/throughput.md, "Start-up").

DEFAULT_DB = "bench.db"
PLUGIN_COMMANDS = {"audit": "bench-trust", "plan": "bench-trust", "rescore": "bench-trust", "compare": "bench-report", "profile": "bench-profiles"}
"""Commands first-party plugins add: naming one whose plugin is missing says which distribution adds it."""


class BenchGroup(click.Group):
    """A click group that turns BenchError into one clean line (BENCH_DEBUG=1 keeps the traceback)."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None, list[str]]:
        """The command, or for a first-party plugin's command whose plugin is missing, which distribution adds it."""
        name = args[0] if args else ""
        if name in PLUGIN_COMMANDS and self.get_command(ctx, name) is None:
            raise click.UsageError(
                f"`bench {name}` comes from the plugin {PLUGIN_COMMANDS[name]}, which is not installed "
                f"(pip install {PLUGIN_COMMANDS[name]}) or failed to load (`bench plugins` says why)",
                ctx,
            )
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command, translating bench errors."""
        try:
            try:
                return super().invoke(ctx)
            except sqlite3.Error as exc:  # a write that failed mid-run (disk full, file made read-only)
                from bench_kernel.store.store import store_error

                raise store_error(str(ctx.meta.get("bench.db", DEFAULT_DB)), exc) from exc
        except (BenchError, DeferredDataError) as exc:
            # DeferredDataError: a domain's data read on first use, outside a run (a run raises exc.error)
            if os.environ.get("BENCH_DEBUG"):
                raise
            raise click.ClickException(redact(str(exc.error if isinstance(exc, DeferredDataError) else exc))) from exc


def _remember_db(ctx: click.Context, param: click.Parameter, value: str) -> str:
    ctx.meta["bench.db"] = value  # meta is shared by nested contexts: the group reads it to name the file in store errors
    return value


@click.group(cls=BenchGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="bench-kernel")
def cli() -> None:
    """bench: evaluate tool-using conversational agents with plugins."""


db_option = click.option(
    "--db",
    "db_path",
    type=click.Path(dir_okay=False),
    envvar="BENCH_DB",
    default=DEFAULT_DB,
    show_default=True,
    callback=_remember_db,
    help="SQLite results database.",
)
"""The --db option shared by commands that read or write the store."""


def run_option(opt: RunOption) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The click option of a run option as RunConfig declares it (`bench_kernel.run.config.RUN_OPTIONS`)."""
    kind = opt.type
    if kind is None and opt.at_least is not None:
        kind = click.IntRange(opt.at_least)
    return click.option(
        *opt.flags,
        opt.dest,
        type=kind,
        multiple=opt.multiple,
        is_flag=opt.flag,
        envvar=opt.envvar,
        default=opt.default,
        show_default=opt.default is not None,
        callback=_parsed(opt.parse) if opt.parse else None,
        help=opt.help,
    )


def _parsed(parse: Callable[[Any], Any]) -> Callable[[click.Context, click.Parameter, Any], Any]:
    """A click callback parsing an option's texts, a ConfigError naming the option (None when it is not given)."""

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if not value:
            return None
        try:
            return parse(value)
        except ConfigError as exc:
            raise click.BadParameter(str(exc)) from exc

    return callback


def run_options(*keys: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """The run options setting these keys (all of them when none is named), in RunConfig's order."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        for opt in reversed([opt for opt in RUN_OPTIONS if not keys or opt.key in keys]):
            func = run_option(opt)(func)
            if opt.key == "models" and not keys:  # the --ROLE-KEY options before --model-option
                func = model_options(func)
        return func

    return decorate


plugin_option = run_options("plugins")
"""--plugin NAME (repeatable; pytest -p semantics: names only these, no:NAME blocks one)."""
domain_options = run_options(*DOMAIN_SETTINGS)
"""Options that choose a domain and its task data."""


def format_option(*choices: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--format with the given choices, the first being the default."""
    return click.option("--format", "fmt", type=click.Choice(choices), default=choices[0], show_default=True)


def report_format_option(*usual: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--format naming a report format, checked once plugins are loaded (they add formats); the help lists the usual ones."""
    return click.option("--format", "fmt", metavar=f"[{'|'.join(usual)}]", default=usual[0], show_default=True)


def model_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--ROLE-model, -backend, -base-url, -api-key-env and -sampling for the agent, user, judge and embeddings roles."""
    for role in reversed(ROLES):
        for key, help_text in reversed(MODEL_OPTIONS.items()):
            func = click.option(
                f"--{role}-{key.replace('_', '-')}",
                envvar=f"BENCH_{role}_{key}".upper(),
                callback=_json_object if key == "sampling" else None,
                help=help_text.format(role=role),
            )(func)
    return func


def _json_object(ctx: click.Context, param: click.Parameter, value: str | None) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise click.BadParameter(f"not JSON: {exc}") from exc
    if not isinstance(parsed, dict):
        raise click.BadParameter("expected a JSON object")
    return parsed


@cli.command(name="run")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, exists=True), help="TOML run file ([run], [models.ROLE], [prices]).")
@run_options()
@db_option
@report_format_option("table", "json", "markdown", "csv", "none")
@click.option(
    "--progress",
    "progress_mode",
    type=click.Choice(PROGRESS_MODES),
    default="auto",
    show_default=True,
    help="Progress on stderr: auto (live on a terminal, plain periodic lines otherwise), live, lines or none.",
)
@click.pass_context
def run_command(ctx: click.Context, config_file: str | None, fmt: str, db_path: str, progress_mode: str, **options: Any) -> None:
    """Run (or resume) a suite and print its report."""
    from bench_kernel.run import checks, runner
    from bench_kernel.run.executors import option_values
    from bench_kernel.run.progress import Progress
    from bench_kernel.run.runconfig import build_run_config, option_overrides, read_run_file

    given = {k: v for k, v in options.items() if ctx.get_parameter_source(k) is not click.core.ParameterSource.DEFAULT}
    overrides = option_overrides(given)
    if option_values(ctx.meta):  # options executor plugins added to this command (e.g. --ray-address)
        overrides["executor_options"] = {**option_values(ctx.meta), **overrides.get("executor_options", {})}
    config = build_run_config(read_run_file(Path(config_file)) if config_file else {}, overrides, source=config_file or "command line")
    plugin_set = checks.checked_plugins(with_backend_plugins(config.plugins, config.implied_plugins()), _warn)
    if fmt != "none":  # an unknown format is refused before anything is played
        from bench_kernel.report.report import report_format

        report_format(collect(plugin_set), fmt)
    try:
        with Progress(progress_mode) as progress:
            summary = runner.run(
                config,
                db_path,
                plugins=plugin_set,
                on_finished=progress.finished,
                handle_signals=True,
                on_start=lambda ctx, todo, skipped: _start(progress, progress_mode, ctx, todo, skipped),
            )
    except runner.RunInterrupted as exc:
        click.echo(str(exc), err=True)
        sys.exit(128 + exc.signum)
    click.echo(
        f"run {summary.run_id}: {summary.finished} conversations run, {summary.skipped} already stored, "
        f"{summary.status} in {summary.wall_s:.1f}s ({db_path})",
        err=True,
    )
    if summary.signal is not None:
        click.echo(
            f"interrupted by {signal.Signals(summary.signal).name}: the {summary.skipped + summary.finished} finished "
            "conversations are stored, those in flight were dropped. Resume with:\n"
            f"  {resume_command(sys.argv[1:], summary.run_id)}",
            err=True,
        )
        sys.exit(128 + summary.signal)
    if fmt != "none":
        echo_report(db_path, summary.run_id, fmt)
    if summary.infrastructure_errors:
        raise click.ClickException(
            f"{summary.infrastructure_errors} of {summary.planned} conversations ended in an infrastructure error "
            "(stored, excluded from every score; run the same command again to retry them)"
        )
    if summary.status == "failed":
        raise click.ClickException(f"run {summary.run_id} failed: no conversation finished")
    if summary.all_failed:  # the report is printed: the exit status says the run measured nothing
        raise click.ClickException(summary.all_failed)


def _start(progress: Any, mode: str, ctx: Any, todo: int, skipped: int) -> None:
    """The collector back on; the run's header: the task transforms' lines, then the progress header."""
    if not gc.isenabled():  # bench-codecache set up without it: what set-up built is frozen out of every collection
        gc.freeze()
        gc.enable()
    from bench_kernel.run.planning import code_change_notice
    from bench_kernel.run.transforms import header_lines

    notice = code_change_notice(ctx.store, ctx.run_id)  # a new run only because a component's code changed: said always
    for line in [*(header_lines(ctx) if mode != "none" else []), *([notice] if notice else [])]:
        click.echo(f"run {ctx.run_id}: {line}", err=True)
    progress.start(ctx, todo, skipped)


def resume_command(args: Sequence[str], run_id: str) -> str:
    """The command that resumes a run: the same arguments, naming the run."""
    named = any(a == "--run-id" or a.startswith("--run-id=") for a in args)
    return shlex.join(["bench", *args, *([] if named else ["--run-id", run_id])])


def _warn(text: str) -> None:
    click.echo(text, err=True)


def echo_report(
    db_path: str, run_id: str, fmt: str, section: str | None = None, by: Sequence[str] = (), plots: str | None = None, plot_with: Sequence[str] = ()
) -> None:
    """Print a stored run's report in a registered format (charts written into `plots` first), or the kernel's summary."""
    from bench_kernel.evaluation.sections import ReportContext
    from bench_kernel.report.report import REPORT_PLUGIN, SUMMARY_NOTE, build_report, report_format, run_registry, summary, write_charts

    with _store(db_path) as store:
        run = store.run(run_id)  # an unknown run is one clean error, before anything else is said
        assert run is not None
        registry, notes = run_registry(run)
        chosen = report_format(registry, fmt)
        if chosen is None and (section or by or plots):
            raise ConfigError(f"--section, --by and --plots need the full report: pip install {REPORT_PLUGIN}")
        for note in notes:
            click.echo(f"note: {note}", err=True)
        if chosen is None:
            click.echo(json.dumps(summary(store, run_id), indent=2, sort_keys=True))
            click.echo(f"note: {SUMMARY_NOTE}", err=True)
            return
        report = build_report(store, run_id, registry, by)
        context = ReportContext(section=section, store=store, plot_with=tuple(plot_with))
        if plots:
            click.echo(f"wrote {write_charts(registry, report, context, Path(plots))} plots to {plots}", err=True)
        click.echo(chosen.render(report, context), nl=False)


@cli.command(name="report")
@click.argument("run_id")
@db_option
@report_format_option("table", "json", "markdown", "csv", "html")
@click.option("--section", help="Print only this plugin section (its tables; as CSV with --format csv).")
@click.option("--by", "by", multiple=True, help="Break the figures down by a task attribute (persona, domain, intent, ...).")
@click.option("--plots", "plots_dir", type=click.Path(file_okay=False), help="Also write the charts as PNGs into this directory.")
@click.option("--plot-with", "plot_with", multiple=True, help="Another run to draw on the pass^k and cost charts (repeatable).")
def report_command(
    run_id: str, db_path: str, fmt: str, section: str | None, by: tuple[str, ...], plots_dir: str | None, plot_with: tuple[str, ...]
) -> None:
    """Show a run's rewards per component, pass^k with confidence intervals, per-task flips and plugin sections."""
    require_db(db_path)
    echo_report(db_path, run_id, fmt, section, [a for item in by for a in item.split(",") if a], plots_dir, plot_with)


def _store(db_path: str) -> contextlib.closing[Store]:
    from bench_kernel.store.store import open_store_for_reading

    return contextlib.closing(open_store_for_reading(db_path))


@cli.command(name="runs")
@db_option
@format_option("table", "json")
def runs_command(db_path: str, fmt: str) -> None:
    """List the runs in the results database."""
    require_db(db_path)
    with _store(db_path) as store:
        rows = store.runs()
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        mean = "-" if r["mean_reward"] is None else f"{r['mean_reward']:.3f}"
        profile = f"profile {r['profile']} ({str(r['profile_sha256'])[:12]})" if r.get("profile") else "profile bench (before profiles)"
        click.echo(f"{r['id']}  {r['status']}  {r['conversations']} conversations  mean reward {mean}  {profile}  {r['created_utc']}")


def require_db(db_path: str) -> None:
    """Refuse a results database that does not exist (instead of creating an empty one)."""
    if not Path(db_path).exists():
        raise ConfigError(f"no results database at {db_path} (run `bench run` first, or pass --db)")


@cli.command(name="plugins")
@click.option("--all", "show_all", is_flag=True, help="Include the built-in plugins.")
@format_option("table", "json")
def plugins_command(show_all: bool, fmt: str) -> None:
    """List installed plugins, their versions, hooks and components."""
    from bench_kernel.plugins import NAMED_BUILTINS
    from bench_kernel.serialization import unstructure

    plugin_set = get_plugin_manager()
    registry = collect(plugin_set)
    listed = []
    for info in plugin_set.plugins:
        if info.builtin and not show_all:
            continue
        comps = {kind: [n for n in names if registry.origins.get((kind, n)) == info.name] for kind, names in registry.components.items()}
        listed.append({**unstructure(info), "hooks": plugin_set.hooks_of(info.name), "components": {k: v for k, v in comps.items() if v}})
    if fmt == "json":
        click.echo(json.dumps(listed, indent=2))
        return
    for p in listed:
        state = f"FAILED: {p['error']}" if p["error"] else ", ".join(p["hooks"])
        click.echo(f"{p['name']}  {p['distribution'] or '-'} {p['version'] or '-'}  {state}")
    for name in NAMED_BUILTINS if show_all else ():
        click.echo(f"{name}  bench-kernel  built in, loaded only when named: --plugin {name}")


@cli.command(name="tasks")
@plugin_option
@domain_options
@format_option("table", "json")
def tasks_command(plugins: tuple[str, ...], fmt: str, **options: Any) -> None:
    """List and validate a domain's tasks."""
    from bench_kernel.run import checks

    data = checks.load_for_cli(list(plugins) or None, warn=_warn, **options)
    rows = checks.task_summaries(data)
    if fmt == "json":
        click.echo(json.dumps(rows, indent=2))
        return
    problems = data.task_problems
    verdict = f"{len(problems)} data problems (the tasks still run):" if problems else "all valid"
    click.echo(f"{len(rows)} tasks in domain {data.name} ({data.source}), {verdict}")
    for problem in problems:
        click.echo(f"  problem: {problem}")
    for r in rows:
        click.echo(f"  {r['task_id']}  basis={'+'.join(r['reward_basis'])}  actions={r['actions']}")


@cli.command(name="check")
@plugin_option
@domain_options
@click.option(
    "--expected",
    type=click.Path(dir_okay=False, exists=True),
    help="Expected-hashes JSON ({domains: {NAME: {tasks: {ID: {gold_agent}}}}}) to compare gold hashes with.",
)
@format_option("table", "json")
def check_command(plugins: tuple[str, ...], fmt: str, expected: str | None, **options: Any) -> None:
    """Replay every task's gold actions (twice, from fresh states) and list the tasks whose replay fails or shows a tool
    that edits shared records in place or is not deterministic (exit 1 if any)."""
    from bench_kernel.run import checks

    data = checks.load_for_cli(list(plugins) or None, warn=_warn, **options)
    results = checks.check_tasks(data)
    if fmt == "json":
        for r in results:
            click.echo(json.dumps(r, sort_keys=True))
    else:
        click.echo(checks.render_check(data, results))
    if expected:
        click.echo("\n".join(checks.compare_expected(data, results, Path(expected))), err=fmt == "json")
    if any(not r["ok"] for r in results):
        sys.exit(1)


@cli.command(name="new", help=new_help())
@click.argument("kind", metavar="KIND", type=click.Choice(list(KINDS)))
@click.argument("name")
@click.argument("directory", required=False, type=click.Path(file_okay=False))
def new_command(kind: str, name: str, directory: str | None) -> None:
    """Write a ready plugin distribution bench-NAME of KIND into DIRECTORY (default ./NAME)."""
    from bench_kernel.scaffold.new import new_plugin, next_steps

    target = new_plugin(kind, name, Path(directory) if directory else None)
    click.echo(next_steps(kind, name, target))


@cli.group(name="import")
def import_group() -> None:
    """Import results from other harnesses (importers come from plugins, e.g. bench-tau2)."""


@cli.group(name="export")
def export_group() -> None:
    """Export runs in other harnesses' formats (exporters come from plugins, e.g. bench-tau2)."""


def main() -> None:
    """Console entry point: logging once, plugin commands, then the CLI."""
    configure_logging(os.environ.get("BENCH_LOG_LEVEL", "warning"))
    if needs_plugin_commands(sys.argv[1:]):
        try:
            apply_commands(get_plugin_manager(), cli)
        except BenchError as exc:
            click.echo(f"warning: plugin commands unavailable: {exc}", err=True)
    try:
        cli(prog_name="bench")
    finally:
        # The interpreter's last collections would walk every object a large run built (~0.1 s after 1,000 conversations).
        gc.freeze()


def needs_plugin_commands(args: Sequence[str]) -> bool:
    """False when a built-in leaf command (run, report, ...) is given only options of its own, so no plugin need load."""
    # Adding plugin commands imports every installed plugin: `bench run` would pay for plugins it does not use
    # before its first request (about half a second with the contrib plugins installed). Plugins may add options to
    # a leaf command (bench-ray's --ray-address on `bench run`): its help and any option it does not know load them.
    first = next((arg for arg in args if not arg.startswith("-")), None)
    command = cli.commands.get(first) if first is not None else None
    if command is None or isinstance(command, click.Group):
        return True
    known = {opt for param in command.params for opt in (*param.opts, *param.secondary_opts)}
    given = args[: args.index("--")] if "--" in args else args
    options = (arg.split("=", 1)[0] for arg in given if arg.startswith("--") or (arg[:1] == "-" and arg[1:2].isalpha()))
    return any(option not in known for option in options)
