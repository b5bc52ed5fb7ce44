"""The seams bench-trust plugs into, pinned with the kernel alone: report and compare cards, task flaggers and
`--exclude-flagged`, P(flip), and the clear message of a first-party command whose plugin is missing (bench-report's
markdown, csv and html of cards and `bench compare` are pinned by plugins/report/tests)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import click
from click.testing import CliRunner
from test_cli import invoke, only_run_id

from bench_kernel import Card, ReportSection, RunContext, RunView, Section, TaskFlagger, collect, get_plugin_manager, hookimpl, plugin_cards
from bench_kernel.cli import BenchGroup
from bench_kernel.evaluation.stats import TaskOutcomes, task_flip_probability


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
class OddFlagger(TaskFlagger):
    """Flags tasks whose id has an odd length `odd`, the others `even`; records what it saw at the end of a run."""

    name: str = "parity"
    flags: tuple[str, ...] = ("odd", "even")
    description: str = "the parity check"
    recorded: list[str] = attrs.field(factory=list)

    async def flagged(self, registry: Any, data: Any, tasks: Sequence[Any], flags: Sequence[str], store_path: str) -> dict[str, list[str]]:
        found = {task.id: ["odd" if len(task.id) % 2 else "even"] for task in tasks}
        return {task_id: [f for f in hits if f in flags] for task_id, hits in found.items()}

    def record(self, ctx: RunContext) -> None:
        self.recorded.append(ctx.run_id)


class Plugin:
    def __init__(self, section: ReportSection | None = None, flagger: TaskFlagger | None = None) -> None:
        self.section, self.flagger = section, flagger

    @hookimpl
    def register_report_sections(self, register: Callable[[ReportSection], None]) -> None:
        if self.section is not None:
            register(self.section)

    @hookimpl
    def register_task_flaggers(self, register: Callable[[TaskFlagger], None]) -> None:
        if self.flagger is not None:
            register(self.flagger)


def test_a_card_shows_among_the_figures_under_its_name(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    use_plugins(extra=[("counting", Plugin(CountCard()))])
    db = str(tmp_path / "r.db")
    assert invoke("run", "--db", db, "--format", "none", "--run-id", "a").exit_code == 0
    report = json.loads(invoke("report", "a", "--db", db, "--format", "json").stdout)
    assert report["count"] == {"n": 3}  # where the text formats show it: bench-report's tests


def test_compare_cards_come_from_the_comparison_and_one_that_raises_is_a_failed_section() -> None:
    registry = collect(get_plugin_manager([], extra=[("counting", Plugin(CountCard()))]))
    cards, failed = plugin_cards(registry, lambda section, _: section.compare_cards({"common_tasks": 3}))
    assert [(c["name"], c["plugin"], c["figures"], c["lines"]) for c in cards] == [("common", "counting", 3, ["Common: 3 tasks"])] and not failed
    cards, failed = plugin_cards(registry, lambda section, _: section.compare_cards({}))
    assert not cards and failed[0]["name"] == "counts" and failed[0]["error"] == "cards: KeyError: 'common_tasks'"


def test_a_card_that_raises_is_a_failed_section_and_the_report_goes_on(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    use_plugins(extra=[("counting", Plugin(CountCard(broken=True)))])
    db = str(tmp_path / "r.db")
    assert invoke("run", "--db", db, "--format", "none").exit_code == 0
    shown = invoke("report", only_run_id(Path(db)), "--db", db, "--format", "json")
    assert shown.exit_code == 0, shown.output
    [failed] = json.loads(shown.stdout)["sections"]
    assert (failed["name"], failed["plugin"], failed["error"]) == ("counts", "counting", "cards: ValueError: no count today")


def test_exclude_flagged_asks_the_flagger_that_knows_the_flag(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    flagger = OddFlagger()
    use_plugins(extra=[("parity", Plugin(flagger=flagger))])
    db = str(tmp_path / "r.db")
    # lamp (4 characters) and read-b (6) are even, inc-a (5) odd: asking for both, in any order, leaves none
    every = invoke(
        "run",
        "--db",
        db,
        "--exclude-flagged",
        "even,odd",
        "--exclude-flagged",
        "even",
        "--task-id",
        "inc-a",
        "--task-id",
        "lamp",
        "--task-id",
        "read-b",
    )
    assert every.exit_code == 1 and "--exclude-flagged odd even leaves none of the 3 selected tasks" in every.output
    assert "(the parity check lists their flags)" in every.output and not Path(db).exists()
    ran = invoke(
        "run",
        "--db",
        db,
        "--format",
        "json",
        "--progress",
        "lines",
        "--exclude-flagged",
        "odd",
        "--task-id",
        "inc-a",
        "--task-id",
        "lamp",
        "--task-id",
        "read-b",
    )
    assert ran.exit_code == 0, ran.output
    assert "excluded 1 task(s) flagged odd by the parity check: inc-a" in ran.stderr
    report = json.loads(ran.stdout)
    assert [t["task_id"] for t in report["tasks"]] == ["lamp", "read-b"] and report["config"]["exclude_flagged"] == ["odd"]
    assert flagger.recorded == [report["run_id"]]  # once, at the end of the run
    unknown = invoke("run", "--db", db, "--exclude-flagged", "prime")
    assert unknown.exit_code == 1 and "unknown flag 'prime' for --exclude-flagged (flags: odd, even)" in unknown.output


def test_exclude_flagged_without_a_flagger_says_which_plugin_gives_flags(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    result = invoke("run", "--db", str(tmp_path / "r.db"), "--exclude-flagged", "gold_fails")
    assert result.exit_code == 1 and "needs a plugin that flags tasks" in result.output and "bench-trust" in result.output


def test_a_tasks_flip_probability_is_twice_its_trial_variance() -> None:
    assert task_flip_probability(TaskOutcomes("t", [True, False, True, False])) == round(2 / 3, 6)
    assert task_flip_probability(TaskOutcomes("t", [True])) is None


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
