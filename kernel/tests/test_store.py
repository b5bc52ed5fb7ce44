"""Tests of the SQLite store: the migrated schema, WAL, plugin migrations and conversation writes."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Database, Migrations

import bench_kernel
from bench_kernel.errors import ConfigError, ResumeConflictError
from bench_kernel.plugins import collect, get_plugin_manager
from bench_kernel.schema.messages import AssistantMessage, TerminationReason, ToolCall, ToolMessage, UserMessage
from bench_kernel.schema.results import ConversationResult, RewardInfo
from bench_kernel.store.store import MetricValue, Store

EXPECTED_COLUMNS: dict[str, dict[str, type]] = {
    "runs": {
        "id": str,
        "created_utc": str,
        "updated_utc": str,
        "status": str,
        "config_json": str,
        "config_hash": str,
        "plugins_json": str,
        "task_sets_json": str,
        "seed": int,
        "holder_host": str,
        "holder_pid": int,
        "holder_started": str,
        "holder_token": str,
        "heartbeat_utc": str,
    },
    "conversations": {
        "id": str,
        "run_id": str,
        "arm": str,
        "task_id": str,
        "trial": int,
        "seed": int,
        "agent": str,
        "user": str,
        "termination_reason": str,
        "reward": float,
        "reward_info_json": str,
        "error": str,
        "started_utc": str,
        "ended_utc": str,
        "duration_ms": int,
        "agent_cost": float,
        "user_cost": float,
        "num_messages": int,
        "channel": str,
        "attributes_json": str,
        "attribution": str,
        "attribution_evidence": str,
        "retry": int,
        "superseded_by": str,
    },
    "messages": {
        "conversation_id": str,
        "idx": int,
        "role": str,
        "content": str,
        "tool_calls_json": str,
        "tool_call_id": str,
        "requestor": str,
        "error": int,
        "cost": float,
        "usage_json": str,
        "message_json": str,
        "turn_idx": int,
        "timestamp_utc": str,
        "latency_ms": int,
    },
    "tool_calls": {
        "conversation_id": str,
        "message_idx": int,
        "call_id": str,
        "name": str,
        "requestor": str,
        "arguments_json": str,
        "result": str,
        "error": int,
    },
    "metric_values": {"run_id": str, "conversation_id": str, "metric": str, "plugin": str, "value": float, "details_json": str, "error": str},
    "events": {"id": int, "run_id": str, "conversation_id": str, "ts_utc": str, "kind": str, "data_json": str},
    "llm_calls": {
        "id": int,
        "run_id": str,
        "conversation_id": str,
        "role": str,
        "model": str,
        "request_hash": str,
        "prompt_tokens": int,
        "completion_tokens": int,
        "latency_ms": int,
        "cost": float,
        "cost_known": int,
        "cached": int,
        "error": str,
        "ts_utc": str,
        "attempts": int,
        "arm": str,
        "kind": str,
    },
    "conversation_events": {
        "conversation_id": str,
        "idx": int,
        "run_id": str,
        "message_index": int,
        "kind": str,
        "source": str,
        "data_json": str,
        "ts_utc": str,
    },
    "llm_cache": {"key": str, "response_json": str, "created_utc": str},
    "plugins_used": {"run_id": str, "name": str, "distribution": str, "version": str},
}
EXPECTED_PKS = {
    "runs": ["id"],
    "conversations": ["id"],
    "messages": ["conversation_id", "idx"],
    "tool_calls": ["conversation_id", "message_idx", "call_id"],
    "metric_values": ["conversation_id", "plugin", "metric"],
    "events": ["id"],
    "llm_calls": ["id"],
    "conversation_events": ["conversation_id", "idx"],
    "llm_cache": ["key"],
    "plugins_used": ["run_id", "name"],
}


@pytest.fixture
def store(tmp_path: Path):
    opened = Store(tmp_path / "runs.db")
    yield opened
    opened.close()


def migrations_applied(db: Database) -> list[tuple[str, str]]:
    return [(r["migration_set"], r["name"]) for r in db.query("select migration_set, name from _sqlite_migrations order by id")]


def result(
    run_id: str = "r",
    *,
    task_id: str = "t",
    trial: int = 0,
    arm: str = "agent",
    termination: TerminationReason = TerminationReason.USER_STOP,
    reward: float | None = 1.0,
) -> ConversationResult:
    messages = [
        AssistantMessage(content="Hi!", cost=0.0),
        UserMessage(content="Add one.", cost=0.25, usage={"prompt_tokens": 10, "completion_tokens": 2}),
        AssistantMessage(tool_calls=[ToolCall(id="c1", name="increment", arguments={"name": "a"})], cost=0.5),
        ToolMessage(id="c1", content='{"value": "1"}'),
        UserMessage(content="###STOP###", cost=0.25),
    ]
    return ConversationResult(
        run_id=run_id,
        arm=arm,
        task_id=task_id,
        trial=trial,
        seed=7,
        agent="oracle",
        user="scripted",
        termination_reason=termination,
        messages=messages if reward is not None else [],
        reward_info=RewardInfo(reward=reward) if reward is not None else None,
        started_utc="2026-01-01T00:00:00.000+00:00",
        ended_utc="2026-01-01T00:00:01.000+00:00",
        duration_ms=1000,
        agent_cost=0.5,
        user_cost=0.5,
    )


def begin(store: Store, run_id: str = "r", config: dict[str, Any] | None = None) -> bool:
    config = config or {"agent": "oracle", "trials": 1}
    return store.begin_run(run_id, config, str(sorted(config.items())), [{"name": "toy", "distribution": None, "version": None}], {"toy": "abc"}, 300)


# --------------------------------------------------------------------------- schema


def test_fresh_database_has_the_expected_tables_and_columns(store: Store) -> None:
    for table, columns in EXPECTED_COLUMNS.items():
        assert store.db[table].exists(), table
        assert store.db[table].columns_dict == columns, table
        assert store.db[table].pks == EXPECTED_PKS[table], table


def test_conversations_are_unique_per_run_arm_task_trial(store: Store) -> None:
    unique = [i.columns for i in store.db["conversations"].indexes if i.unique]
    assert ["run_id", "arm", "task_id", "trial"] in unique


def test_database_is_in_wal_mode(tmp_path: Path) -> None:
    Store(tmp_path / "runs.db").close()
    assert Database(tmp_path / "runs.db").journal_mode == "wal"


def test_applying_migrations_twice_is_idempotent(tmp_path: Path) -> None:
    Store(tmp_path / "runs.db").close()
    first = migrations_applied(Database(tmp_path / "runs.db"))
    again = Store(tmp_path / "runs.db")
    assert migrations_applied(again.db) == first
    assert all(again.db[t].columns_dict == c for t, c in EXPECTED_COLUMNS.items())
    again.close()
    assert {name for _, name in first} >= {
        "m000_wal",
        "m001_runs",
        "m002_conversations",
        "m003_messages",
        "m004_metric_values",
        "m005_events_and_llm_calls",
    }
    assert {s for s, _ in first} == {"bench-kernel"}


def test_in_memory_store_works() -> None:
    memory = Store(":memory:")
    assert memory.path is None
    assert begin(memory)
    memory.close()


# --------------------------------------------------------------------------- plugin migrations


def plugin_migrations() -> Migrations:
    migrations = Migrations("bench-shifts")

    @migrations(name="m001_create_shifts")
    def m001_create_shifts(db: Database) -> None:
        db["shifts"].create({"conversation_id": str, "turn": int, "goal": str}, pk=("conversation_id", "turn"))

    @migrations(name="m002_add_confidence")
    def m002_add_confidence(db: Database) -> None:
        db["shifts"].add_column("confidence", float)

    return migrations


class MigratingPlugin:
    def __init__(self, migrations: Migrations) -> None:
        self.migrations = migrations

    @bench_kernel.hookimpl
    def register_migrations(self, register: Callable[[Migrations], None]) -> None:
        register(self.migrations)


def test_plugin_migrations_registered_through_the_hook_are_applied(tmp_path: Path) -> None:
    registry = collect(get_plugin_manager([], extra=[("shifts", MigratingPlugin(plugin_migrations()))]))
    assert len(registry.migrations) == 1
    Store(tmp_path / "runs.db").close()  # the kernel tables exist first, as for a store made before the plugin

    store = Store(tmp_path / "runs.db", registry.migrations)
    assert store.db["shifts"].columns_dict == {"conversation_id": str, "turn": int, "goal": str, "confidence": float}
    assert ("bench-shifts", "m002_add_confidence") in migrations_applied(store.db)
    store.close()

    again = Store(tmp_path / "runs.db", collect(get_plugin_manager([], extra=[("shifts", MigratingPlugin(plugin_migrations()))])).migrations)
    assert [m for m in migrations_applied(again.db) if m[0] == "bench-shifts"] == [
        ("bench-shifts", "m001_create_shifts"),
        ("bench-shifts", "m002_add_confidence"),
    ]
    again.close()


# --------------------------------------------------------------------------- runs


def test_begin_run_creates_then_resumes(store: Store) -> None:
    assert begin(store) is True
    run = store.run("r")
    assert run.status == "running" and run.seed == 300 and run.config == {"agent": "oracle", "trials": 1}
    assert [r["name"] for r in store.db.query("select name from plugins_used where run_id = 'r'")] == ["toy"]
    store.set_status("r", "complete")
    assert begin(store) is False
    assert store.run("r").status == "running"


def test_begin_run_with_a_changed_config_names_the_keys(store: Store) -> None:
    begin(store)
    with pytest.raises(ResumeConflictError, match=r"changed: trials\)"):
        begin(store, config={"agent": "oracle", "trials": 2})


def test_begin_run_with_changed_tasks_conflicts(store: Store) -> None:
    config = {"agent": "oracle"}
    store.begin_run("r", config, "h", [], {"toy": "abc"}, 1)
    with pytest.raises(ResumeConflictError, match="tasks or policy changed"):
        store.begin_run("r", config, "h", [], {"toy": "def"}, 1)


def test_a_plugin_that_adds_results_later_lists_itself_with_the_run_once(store: Store) -> None:
    begin(store)
    added = {"name": "review", "distribution": "bench-review", "version": "0.1.0", "builtin": False}
    assert store.add_run_plugin("r", added) is True
    assert store.add_run_plugin("r", added) is False  # listed already: left as it is
    plugins = store.run("r").plugins
    assert [p["name"] for p in plugins] == ["toy", "review"] and plugins[1]["added_utc"]
    assert sorted(r["name"] for r in store.db.query("select name from plugins_used where run_id = 'r'")) == ["review", "toy"]
    assert begin(store) is False  # a resume of the run is not a changed configuration


def test_missing_run_names_recent_ones(store: Store) -> None:
    begin(store, "known")
    assert store.run("nope", missing_ok=True) is None
    with pytest.raises(ConfigError, match=r"no run 'nope'.*recent: known"):
        store.run("nope")


# --------------------------------------------------------------------------- conversations


def test_save_conversation_writes_all_tables(store: Store) -> None:
    begin(store)
    store.save_conversation(
        result(),
        [
            MetricValue(metric="reward", plugin="bench-kernel", value=1.0, details={"a": 1}),
            MetricValue(metric="broken", plugin="p", value=None, error="boom"),
        ],
    )
    (row,) = store.conversations("r")
    assert (row["id"], row["reward"], row["num_messages"], row["termination_reason"]) == ("r/agent/t/0", 1.0, 5, "user_stop")
    messages = store.messages("r/agent/t/0")
    assert [m["role"] for m in messages] == ["assistant", "user", "assistant", "tool", "user"]
    assert messages[3]["tool_call_id"] == "c1" and messages[3]["error"] == 0
    assert messages[1]["usage_json"] == '{"completion_tokens":2,"prompt_tokens":10}'
    (call,) = store.db.query("select * from tool_calls")
    assert (call["name"], call["message_idx"], call["result"], call["requestor"]) == ("increment", 2, '{"value": "1"}', "assistant")
    values = {v["metric"]: v for v in store.metric_values("r")}
    assert values["reward"]["details_json"] == '{"a":1}'
    assert values["broken"]["value"] is None and values["broken"]["error"] == "boom"


def test_finished_units_exclude_infrastructure_errors(store: Store) -> None:
    begin(store)
    store.save_conversation(result(task_id="ok"), [])
    store.save_conversation(result(task_id="infra", termination=TerminationReason.INFRASTRUCTURE_ERROR, reward=None), [])
    store.save_conversation(result(task_id="ok", arm="baseline"), [])
    assert store.finished_units("r") == {("agent", "ok", 0), ("baseline", "ok", 0)}


def test_saving_a_conversation_again_replaces_it(store: Store) -> None:
    begin(store)
    store.save_conversation(
        result(termination=TerminationReason.INFRASTRUCTURE_ERROR, reward=None), [MetricValue(metric="m", plugin="p", value=None, error="x")]
    )
    store.save_conversation(result(), [MetricValue(metric="m", plugin="p", value=2.0)])
    assert len(store.conversations("r")) == 1
    assert store.conversations("r")[0]["reward"] == 1.0
    assert len(store.messages("r/agent/t/0")) == 5
    assert [v["value"] for v in store.metric_values("r")] == [2.0]


def test_a_duplicate_insert_is_refused_by_the_schema(store: Store) -> None:
    begin(store)
    store.save_conversation(result(), [])
    with pytest.raises(sqlite3.IntegrityError):
        store.db["conversations"].insert({"id": "other", "run_id": "r", "arm": "agent", "task_id": "t", "trial": 0})


def test_runs_lists_counts_and_mean_agent_reward(store: Store) -> None:
    begin(store)
    store.save_conversation(result(task_id="a", reward=1.0), [])
    store.save_conversation(result(task_id="b", reward=0.0), [])
    store.save_conversation(result(task_id="a", arm="baseline", reward=0.0), [])
    (row,) = store.runs()
    assert (row["id"], row["conversations"], row["mean_reward"]) == ("r", 3, 0.5)


def test_events_are_appended(store: Store) -> None:
    begin(store)
    store.add_event("r", "run.note", {"x": 1}, conversation_id="r/agent/t/0")
    (event,) = [e for e in store.db.query("select * from events where kind = 'run.note'")]
    assert event["data_json"] == '{"x":1}' and event["conversation_id"] == "r/agent/t/0"


def test_a_database_from_before_the_seams_upgrades_in_place_and_keeps_its_runs(tmp_path: Path) -> None:
    from sqlite_utils import Database

    from bench_kernel.report.report import summary
    from bench_kernel.store.migrations import migrations as kernel_migrations

    path = tmp_path / "old.db"
    old = Database(path)
    kernel_migrations.apply(old, stop_before="m008_conversation_events")
    old["runs"].insert(
        {
            "id": "r",
            "created_utc": "t",
            "updated_utc": "t",
            "status": "complete",
            "config_json": "{}",
            "config_hash": "h",
            "plugins_json": "[]",
            "task_sets_json": "{}",
            "seed": 1,
        }
    )
    old["conversations"].insert(
        {
            "id": "r/agent/t/0",
            "run_id": "r",
            "arm": "agent",
            "task_id": "t",
            "trial": 0,
            "seed": 1,
            "agent": "a",
            "user": "u",
            "termination_reason": "user_stop",
            "reward": 1.0,
            "num_messages": 0,
        }
    )
    old["metric_values"].insert_all(
        [
            {"run_id": "r", "conversation_id": "r/agent/t/0", "metric": "reward", "plugin": "bench-kernel", "value": 1.0},
            {"run_id": "r", "conversation_id": "r/agent/t/0", "metric": "turns", "plugin": "acme", "value": 3.0},
        ]
    )
    old["llm_calls"].insert({"run_id": "r", "conversation_id": "r/agent/t/0", "role": "agent", "model": "m", "cost": 0.5, "cached": 0, "ts_utc": "t"})
    old.close()

    upgraded = Store(path)
    try:
        assert upgraded.db["metric_values"].pks == ["conversation_id", "plugin", "metric"]
        assert {(v["plugin"], v["metric"]) for v in upgraded.metric_values("r")} == {("bench-kernel", "reward"), ("acme", "turns")}
        assert list(upgraded.db.query("select arm, kind from llm_calls")) == [{"arm": "agent", "kind": "chat"}]
        figures, costs = summary(upgraded, "r"), upgraded.llm_costs("r")  # what the report reads (bench-report's)
    finally:
        upgraded.close()
    assert figures["mean_reward"] == 1.0 and [c["cost"] for c in costs] == [0.5]
