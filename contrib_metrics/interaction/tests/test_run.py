"""The metric, its summary, the report section and the plots command on a stored run of the kit's domain.

A test channel stands in for the duplex loop: it records a `duplex.timeline` event for the `write-note` task only, so
the run holds one conversation with a timeline and one without.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_duplex import Timeline, TimelineEntry
from click.testing import CliRunner

import bench_kernel
from bench_kernel import (
    Channel,
    ChannelSession,
    ConversationSetup,
    RunConfig,
    Store,
    build_report,
    collect,
    get_plugin_manager,
    run,
)
from bench_kernel.testing import KIT_DOMAIN, KitPlugin, bench_cli

# User 0-9, agent 15-29 (1.0 s response); a backchannel at 20-21 the agent talks through.
STAMPED = Timeline(
    ticks=30,
    agent_speech=[(15, 30)],
    user_speech=[(0, 10), (20, 22)],
    user=[TimelineEntry(tick=0, text="hi", action="generate_message"), TimelineEntry(tick=20, text="mm-hmm", action="backchannel")],
)


@attrs.define(kw_only=True)
class Stamp(Channel):
    """Passes text through and records a full-duplex timeline for the write-note task."""

    name: str = "stamp"

    def start(self, setup: ConversationSetup) -> ChannelSession:
        """A pass-through session; the timeline is recorded at once."""
        if setup.task.id == "write-note":
            setup.events.emit(STAMPED, source="stamp")
        return ChannelSession()


class StampPlugin:
    """Registers the stamp channel."""

    @bench_kernel.hookimpl
    def register_channels(self, register: Callable[[Channel], None]) -> None:
        """The stamp channel."""
        register(Stamp())


@pytest.fixture
def stored(tmp_path: Path) -> tuple[Path, str, Any]:
    """A stored kit run through the stamp channel with the interaction plugin loaded."""
    plugins = get_plugin_manager(["interaction"], [("stamp", StampPlugin()), ("conformance-kit", KitPlugin())])
    db = tmp_path / "r.db"
    summary = run(RunConfig(domain=KIT_DOMAIN, channel="stamp", baseline=False, trials=1), db, plugins=plugins)
    assert summary.status == "complete"
    return db, summary.run_id, plugins


def test_only_the_conversation_with_a_timeline_gets_values(stored: tuple[Path, str, Any]) -> None:
    db, run_id, _ = stored
    store = Store(db)
    try:
        tasks = {c["id"]: c["task_id"] for c in store.conversations(run_id)}
        values = {(tasks[v["conversation_id"]], v["metric"]): v for v in store.metric_values(run_id) if v["plugin"] == "interaction"}
    finally:
        store.close()
    assert {task for task, _ in values} == {"write-note"}  # read-note had no timeline: nothing stored, not zeros
    assert not any(v["error"] for v in values.values())
    assert values["write-note", "interaction.response_latency_mean"]["value"] == pytest.approx(1.0)
    assert values["write-note", "interaction.selectivity_backchannel"]["value"] == 1.0
    assert values["write-note", "interaction.yield_rate"]["value"] is None  # no barge-in: null, not 0


def test_summary_and_section_in_the_report(stored: tuple[Path, str, Any]) -> None:
    db, run_id, plugins = stored
    store = Store(db)
    try:
        report = build_report(store, run_id, collect(plugins))
    finally:
        store.close()
    sections = {s["name"]: s for s in report.sections}
    summary = sections["interaction:interaction"]
    assert not summary["error"]
    section = sections["interaction"]
    assert not section["error"]
    panel = {row[0]: row for row in section["tables"][0]["rows"]}
    assert panel["response_rate"][1:] == [1.0, 1, "fewer than 10 events"]  # one event: shown, flagged
    assert panel["yield_rate"][1:] == [None, 0, ""]
    assert panel["response_latency_mean"][1:3] == [1.0, 1]
    per_conversation = section["tables"][2]["rows"]
    assert [row[0] for row in per_conversation] == ["write-note"]
    assert any("response_rate" in note for note in section["notes"])


def test_the_json_report_names_latency_and_interruption_figures(stored: tuple[Path, str, Any]) -> None:
    db, run_id, _ = stored
    result = CliRunner().invoke(bench_cli(["interaction"]), ["report", run_id, "--db", str(db), "--format", "json"])
    assert result.exit_code == 0, result.output
    text = result.stdout
    report = json.loads(text[text.index("{") :])
    names = json.dumps(report)
    assert "response_latency_mean" in names and "agent_interruption_rate" in names and "interruption_rate" in names


def test_the_plots_command(stored: tuple[Path, str, Any], tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    db, run_id, _ = stored
    out = tmp_path / "plots"
    result = CliRunner().invoke(bench_cli(["interaction"]), ["interaction-plots", run_id, "--db", str(db), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["latency.png", "timeline_write-note_0.png"]
    assert all(p.read_bytes().startswith(b"\x89PNG") for p in out.iterdir())


def test_an_empty_run_has_no_summary_and_a_note(tmp_path: Path) -> None:
    plugins = get_plugin_manager(["interaction"], [("conformance-kit", KitPlugin())])
    db = tmp_path / "r.db"
    summary = run(RunConfig(domain=KIT_DOMAIN, baseline=False, trials=1), db, plugins=plugins)
    store = Store(db)
    try:
        report = build_report(store, summary.run_id, collect(plugins))
    finally:
        store.close()
    sections = {s["name"]: s for s in report.sections}
    assert "interaction:interaction" not in sections or not sections["interaction:interaction"]["tables"]
    assert "No full-duplex conversation" in sections["interaction"]["notes"][0]
