"""Full-duplex runs in tau2's voice format: the export's ticks, the round trip through import, tau2's own loader.

With BENCH_TAU2_PYTHON naming a Python where `import tau2` works, tau2's `Results.load` reads a real export of a
bench full-duplex run (both layouts) and what tau2 derives from it (get_messages, responsiveness, its interaction
metrics) is compared with bench's trajectory and timeline.
"""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from bench_duplex import Timeline, TimelineEntry, ToolStamp
from bench_tau2.results import import_results
from bench_tau2.ticks import export_duplex, import_duplex, responsiveness, timeline_of
from click.testing import CliRunner

from bench_kernel import Store
from bench_kernel.testing import bench_cli

cli = bench_cli(["tau2"])
TASKS = ("upgrade_by_email", "reactivate_and_restart")


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture(scope="module")
def run_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("duplex") / "run.db"
    invoke(
        "run",
        "--plugin",
        "mock",
        "--mode",
        "full-duplex",
        "--no-baseline",
        "--run-id",
        "fd",
        "--db",
        str(db),
        "--format",
        "none",
        *[a for t in TASKS for a in ("--task-id", t)],
    )
    return db


@pytest.fixture(scope="module")
def exported(run_db: Path) -> Path:
    out = run_db.parent / "export"
    invoke("export", "tau2-results", "fd", "--db", str(run_db), "--layout", "dir", "-o", str(out))
    return out


def stored(db: Path, run_id: str) -> dict[str, dict[str, Any]]:
    """Each conversation of a run by task: its row, messages and events."""
    store = Store(db)
    try:
        return {
            r["task_id"]: {
                "row": r,
                "messages": [json.loads(m["message_json"]) for m in store.messages(r["id"])],
                "events": [(e["kind"], json.loads(e["data_json"])) for e in store.conversation_events(r["id"])],
            }
            for r in store.conversations(run_id)
        }
    finally:
        store.close()


def simulations(folder: Path) -> dict[str, dict[str, Any]]:
    return {s["task_id"]: s for s in (json.loads(f.read_text()) for f in sorted((folder / "simulations").glob("*.json")))}


def test_dir_layout_is_tau2s_voice_layout(exported: Path) -> None:
    meta = json.loads((exported / "results.json").read_text())
    assert "simulations" not in meta
    files = {f.stem for f in (exported / "simulations").glob("*.json")}
    assert {e["id"] for e in meta["simulation_index"]} == files and len(files) == len(TASKS)
    assert meta["info"]["speech_complexity"] == "control"


def test_export_writes_ticks_as_tau2_does(run_db: Path, exported: Path) -> None:
    ours = stored(run_db, "fd")
    for task, sim in simulations(exported).items():
        timeline = timeline_of(next(d for k, d in ours[task]["events"] if k == Timeline.kind))
        assert sim["mode"] == "full_duplex" and sim["messages"] is None
        assert [t["tick_id"] for t in sim["ticks"]] == list(range(timeline.ticks))
        tick = sim["ticks"][1]
        assert tick["tick_duration_seconds"] == 0.2
        assert tick["user_chunk"]["is_audio"] is True and tick["user_chunk"]["audio_content"] is None
        assert tick["user_chunk"]["turn_taking_action"]["action"] in ("wait", "keep_talking", "generate_message")
        assert set(tick["agent_chunk"]["raw_data"]) >= {"tick_number", "vad_events", "was_truncated"}
        assert sim["ticks"][0]["agent_chunk"]["content"] == "Hi! How can I help you today?"
        for side in ("agent", "user"):
            speaking = [t["tick_id"] for t in sim["ticks"] if t[f"{side}_chunk"]["contains_speech"]]
            assert speaking == [t for t in range(timeline.ticks) if timeline.speaking(side, t)]  # type: ignore[arg-type]
            text = "".join(t[f"{side}_chunk"]["content"] or "" for t in sim["ticks"][1:])
            assert text == "".join(e.text for e in getattr(timeline, side))
        calls = [(t["tick_id"], c["id"], c["name"]) for t in sim["ticks"] for c in t["agent_tool_calls"] + t["user_tool_calls"]]
        assert sorted(calls) == sorted((s.tick, s.id, s.name) for s in timeline.tools) and calls
        results = [r["id"] for t in sim["ticks"] for r in t["agent_tool_results"] + t["user_tool_results"]]
        assert results == [m["id"] for m in ours[task]["messages"] if m["role"] == "tool"]
        assert {k: sim["info"][k] for k in ("total_user_turns", "max_unresponded_user_turns")} == {
            k: responsiveness(timeline)[k] for k in ("total_user_turns", "max_unresponded_user_turns")
        }
        assert sim["reward_info"]["reward"] == ours[task]["row"]["reward"]


def test_import_of_the_export_keeps_trajectory_rewards_and_timeline(run_db: Path, exported: Path, tmp_path: Path) -> None:
    summary = import_results(exported, tmp_path / "imported.db", run_id="back")
    assert (summary.conversations, summary.agreeing, summary.skipped) == (len(TASKS), len(TASKS), [])
    ours, theirs = stored(run_db, "fd"), stored(tmp_path / "imported.db", "back")
    kept = ("role", "content", "tool_calls", "raw_data", "id", "error", "requestor", "turn_idx")
    for task in TASKS:
        assert [{k: m.get(k) for k in kept} for m in theirs[task]["messages"]] == [{k: m.get(k) for k in kept} for m in ours[task]["messages"]]
        assert theirs[task]["row"]["reward"] == ours[task]["row"]["reward"] == 1.0
        assert theirs[task]["row"]["termination_reason"] == ours[task]["row"]["termination_reason"]
        assert theirs[task]["events"] == [e for e in ours[task]["events"] if e[0].startswith("duplex.")]


def constructed() -> tuple[list[dict[str, Any]], Timeline]:
    """A conversation with what the mock run lacks: effects, conditions, a barge-in with truncation, an agent stop."""
    effects = (
        {"type": "burst", "file": "dog_bark.wav", "snr_db": 3.5},
        {"type": "speech_insert", "kind": "non_directed", "in_turn": False, "text": "Hold on a second.", "duration_ms": 900},
    )
    timeline = Timeline(
        tick_ms=200,
        ticks=12,
        agent_speech=[(2, 6), (9, 11)],
        user_speech=[(4, 7)],
        agent=[TimelineEntry(tick=t, text=x, utterance="a1") for t, x in ((2, "Hel"), (3, "lo "), (4, "the"))]
        + [TimelineEntry(tick=5, text="re", utterance="a1", truncated=True, vad=("speech_started",))]
        + [TimelineEntry(tick=t, text=x, utterance="a2") for t, x in ((9, "Bye"), (10, "."))],
        user=[
            TimelineEntry(tick=1, effects=effects),
            TimelineEntry(tick=4, text="Wa", utterance="u1", action="generate_message"),
            TimelineEntry(tick=5, text="it", utterance="u1"),
            TimelineEntry(tick=6, text="!", utterance="u1"),
        ],
        tools=[ToolStamp(tick=8, requestor="agent", id="c1", name="lookup")],
        conditions={
            "level": "regular",
            "persona": "lisa_brenner",
            "voice": "en_US-amy",
            "environment": "indoor",
            "background_file": "people_talking.wav",
            "burst_files": ["dog_bark.wav"],
            "voice_seed": 7,
            "noise": {"enabled": True, "snr_db": 15.0},
            "telephony": True,
            "backchannel_min_s": 3.0,
        },
    )
    messages = [
        {"role": "assistant", "content": "Hi! How can I help you today?", "raw_data": None},
        {"role": "assistant", "content": "Hello there", "raw_data": {"tick": 2, "end_tick": 6}},
        {"role": "user", "content": "Wait!", "raw_data": {"tick": 4, "end_tick": 7}},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "name": "lookup", "arguments": {"q": 1}}],
            "raw_data": {"tick": 8, "end_tick": 8},
        },
        {"role": "tool", "id": "c1", "content": "found", "requestor": "assistant", "error": False},
        {"role": "assistant", "content": "Bye.", "raw_data": {"tick": 9, "end_tick": 11}},
    ]
    return messages, timeline


def test_constructed_timeline_survives_export_and_import() -> None:
    messages, timeline = constructed()
    sim = export_duplex(messages, timeline, "2026-01-01T00:00:00+00:00", "agent_stop")
    assert sim["ticks"][11]["agent_chunk"]["content"] == "###STOP###"  # tau2's voice agent marks its stop so
    assert sim["ticks"][1]["user_chunk"]["source_effects"] == {
        "burst_noise_file": "dog_bark.wav",
        "speech_insert": {"text": "Hold on a second.", "type": "non_directed_phrase"},
    }
    assert [e["effect_type"] for e in sim["effect_timeline"]["events"]] == ["burst_noise", "out_of_turn_speech"]
    environment = sim["speech_environment"]
    assert (environment["complexity"], environment["persona_name"], environment["backchannel_min_threshold"]) == ("regular", "lisa_brenner", 3)
    found, back = import_duplex(sim, "$")
    assert back.as_data() == timeline.as_data()
    assert [(m.role, m.content, getattr(m, "raw_data", None)) for m in found] == [(m["role"], m["content"], m.get("raw_data")) for m in messages]


def test_tau2s_own_chunks_are_read_as_tau2_writes_them() -> None:
    """Without bench's additions: effects from tau2's fields, the user's stop chunk spoken, ###STOP### after agent words."""
    messages, timeline = constructed()
    sim = export_duplex(messages, timeline, "2026-01-01T00:00:00+00:00", None)
    sim.pop("info")
    for tick in sim["ticks"]:
        tick["user_chunk"]["raw_data"] = None
    sim["ticks"][10]["agent_chunk"]["content"] = ".###STOP###"
    sim["ticks"].append(
        {
            **sim["ticks"][11],
            "tick_id": 12,
            "user_chunk": {"role": "user", "content": "###STOP###", "contains_speech": True, "turn_taking_action": {"action": "generate_message"}},
        }
    )
    found, back = import_duplex(sim, "$")
    assert back.user[0].effects == (
        {"type": "burst", "file": "dog_bark.wav"},
        {"type": "speech_insert", "kind": "non_directed", "in_turn": False, "text": "Hold on a second."},
    )
    assert back.conditions["persona"] == "lisa_brenner" and back.conditions["source"] == "tau2"
    assert [m.content for m in found][-2:] == ["Bye.", "###STOP###"]
    assert back.user_speech == [(4, 7), (12, 13)]


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (("ticks",), {"0": 1}, "@ $.ticks"),
        (("ticks", 3), 7, "@ $.ticks[3]"),
        (("ticks", 4, "user_chunk", "content"), 5, "@ $.ticks[4].user_chunk.content"),
        (("ticks", 2, "agent_chunk", "utterance_ids"), "a1", "@ $.ticks[2].agent_chunk.utterance_ids"),
        (("ticks", 8, "agent_tool_calls", 0, "arguments"), "no", "$.ticks[8].agent_tool_calls[0]"),
        (("ticks", 8, "agent_tool_results", 0, "role"), "user", "$.ticks[8].agent_tool_results[0]"),
    ],
)
def test_malformed_ticks_are_one_clean_error_naming_the_path(tmp_path: Path, path: tuple[Any, ...], value: Any, where: str) -> None:
    messages, timeline = constructed()
    sim = export_duplex(messages, timeline, "2026-01-01T00:00:00+00:00", None)
    target: Any = sim
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(Exception) as caught:
        import_duplex(sim, "$")
    assert type(caught.value).__name__ == "ConfigError" and where in str(caught.value)


def test_a_malformed_simulation_is_skipped_and_named(exported: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    (copy / "simulations").mkdir(parents=True)
    (copy / "results.json").write_text((exported / "results.json").read_text())
    files = sorted((exported / "simulations").glob("*.json"))
    for f in files:
        (copy / "simulations" / f.name).write_text(f.read_text())
    broken = json.loads(files[0].read_text())
    broken["ticks"][2]["user_chunk"]["content"] = ["x"]
    (copy / "simulations" / files[0].name).write_text(json.dumps(broken))
    summary = import_results(copy, tmp_path / "i.db", run_id="broken")
    assert summary.conversations == len(TASKS) - 1
    [skipped] = summary.skipped
    assert str(copy / "simulations" / files[0].name) in skipped and "$.ticks[2].user_chunk.content" in skipped


CHECK = textwrap.dedent("""
    import json, sys
    from pathlib import Path
    from tau2.agent.base.streaming import compute_responsiveness_info
    from tau2.data_model.simulation import Results
    from tau2.metrics.voice_interaction_metrics import compute_interaction_metrics_for_experiment
    results = Results.load(Path(sys.argv[1]))
    out = [{"task_id": s.task_id, "mode": s.mode, "ticks": len(s.ticks or []), "reward": s.reward_info.reward,
            "responsiveness": compute_responsiveness_info(s.ticks or []),
            "messages": [{"role": m.role, "content": getattr(m, "content", None), "id": getattr(m, "id", None),
                          "calls": [[c.id, c.name, c.arguments] for c in getattr(m, "tool_calls", None) or []]}
                         for m in s.get_messages()]} for s in results.simulations]
    print(json.dumps({"simulations": out, "metrics": compute_interaction_metrics_for_experiment(results)}, default=str))
""")


def tau2_reads(path: Path) -> dict[str, Any]:
    python = os.environ.get("BENCH_TAU2_PYTHON")
    if not python:
        pytest.skip("set BENCH_TAU2_PYTHON to a Python where `import tau2` works to load the export with tau2's Results.load")
    done = subprocess.run([python, "-c", CHECK, str(path)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    data: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return data


def spoken(messages: list[dict[str, Any]], role: str) -> str:
    return "".join("".join((m["content"] or "").split()) for m in messages if m["role"] == role)


@pytest.mark.parametrize("layout", ["dir", "json"])
def test_tau2s_own_loader_reads_the_export(run_db: Path, tmp_path: Path, layout: str) -> None:
    out = tmp_path / ("results" if layout == "dir" else "results.json")
    invoke("export", "tau2-results", "fd", "--db", str(run_db), "--layout", layout, "-o", str(out))
    theirs = tau2_reads(out)
    ours = stored(run_db, "fd")
    latencies = []
    for sim in theirs["simulations"]:
        mine = ours[sim["task_id"]]
        timeline = timeline_of(next(d for k, d in mine["events"] if k == Timeline.kind))
        assert (sim["mode"], sim["ticks"], sim["reward"]) == ("full_duplex", timeline.ticks, mine["row"]["reward"])
        assert sim["responsiveness"] == responsiveness(timeline)
        # tau2's get_messages: one message per side and tick; the same words, calls and results in the same order.
        for role in ("assistant", "user"):
            assert spoken(sim["messages"], role) == spoken(mine["messages"], role)
        assert [c for m in sim["messages"] for c in m["calls"]] == [
            [c["id"], c["name"], c["arguments"]] for m in mine["messages"] for c in m.get("tool_calls") or []
        ]
        assert [m["id"] for m in sim["messages"] if m["role"] == "tool"] == [m["id"] for m in mine["messages"] if m["role"] == "tool"]
        latencies += [
            0.2 * (next(a for a, _ in timeline.agent_speech if a >= end) - end)
            for _, end in timeline.user_speech
            if any(a >= end for a, _ in timeline.agent_speech)
        ]
    assert theirs["metrics"]["response_latency_mean"] == pytest.approx(sum(latencies) / len(latencies))
    assert theirs["metrics"]["counts"]["response_total"] == len(latencies)
