"""`bench report` end to end: plugin sections, metric summaries, breakdowns, the header, counts and errors in the json
format (bench-report builds the report: those tests need it installed, and its table, markdown, csv and html are pinned
by plugins/report/tests), the choice of format, and the kernel's summary without bench-report.

Runs go through `bench run` and reports through `bench report` (click's CliRunner), with the example
plugin in report_plugin.py registered beside the toy domain by the `use_plugins` fixture.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
from click.testing import Result
from plugin_factory import needs_installed, needs_report
from report_plugin import MetricOnly, ReportDemo
from test_cli import LAMP_OFF_TASK, assert_clean_error, invoke
from toy_domain import TASKS

import bench_kernel
from bench_kernel import Metric, MetricContext, Report, ReportBuilder, ReportContext, ReportFormat, ReportSection, RunView, Section, Store
from bench_kernel.plugins import load_profile
from bench_kernel.report.report import run_registry, summary
from bench_kernel.store.store import RunRecord

FORMATS = ("json",)
ATTRIBUTED_TASKS = [
    {**TASKS[0], "attributes": {"persona": "EASY_1", "intent": "counter"}},
    {**TASKS[1], "attributes": {"intent": "counter"}},
    {**TASKS[2], "attributes": {"persona": "HARD_1", "intent": "device"}},
    {**LAMP_OFF_TASK, "attributes": {"persona": "HARD_1", "intent": "device"}},
]


def run_and_report(
    use_plugins: Callable[..., None],
    tmp_path: Path,
    extra: Sequence[tuple[str, object]],
    *report_args: str,
    run_args: Sequence[str] = ("--trials", "2"),
    full: bool = True,
) -> tuple[Path, str, dict[str, Result]]:
    """`bench run` with these plugins (and bench-report unless not `full`), then `bench report` of that run in every
    format (lamp-off is broken by design)."""
    use_plugins(tasks=ATTRIBUTED_TASKS, extra=extra, report=full)
    db = tmp_path / "runs.db"
    ran = invoke("run", "--db", str(db), "--format", "none", "--run-id", "r", "--allow-broken-tasks", *run_args)
    assert ran.exit_code == 0, ran.output
    return db, "r", {fmt: report(db, "r", "--format", fmt, *report_args) for fmt in FORMATS}


def report(db: Path, run_id: str, *args: str) -> Result:
    """`bench report RUN ARGS`."""
    return invoke("report", run_id, "--db", str(db), *args)


def sections(result: Result) -> dict[str, dict[str, Any]]:
    """A JSON report's sections by name, but bench-report's own "Failed checks" (pinned by its tests)."""
    return {s["name"]: s for s in json.loads(result.stdout)["sections"] if s["plugin"] != "report"}


# --------------------------------------------------------------------------- sections and summaries


@needs_report()
def test_a_plugin_section_and_metric_summary_are_in_the_report(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db, run_id, out = run_and_report(use_plugins, tmp_path, [("report-demo", ReportDemo())])
    assert all(r.exit_code == 0 for r in out.values()), {f: r.output for f, r in out.items()}

    found = sections(out["json"])
    turns = found["turns"]
    assert (turns["title"], turns["plugin"], turns["error"]) == ("Agent turns per conversation", "report-demo", None)
    assert turns["tables"][0]["headers"] == ["task", "trial", "persona", "agent messages", "reward per turn"]
    assert ["read-b", 1, "(none)", 3, 1 / 3] in turns["tables"][0]["rows"]  # a call, its answer, the stop
    assert ["lamp-off", 1, "HARD_1", 3, 0.0] in turns["tables"][0]["rows"]  # a task the oracle fails
    assert turns["notes"] == ["reward per turn: the conversation's reward over its agent messages"]
    assert turns["text"].startswith(f"8 agent conversations of run `{run_id}`.\n\nA turn")

    summary = {row[0]: row[1] for row in found["report-demo:reward_per_turn"]["tables"][0]["rows"]}
    assert summary == {
        "median": 1 / 3,
        "worst": 0.0,
        "mean for persona (none)": round(1 / 3, 6),
        "mean for persona EASY_1": round(1 / 3, 6),
        "mean for persona HARD_1": round(1 / 6, 6),
    }
    assert found["report-demo:reward_per_turn"]["title"] == "report-demo:reward_per_turn (run-level)"

    as_json = report(db, run_id, "--section", "turns", "--format", "json")
    assert as_json.exit_code == 0, as_json.output
    assert json.loads(as_json.stdout) == turns


@needs_report()
def test_metric_summarize_is_optional_and_empty_by_default(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    @attrs.define(kw_only=True)
    class Plain(Metric):
        name: str = "plain"

        async def score(self, context: MetricContext) -> Mapping[str, float | None]:
            return {"": 1.0}

    class PlainPlugin:
        @bench_kernel.hookimpl
        def register_metrics(self, register: Callable[[Metric], None]) -> None:
            register(Plain())

    _, _, out = run_and_report(use_plugins, tmp_path, [("plain", PlainPlugin())])
    assert Plain().summarize(None) == {}  # type: ignore[arg-type]
    assert set(sections(out["json"])) == set()  # the kernel has none of its own
    assert json.loads(out["json"].stdout)["metrics"]["plain:plain"]["value"] == 1.0


@needs_report()
def test_two_plugins_metrics_of_one_name_never_collide_and_reward_names_are_kept(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    _, _, out = run_and_report(use_plugins, tmp_path, [("report-demo", ReportDemo()), ("twin", MetricOnly())])

    metrics = json.loads(out["json"].stdout)["metrics"]
    assert metrics["report-demo:reward_per_turn"]["n"] == metrics["twin:reward_per_turn"]["n"] == 8  # each its own 8 values
    assert metrics["report-demo:reward_per_turn"]["value"] == metrics["twin:reward_per_turn"]["value"]
    found = sections(out["json"])
    assert found["twin:reward_per_turn"]["plugin"] == "twin"  # each summary sees its own plugin's values
    assert found["twin:reward_per_turn"]["tables"] == found["report-demo:reward_per_turn"]["tables"]


@needs_report()
def test_a_failing_section_is_an_error_line_naming_its_plugin_and_the_report_still_renders(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    @attrs.define(kw_only=True)
    class Broken(ReportSection):
        name: str = "broken"

        def build(self, view: RunView) -> Section:
            raise KeyError("no such column")

    @attrs.define(kw_only=True)
    class Prose(ReportSection):
        name: str = "prose"

        def build(self, view: RunView) -> Section:
            return Section(title="Prose", text="Only words here.")

    class BrokenPlugin:
        @bench_kernel.hookimpl
        def register_report_sections(self, register: Callable[[ReportSection], None]) -> None:
            register(Broken())
            register(Prose())

    db, run_id, out = run_and_report(use_plugins, tmp_path, [("cracked", BrokenPlugin()), ("report-demo", ReportDemo())])

    assert all(r.exit_code == 0 for r in out.values())
    found = sections(out["json"])
    assert (found["broken"]["title"], found["broken"]["plugin"]) == ("broken", "cracked")  # titled by its name
    assert found["broken"]["error"] == "KeyError: 'no such column'"
    assert found["turns"]["error"] is None and found["turns"]["tables"]  # the others still render
    prose = json.loads(report(db, run_id, "--section", "prose", "--format", "json").stdout)
    assert (prose["title"], prose["text"], prose["error"]) == ("Prose", "Only words here.", None)
    assert_clean_error(report(db, run_id, "--section", "nope"), "no report section 'nope'", "sections: broken, failed-checks, prose,")


@needs_report()
def test_sections_read_the_store_and_cannot_write_it(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    @attrs.define(kw_only=True)
    class Vandal(ReportSection):
        name: str = "vandal"

        def build(self, view: RunView) -> Section:
            view.query("delete from conversations")
            return Section(title="gone")

    class VandalPlugin:
        @bench_kernel.hookimpl
        def register_report_sections(self, register: Callable[[ReportSection], None]) -> None:
            register(Vandal())

    db, _, out = run_and_report(use_plugins, tmp_path, [("vandal", VandalPlugin())])

    assert sections(out["json"])["vandal"]["error"] == "OperationalError: attempt to write a readonly database"
    with sqlite3.connect(db) as conn:
        assert conn.execute("select count(*) from conversations").fetchone()[0] == 12  # 8 agent + 4 baseline


@needs_report()
def test_a_plugin_of_the_run_no_longer_installed_is_a_note(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db, run_id, _ = run_and_report(use_plugins, tmp_path, [("report-demo", ReportDemo())])
    use_plugins(tasks=ATTRIBUTED_TASKS, report=True)  # report-demo uninstalled since the run

    later = report(db, run_id, "--format", "json")

    assert later.exit_code == 0, later.output
    assert "note: plugin 'report-demo' of this run is not installed: its sections are left out" in later.stderr
    body = json.loads(later.stdout)
    assert [s["name"] for s in body["sections"]] == ["failed-checks"]  # its plugin's sections left out (bench-report's own shown)
    assert "report-demo:reward_per_turn" in body["metrics"]  # stored values still count


@needs_installed("mock", "airline")
def test_the_report_registry_holds_the_run_plugins_still_installed() -> None:
    installed = bench_kernel.installed_entry_points()
    assert "mock" in installed and "airline" in installed  # the dev environment installs every plugin
    used = [
        {"name": "bench_kernel.builtin.participants", "builtin": True, "distribution": "bench-kernel", "version": "0"},
        {"name": "mock", "builtin": False, "distribution": "bench-mock", "version": "0.1.0"},
        {"name": "gone", "builtin": False, "distribution": "bench-gone", "version": "1.0"},
    ]
    run = RunRecord(id="r", created_utc="", updated_utc="", status="complete", config={}, config_hash="h", plugins=used, task_sets={}, seed=300)

    registry, notes = run_registry(run)

    assert registry is not None and registry.names("domain") == ["mock"]  # not airline: it was not part of the run
    assert notes == ["plugin 'gone' of this run is not installed: its sections are left out"]


# --------------------------------------------------------------------------- errors, header and counts


@needs_report()
def test_metric_failures_are_counted_with_their_messages(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    @attrs.define(kw_only=True)
    class Fragile(Metric):
        name: str = "fragile"

        async def score(self, context: MetricContext) -> Mapping[str, float | None]:
            if context.task.id == "lamp":
                raise RuntimeError("judge model returned nothing")
            return {"": 1.0}

    class FragilePlugin:
        @bench_kernel.hookimpl
        def register_metrics(self, register: Callable[[Metric], None]) -> None:
            register(Fragile())

    _, _, out = run_and_report(use_plugins, tmp_path, [("fragile", FragilePlugin())], "--by", "intent")

    assert json.loads(out["json"].stdout)["metrics"]["fragile:fragile"]["errors"] == 2
    assert json.loads(out["json"].stdout)["metrics"]["fragile:fragile"]["error_messages"] == {"RuntimeError: judge model returned nothing": 2}
    assert {k: json.loads(out["json"].stdout)["metrics"]["fragile:fragile"][k] for k in ("value", "n")} == {"value": 1.0, "n": 6}
    groups = {g["value"]: g for g in json.loads(out["json"].stdout)["breakdowns"][0]["groups"]}
    # lamp failed twice, lamp-off scored twice
    assert (groups["device"]["figures"]["fragile:fragile"], groups["device"]["conversations"]) == (1.0, 4)
    assert groups["device"]["errors"] == {"fragile:fragile": 2} and groups["counter"]["errors"] == {}


@needs_report()
def test_the_header_says_what_was_measured(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    _, _, out = run_and_report(use_plugins, tmp_path, [("report-demo", ReportDemo())], run_args=("--trials", "2", "--seed", "7"))

    body = json.loads(out["json"].stdout)
    assert body["counts"] == "8 agent conversations scored (4 tasks x 2 trials), 0 infrastructure errors excluded, 4 baseline conversations"
    header = body["header"]
    assert header == {
        "domain": "toy",
        "data": "the plugin's packaged suite",
        "split": None,
        "agent": "oracle",
        "user": "scripted",
        "judge": None,
        "models": {},
        "mode": "default",
        "channel": "identity",
        "trials": 2,
        "seed": 7,
        "profile": f"bench (sha256 {load_profile(None).sha256[:12]})",
        "tasks": 4,
        "plugins": {"bench-kernel": header["plugins"]["bench-kernel"], "toy": None, "report-demo": None, "report": header["plugins"]["report"]},
        "concurrency": 32,
        "in_flight": [],
    }


@needs_report()
def test_counts_say_what_they_count_and_old_runs_default_to_the_identity_channel(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db, run_id, _ = run_and_report(use_plugins, tmp_path, [], run_args=("--trials", "1"))
    with sqlite3.connect(db) as conn:  # as a run stored before channels, with one conversation the harness lost
        conn.execute("update conversations set termination_reason = 'infrastructure_error' where arm = 'agent' and task_id = 'lamp'")
        config = json.loads(conn.execute("select config_json from runs").fetchone()[0])
        del config["channel"]
        conn.execute("update runs set config_json = ?", [json.dumps(config)])

    body = json.loads(report(db, run_id, "--format", "json").stdout)

    assert body["counts"] == ("3 agent conversations scored (3 tasks x 1 trial), 1 infrastructure error excluded, 4 baseline conversations")
    assert body["header"]["channel"] == "identity"


# --------------------------------------------------------------------------- breakdowns


@needs_report()
def test_every_figure_breaks_down_by_task_attributes(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db, run_id, out = run_and_report(use_plugins, tmp_path, [("report-demo", ReportDemo())], "--by", "persona,intent")
    assert all(r.exit_code == 0 for r in out.values()), {f: r.output for f, r in out.items()}

    breakdowns = {b["attribute"]: {g["value"]: g for g in b["groups"]} for b in json.loads(out["json"].stdout)["breakdowns"]}
    assert set(breakdowns) == {"persona", "intent"}
    assert set(breakdowns["persona"]) == {"(none)", "EASY_1", "HARD_1"}  # read-b has no persona
    counter = breakdowns["intent"]["counter"]
    assert (counter["conversations"], counter["tasks"]) == (4, 2)
    assert set(counter["figures"]) == {
        "average_reward",
        "pass^1",
        "component.ACTION",
        "component.COMMUNICATE",
        "component.DB",
        "component.ENV_ASSERTION",
        "report-demo:reward_per_turn",
    }  # no kernel "reward": it is average_reward
    assert breakdowns["persona"]["(none)"]["figures"]["report-demo:reward_per_turn"] == round(1 / 3, 6)
    easy = breakdowns["persona"]["EASY_1"]
    assert (easy["figures"]["pass^1"], easy["tasks"], easy["errors"]) == (1.0, 1, {})
    assert breakdowns["intent"]["device"]["figures"]["report-demo:reward_per_turn"] == 0.166667  # lamp 1/3, lamp-off 0

    repeated = report(db, run_id, "--format", "json", "--by", "persona", "--by", "intent")
    assert json.loads(repeated.stdout)["breakdowns"] == json.loads(out["json"].stdout)["breakdowns"]
    assert_clean_error(report(db, run_id, "--by", "mood"), "no task attribute 'mood'", "attributes: domain, intent, persona")


@needs_report()
def test_conversations_stored_before_attributes_group_under_none(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db, run_id, _ = run_and_report(use_plugins, tmp_path, [], run_args=("--trials", "1"))
    with sqlite3.connect(db) as conn:  # as if stored before the store recorded attributes
        conn.execute("update conversations set attributes_json = null where task_id != 'inc-a'")

    body = json.loads(report(db, run_id, "--format", "json", "--by", "domain").stdout)
    groups = {g["value"]: g["conversations"] for g in body["breakdowns"][0]["groups"]}
    assert groups == {"(none)": 3, "toy": 1}

    with sqlite3.connect(db) as conn:
        conn.execute("update conversations set attributes_json = null")
    assert_clean_error(report(db, run_id, "--by", "domain"), "no task attribute 'domain'", "stored before bench recorded task attributes")


# --------------------------------------------------------------------------- formats


@attrs.define(kw_only=True)
class Tally(ReportFormat):
    """A plugin's format: one line of counts, and one chart."""

    name: str = "tally"

    def render(self, report: Report, context: ReportContext) -> str:
        return f"{report.run_id}: {report.conversations} conversations, section {context.section}\n"

    def charts(self, report: Report, context: ReportContext) -> dict[str, bytes]:
        return {"tally": b"\x89PNG not really", "with": ",".join(context.plot_with).encode()}


@attrs.define(kw_only=True)
class Counting(ReportBuilder):
    """A plugin's report builder: the run's scored conversations and nothing else."""

    name: str = "counting"

    def build(self, store: Store, run_id: str, registry: Any = None, by: Sequence[str] = ()) -> Report:
        figures = summary(store, run_id)
        empty: dict[str, Any] = {}
        return Report(
            run_id=run_id,
            status=figures["status"],
            config={},
            conversations=figures["conversations"],
            infrastructure_errors=figures["infrastructure_errors"],
            average_reward=empty,
            pass_hat_k=empty,
            pass_at_k=empty,
            components=empty,
            metrics=empty,
            terminations=empty,
            flips=empty,
            baseline=None,
            tasks=[],
        )


class TallyPlugin:
    @bench_kernel.hookimpl
    def register_report_formats(self, register: Callable[[ReportFormat], None]) -> None:
        register(Tally())


class UndrawnPlugin:
    @bench_kernel.hookimpl
    def register_report_formats(self, register: Callable[[ReportFormat], None]) -> None:
        register(ReportFormat(name="undrawn"))


class CountingPlugin:
    @bench_kernel.hookimpl
    def register_report_builders(self, register: Callable[[ReportBuilder], None]) -> None:
        register(Counting())


def test_the_format_and_builder_are_the_registered_ones_once_plugins_load(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    plugins = [("tallying", TallyPlugin()), ("counting", CountingPlugin())]
    db, run_id, _ = run_and_report(use_plugins, tmp_path, plugins, run_args=("--trials", "1"), full=False)

    assert report(db, run_id, "--format", "tally", "--section", "turns").stdout == "r: 4 conversations, section turns\n"
    written = report(db, run_id, "--format", "tally", "--plots", str(tmp_path / "charts"), "--plot-with", "a", "--plot-with", "b")
    assert written.exit_code == 0 and f"wrote 2 plots to {tmp_path / 'charts'}" in written.stderr
    assert (tmp_path / "charts" / "tally.png").read_bytes() == b"\x89PNG not really" and (tmp_path / "charts" / "with.png").read_text() == "a,b"
    assert_clean_error(report(db, run_id, "--format", "taly"), "no report format 'taly' (did you mean 'tally'?) (formats: tally, table, json)")
    assert_clean_error(report(db, run_id, "--format", "json"), "--format json comes from the plugin bench-report, which is not installed")

    use_plugins(tasks=ATTRIBUTED_TASKS, extra=[("counting", CountingPlugin()), ("undrawn", UndrawnPlugin())])  # no format draws charts
    undrawn = report(db, run_id, "--format", "undrawn", "--plots", str(tmp_path / "none"))
    assert undrawn.exit_code == 1 and "Error: no report format of this run's plugins draws charts: bench-report does" in undrawn.stderr


def test_without_bench_report_formats_name_it_and_the_default_and_json_are_the_kernels_summary(
    use_plugins: Callable[..., None], tmp_path: Path
) -> None:
    db, run_id, out = run_and_report(use_plugins, tmp_path, [("tallying", TallyPlugin())], run_args=("--trials", "1"), full=False)
    note = "note: this is the kernel's summary: the full report (every figure, each format) comes from bench-report (pip install bench-report)\n"
    summary = {"run_id": "r", "status": "complete", "conversations": 4, "infrastructure_errors": 0, "mean_reward": 0.75}

    for shown in (report(db, run_id), report(db, run_id, "--format", "table"), out["json"]):
        assert shown.exit_code == 0 and json.loads(shown.stdout) == summary and shown.stderr == note
    for fmt in ("html", "markdown"):  # bench-report's other formats name the distribution to install
        assert_clean_error(report(db, run_id, "--format", fmt), f"--format {fmt} comes from the plugin bench-report, which is not installed")
    for option in (("--section", "turns"), ("--by", "persona"), ("--plots", str(tmp_path / "none"))):
        assert_clean_error(report(db, run_id, *option), "--section, --by and --plots need the full report: pip install bench-report")
    assert_clean_error(report(db, run_id, "--format", "taly"), "no report format 'taly' (did you mean 'tally'?) (formats: tally, table, json)")
    refused = invoke("run", "--db", str(tmp_path / "new.db"), "--format", "jsno", "--run-id", "new")
    assert_clean_error(refused, "no report format 'jsno' (did you mean 'json'?)")
    assert not (tmp_path / "new.db").exists()  # refused before anything was played or stored
    ran = invoke("run", "--db", str(db), "--run-id", "again", "--trials", "1", "--progress", "none", "--allow-broken-tasks")
    assert ran.exit_code == 0 and json.loads(ran.stdout)["run_id"] == "again"
    assert ran.stderr.count("note: this is the kernel's summary") == 1  # said once, beside the summary
