"""`bench rescore` through the CLI and SQLite.

The toy domain is played by an oracle that counts its sessions (and fails one task's set-up, an infrastructure
error), judged by a judge that counts its verdicts, scored by a metric and a reward component whose settings a test
changes between the run and the rescore (rescore_world.py): a rescore must start no session and ask no judge, and
give the stored values exactly when nothing changed, the new ones where something did.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from rescore_world import BROKEN, CALLS, PLUGIN, TASKS, WORLD, Brevity, Length, World
from structlog.testing import capture_logs

from bench_kernel.testing import bench_cli


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    """rescore_world.py installed as the plugin `rescore-toy` (its dist-info on sys.path, as pip leaves it), reset."""
    info = tmp_path / "site" / "bench_rescore_toy-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: bench-rescore-toy\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(f"[bench]\n{PLUGIN} = rescore_world:WORLD\n")
    monkeypatch.syspath_prepend(str(info.parent))
    monkeypatch.delenv("BENCH_DEBUG", raising=False)
    monkeypatch.delenv("BENCH_DB", raising=False)
    WORLD.reset()
    with capture_logs():  # the CLI entry point, not run here, is what sends logs to stderr: stdout holds only output
        yield WORLD
    WORLD.reset()


def invoke(*args: str) -> Result:
    """`bench ARGS` in-process."""
    return CliRunner().invoke(bench_cli(["trust"]), list(args), catch_exceptions=True)


def stored(db: Path, run_id: str) -> dict[str, Any]:
    """What a run stored per conversation (ids without the run's prefix): rows, values, messages and events."""
    con = sqlite3.connect(db)
    cut = len(run_id)
    rows = {
        cid[cut:]: rest
        for cid, *rest in con.execute(
            "select id, arm, termination_reason, reward, reward_info_json, error, attribution, retry, superseded_by is null "
            "from conversations where run_id = ?",
            [run_id],
        )
    }
    values = {
        (cid[cut:], plugin, metric): rest
        for cid, plugin, metric, *rest in con.execute(
            "select conversation_id, plugin, metric, value, details_json, error from metric_values where run_id = ?", [run_id]
        )
    }
    messages = {
        (cid[cut:], idx): text
        for cid, idx, text in con.execute(
            "select m.conversation_id, m.idx, m.message_json from messages m join conversations c on c.id = m.conversation_id where c.run_id = ?",
            [run_id],
        )
    }
    events = {
        (cid[cut:], idx): rest
        for cid, idx, *rest in con.execute(  # ts_utc left out: metrics emit theirs anew
            "select conversation_id, idx, kind, source, data_json, message_index from conversation_events where run_id = ?", [run_id]
        )
    }
    con.close()
    return {"conversations": rows, "values": values, "messages": messages, "events": events}


@pytest.fixture
def played(world: World, tmp_path: Path) -> tuple[Path, str]:
    """A run of the toy domain with the counting oracle and judge, one task failing as an infrastructure error."""
    db = tmp_path / "bench.db"
    args = ("--agent", "counting-oracle", "--judge", "counting-judge", "--db", str(db), "--format", "none", "--progress", "none")
    result = invoke("run", "--plugin", PLUGIN, *args)
    assert "infrastructure error" in result.output, result.output  # the broken task's: stored, the run exits 1
    [run_id] = re.findall(r"run (\S+): \d+ conversations run", result.stderr)
    assert CALLS["sessions"] == len(TASKS) and CALLS["verdicts"] == 2  # the NL task, agent and baseline arms
    return db, run_id


def rescore(db: Path, run_id: str, *extra: str) -> str:
    """Rescore a run; the new run's id."""
    result = invoke("rescore", run_id, "--db", str(db), "--format", "none", *extra)
    assert result.exit_code == 0, result.output
    [new] = re.findall(r"^run (\S+): ", result.stderr, re.MULTILINE)
    return new


def test_a_rescore_with_nothing_changed_stores_the_same_scores_and_plays_nothing(played: tuple[Path, str]) -> None:
    db, run_id = played
    before = dict(CALLS)

    new = rescore(db, run_id)

    assert new == f"{run_id}-rescore-1"
    assert before == CALLS  # no session started, no verdict asked: the stored ones are reused
    source, copy = stored(db, run_id), stored(db, new)
    assert copy == source  # rewards, reward info, metric values, messages and events, conversation by conversation
    infra = {cid for cid, row in copy["conversations"].items() if row[1] == "infrastructure_error"}
    assert infra == {f"/agent/{BROKEN}/0"}  # carried over as such, unscored
    assert copy["events"] and any(kind == "length.seen" for kind, *_ in copy["events"].values())
    run = sqlite3.connect(db).execute("select config_json, config_hash, status from runs where id = ?", [new]).fetchone()
    config = json.loads(run[0])
    assert config["rescored_from"] == run_id
    assert run[1:] == sqlite3.connect(db).execute("select config_hash, status from runs where id = ?", [run_id]).fetchone()


def test_the_report_of_a_rescore_matches_its_source_and_names_it(played: tuple[Path, str]) -> None:
    db, run_id = played
    new = rescore(db, run_id)

    source, copy = (json.loads(invoke("report", r, "--db", str(db), "--format", "json").stdout) for r in (run_id, new))
    table = invoke("report", new, "--db", str(db)).stdout

    assert copy["header"].pop("rescored_from") == run_id
    assert {k: v for k, v in copy.items() if k not in ("run_id", "config")} == {k: v for k, v in source.items() if k not in ("run_id", "config")}
    assert f"rescored from run {run_id}: its conversations scored again, none played" in table


def test_a_changed_metric_gives_its_new_values_and_the_rewards_stay(played: tuple[Path, str], world: World) -> None:
    db, run_id = played
    world.metric = Length(factor=2.0)

    new = rescore(db, run_id)

    source, copy = stored(db, run_id), stored(db, new)
    lengths = {key: row[0] for key, row in source["values"].items() if key[2] == "length"}
    assert lengths and {key: row[0] for key, row in copy["values"].items() if key[2] == "length"} == {
        key: value * 2 for key, value in lengths.items()
    }
    assert {k: v for k, v in copy["values"].items() if k[2] != "length"} == {k: v for k, v in source["values"].items() if k[2] != "length"}
    assert copy["conversations"] == source["conversations"]
    assert CALLS["sessions"] == len(TASKS) and CALLS["verdicts"] == 2


def test_a_changed_reward_component_changes_the_rewards_it_decides(played: tuple[Path, str], world: World) -> None:
    db, run_id = played
    world.component = Brevity(limit=1)

    result = invoke("rescore", run_id, "--db", str(db), "--format", "none")

    assert result.exit_code == 0, result.output
    new = f"{run_id}-rescore-1"
    assert "2 rewards or components changed" in result.stderr  # the brief task's agent and baseline conversations
    source, copy = stored(db, run_id), stored(db, new)
    changed = {cid for cid in source["conversations"] if source["conversations"][cid][2] != copy["conversations"][cid][2]}
    assert changed == {"/agent/inc-a-brief/0"}  # the baseline failed it already
    assert copy["conversations"]["/agent/inc-a-brief/0"][2] == 0.0
    assert copy["values"][("/agent/inc-a-brief/0", "bench-kernel", "component.BREVITY")][0] == 0.0


def test_rejudge_asks_the_judge_again(played: tuple[Path, str]) -> None:
    db, run_id = played

    new = rescore(db, run_id, "--rejudge")

    assert CALLS["verdicts"] == 4 and CALLS["sessions"] == len(TASKS)
    info = json.loads(stored(db, new)["conversations"]["/agent/polite/0"][3])
    [nl] = [c for c in info["components"] if c["component"] == "NL_ASSERTION"]
    assert nl["checks"][0]["detail"] in ("verdict 3", "verdict 4")  # a new verdict, not the stored one


def test_the_new_run_id_is_the_first_free_one_and_a_taken_one_is_refused(played: tuple[Path, str]) -> None:
    db, run_id = played

    first, second = rescore(db, run_id), rescore(db, run_id)
    taken = invoke("rescore", run_id, "--db", str(db), "--run-id", first)

    assert (first, second) == (f"{run_id}-rescore-1", f"{run_id}-rescore-2")
    assert taken.exit_code != 0 and f"run {first!r} already exists" in taken.stderr


def test_a_domain_whose_tasks_changed_since_the_run_is_refused(played: tuple[Path, str], world: World) -> None:
    db, run_id = played
    world.tasks = [{**t, "ticket": "changed"} if t["id"] == "lamp" else t for t in TASKS]

    result = invoke("rescore", run_id, "--db", str(db))

    assert result.exit_code != 0
    assert f"the tasks or policy of domain 'toy' changed since run {run_id!r}" in result.stderr
    assert sqlite3.connect(db).execute("select count(*) from runs").fetchone()[0] == 1  # nothing stored
