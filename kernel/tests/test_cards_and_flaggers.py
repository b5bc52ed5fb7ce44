"""The seams bench-trust plugs into: report cards (in bench-report's report), a task transform's `prepare`, `header` and
`finished` (bench-trust's `--exclude-flagged`), and the clear message of a first-party command or run setting whose
plugin is missing (compare cards, P(flip) and bench-report's markdown, csv and html of cards are pinned by
plugins/report/tests)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import click
from click.testing import CliRunner
from plugin_factory import needs_report
from structlog.testing import capture_logs
from test_cli import invoke, only_run_id
from toy_domain import ToyDomain, ToyPlugin

from bench_kernel import (
    Card,
    ConfigError,
    Prepared,
    ReportSection,
    RunConfig,
    RunContext,
    RunView,
    Section,
    Store,
    TaskTransform,
    get_plugin_manager,
    hookimpl,
    run,
)
from bench_kernel.cli import BenchGroup


@attrs.define(kw_only=True)
class CountCard(ReportSection):
    """One card with the run's conversation count, and one under compare with its common tasks."""

    name: str = "counts"
    broken: bool = False

    def build(self, view: RunView) -> Section | None:
        return None

    def cards(self, view: RunView) -> list[Card]:
        if self.broken:
            raise ValueError("no count today")
        n = len(view.conversations())
        return [
            Card(
                name="count",
                title="Count",
                heading="Count of conversations",
                figures={"n": n},
                lines=[f"{n} scored"],
                rows=[{"metric": "count.n", "value": n, "low": None, "high": None, "n": n, "errors": 0, "n_of": "conversations"}],
            )
        ]

    def compare_cards(self, comparison: Mapping[str, Any]) -> list[Card]:
        return [Card(name="common", title="Common", figures=comparison["common_tasks"], lines=[f"Common: {comparison['common_tasks']} tasks"])]


@attrs.define(kw_only=True)
class SkipParity(TaskTransform):
    """`skip_parity` leaves out tasks whose id has an odd length (`odd`) or an even one (`even`), after awaiting."""

    name: str = "parity"
    settings: tuple[str, ...] = ("skip_parity",)
    finished_runs: list[str] = attrs.field(factory=list)

    async def prepare(self, data: Any, tasks: list[Any], settings: Mapping[str, Any], registry: Any, store_path: str) -> Prepared:
        if "skip_parity" not in settings:
            return Prepared(tasks=tasks)
        wanted = [p for p in ("odd", "even") if p in settings["skip_parity"]]  # one order: one identity
        left = {t.id: "odd" if len(t.id) % 2 else "even" for t in tasks}
        kept = [t for t in tasks if left[t.id] not in wanted]
        if not kept:
            raise ConfigError(f"skip_parity {' '.join(wanted)} leaves none of the {len(tasks)} tasks")
        left_out = sorted(t for t in left if left[t] in wanted)
        return Prepared(tasks=kept, settings={"skip_parity": wanted}, events={"run.parity": {"left_out": left_out}})

    def header(self, ctx: RunContext) -> str | None:
        found = ctx.store.last_run_event(ctx.run_id, ("run.parity",))
        return None if found is None else f"left out {', '.join(found['left_out'])}"

    def finished(self, ctx: RunContext) -> None:
        self.finished_runs.append(ctx.run_id)


class Plugin:
    def __init__(self, section: ReportSection | None = None, transform: TaskTransform | None = None) -> None:
        self.section, self.transform = section, transform

    @hookimpl
    def register_report_sections(self, register: Callable[[ReportSection], None]) -> None:
        if self.section is not None:
            register(self.section)

    @hookimpl
    def register_task_transforms(self, register: Callable[[TaskTransform], None]) -> None:
        if self.transform is not None:
            register(self.transform)


@needs_report()
def test_a_card_shows_among_the_figures_under_its_name(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    use_plugins(extra=[("counting", Plugin(CountCard()))], report=True)
    db = str(tmp_path / "r.db")
    assert invoke("run", "--db", db, "--format", "none", "--run-id", "a").exit_code == 0
    report = json.loads(invoke("report", "a", "--db", db, "--format", "json").stdout)
    assert report["count"] == {"n": 3}  # where the text formats show it: bench-report's tests


@needs_report()
def test_a_card_that_raises_is_a_failed_section_and_the_report_goes_on(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    use_plugins(extra=[("counting", Plugin(CountCard(broken=True)))], report=True)
    db = str(tmp_path / "r.db")
    assert invoke("run", "--db", db, "--format", "none").exit_code == 0
    shown = invoke("report", only_run_id(Path(db)), "--db", db, "--format", "json")
    assert shown.exit_code == 0, shown.output
    [failed] = [s for s in json.loads(shown.stdout)["sections"] if s["plugin"] != "report"]
    assert (failed["name"], failed["plugin"], failed["error"]) == ("counts", "counting", "cards: ValueError: no count today")


def test_a_transforms_prepare_leaves_tasks_out_records_why_and_finishes_once(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    transform = SkipParity()
    use_plugins(extra=[("parity", Plugin(transform=transform))])
    db = str(tmp_path / "r.db")
    every = tmp_path / "every.toml"
    every.write_text('[run]\nskip_parity = ["even", "odd"]\ntask_ids = ["inc-a", "lamp", "read-b"]\n')
    refused = invoke("run", "--config", str(every), "--db", db)
    assert refused.exit_code == 1 and "skip_parity odd even leaves none of the 3 tasks" in refused.output and not Path(db).exists()
    odd = tmp_path / "odd.toml"  # lamp (4 characters) and read-b (6) are even, inc-a (5) odd
    odd.write_text('[run]\nskip_parity = ["odd"]\ntask_ids = ["inc-a", "lamp", "read-b"]\n')
    ran = invoke("run", "--config", str(odd), "--db", db, "--format", "json", "--progress", "lines")
    assert ran.exit_code == 0, ran.output
    run_id = json.loads(ran.stdout)["run_id"]
    assert f"run {run_id}: left out inc-a" in ran.stderr
    store = Store(Path(db))
    tasks, record = sorted({r["task_id"] for r in store.conversations(run_id)}), store.run(run_id)
    store.close()
    assert tasks == ["lamp", "read-b"] and record is not None and record.config["skip_parity"] == ["odd"]
    assert transform.finished_runs == [run_id]  # once, at the end of the run


def test_exclude_flagged_without_bench_trust_names_it(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    result = invoke("run", "--db", str(tmp_path / "r.db"), "--exclude-flagged", "gold_fails")
    assert result.exit_code == 1 and "run setting 'exclude_flagged' (--exclude-flagged) needs the plugin bench-trust" in result.output


def test_a_first_party_command_whose_plugin_is_missing_names_the_distribution() -> None:
    group = BenchGroup(name="bench")

    @group.command(name="runs")
    def runs() -> None:
        click.echo("listed")

    for command, plugin in (("audit", "bench-trust"), ("plan", "bench-trust"), ("rescore", "bench-trust"), ("compare", "bench-report")):
        result = CliRunner().invoke(group, [command, "--help"])
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert f"`bench {command}` comes from the plugin {plugin}, which is not installed (pip install {plugin})" in result.output
    assert "No such command 'nope'" in CliRunner().invoke(group, ["nope"]).output
    assert CliRunner().invoke(group, ["runs"]).output == "listed\n"


@attrs.define(kw_only=True)
class BrokenFinish(TaskTransform):
    """A transform whose end-of-run record raises."""

    name: str = "broken-finish"

    def finished(self, ctx: RunContext) -> None:
        raise RuntimeError("no record today")


def test_a_transform_whose_finished_raises_is_logged_and_the_run_completes(tmp_path: Path) -> None:
    plugins = get_plugin_manager([], extra=[("toy", ToyPlugin(ToyDomain())), ("broken", Plugin(transform=BrokenFinish()))])
    with capture_logs() as logs:
        summary = run(RunConfig(domain="toy", baseline=False), tmp_path / "r.db", plugins=plugins)
    assert summary.status == "complete"
    [warning] = [e for e in logs if e["event"] == "run.transform_not_finished"]
    assert (warning["transform"], warning["error"]) == ("broken-finish", "RuntimeError: no record today")
