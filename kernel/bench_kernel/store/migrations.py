"""The kernel's append-only migrations: never edit one that has shipped, never reuse a name."""

from __future__ import annotations

from sqlite_utils import Database, Migrations

migrations = Migrations("bench-kernel")


@migrations(name="m000_wal", transactional=False)
def m000_wal(db: Database) -> None:
    # WAL lets `bench report` read while a run writes.
    db.enable_wal()


@migrations(name="m001_runs")
def m001_runs(db: Database) -> None:
    db.table("runs").create(
        {
            "id": str,
            "created_utc": str,
            "updated_utc": str,
            "status": str,
            "config_json": str,
            "config_hash": str,
            "plugins_json": str,
            "task_sets_json": str,
            "seed": int,
        },
        pk="id",
    )


@migrations(name="m002_conversations")
def m002_conversations(db: Database) -> None:
    db.table("conversations").create(
        {
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
        },
        pk="id",
        foreign_keys=[("run_id", "runs", "id")],
    )
    # One row per (run, arm, task, trial): resuming can never duplicate a conversation.
    db.table("conversations").create_index(["run_id", "arm", "task_id", "trial"], unique=True)


@migrations(name="m003_messages")
def m003_messages(db: Database) -> None:
    db.table("messages").create(
        {
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
        },
        pk=("conversation_id", "idx"),
    )
    db.table("tool_calls").create(
        {
            "conversation_id": str,
            "message_idx": int,
            "call_id": str,
            "name": str,
            "requestor": str,
            "arguments_json": str,
            "result": str,
            "error": int,
        },
        pk=("conversation_id", "message_idx", "call_id"),
    )
    db.table("tool_calls").create_index(["name"])


@migrations(name="m004_metric_values")
def m004_metric_values(db: Database) -> None:
    # Long format: a new metric never needs a new column.
    db.table("metric_values").create(
        {"run_id": str, "conversation_id": str, "metric": str, "plugin": str, "value": float, "details_json": str, "error": str},
        pk=("conversation_id", "metric"),
    )
    db.table("metric_values").create_index(["run_id", "metric"])


@migrations(name="m005_events_and_llm_calls")
def m005_events_and_llm_calls(db: Database) -> None:
    db.table("events").create({"id": int, "run_id": str, "conversation_id": str, "ts_utc": str, "kind": str, "data_json": str}, pk="id")
    db.table("events").create_index(["run_id", "kind"])
    db.table("llm_calls").create(
        {
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
        },
        pk="id",
    )
    db.table("llm_calls").create_index(["run_id", "role"])
    db.table("plugins_used").create({"run_id": str, "name": str, "distribution": str, "version": str}, pk=("run_id", "name"))


@migrations(name="m006_llm_cache")
def m006_llm_cache(db: Database) -> None:
    # Responses keyed by a hash of endpoint + request (seed included): a cached re-run is free and identical.
    db.table("llm_cache").create({"key": str, "response_json": str, "created_utc": str}, pk="key")
    db.table("llm_calls").add_column("attempts", int)


@migrations(name="m008_conversation_events")
def m008_conversation_events(db: Database) -> None:
    # Events emitted during a conversation (goal shifts, channel transcripts, ...), written with it.
    db.table("conversation_events").create(
        {"conversation_id": str, "idx": int, "run_id": str, "message_index": int, "kind": str, "source": str, "data_json": str, "ts_utc": str},
        pk=("conversation_id", "idx"),
    )
    db.table("conversation_events").create_index(["run_id", "kind"])
    db.table("messages").add_column("turn_idx", int)
    db.table("messages").add_column("timestamp_utc", str)
    db.table("messages").add_column("latency_ms", int)
    db.table("conversations").add_column("channel", str)


@migrations(name="m009_metric_values_by_plugin")
def m009_metric_values_by_plugin(db: Database) -> None:
    # Metric names are namespaced by plugin: two plugins may each have a metric called "recovery".
    db.table("metric_values").transform(pk=("conversation_id", "plugin", "metric"))


@migrations(name="m010_llm_calls_arm_kind")
def m010_llm_calls_arm_kind(db: Database) -> None:
    # Calls are written as they are made (kept even when their conversation never finishes),
    # so the ledger carries its arm and kind itself instead of joining finished conversations.
    db.table("llm_calls").add_column("arm", str)
    db.table("llm_calls").add_column("kind", str)
    db.execute(
        "update llm_calls set arm = (select c.arm from conversations c where c.id = llm_calls.conversation_id), kind = 'chat' where arm is null"
    )


@migrations(name="m011_conversation_attributes")
def m011_conversation_attributes(db: Database) -> None:
    # Task attributes (domain, persona, intent, ...) kept per conversation: reports break figures down by them.
    db.table("conversations").add_column("attributes_json", str)


@migrations(name="m012_run_lease")
def m012_run_lease(db: Database) -> None:
    # The process running a run holds its lease: a second process refuses the same run id while the holder
    # lives, and a run whose holder died (kill -9) reads as interrupted instead of running forever.
    db.table("runs").add_column("holder_host", str)
    db.table("runs").add_column("holder_pid", int)
    db.table("runs").add_column("holder_started", str)
    db.table("runs").add_column("holder_token", str)
    db.table("runs").add_column("heartbeat_utc", str)


@migrations(name="m013_task_audits")
def m013_task_audits(db: Database) -> None:
    # One audit per task content and domain data (`bench audit`): re-audits, runs and reports reuse it.
    db.table("task_audits").create(
        {"domain": str, "task_id": str, "task_hash": str, "data_fingerprint": str, "audit_version": str, "audit_json": str, "created_utc": str},
        pk=("domain", "task_id", "task_hash", "data_fingerprint", "audit_version"),
    )


@migrations(name="m014_conversation_attribution")
def m014_conversation_attribution(db: Database) -> None:
    # Who a failed conversation's failure is attributed to (docs/attribution.md), and the replays of
    # `bench run --retry-attributed`: a replay is a new row (its id ends /retryN) and the row it replaces is kept,
    # marked superseded_by the replay's id. One current (unsuperseded) row per (run, arm, task, trial).
    conversations = db.table("conversations")
    conversations.add_column("attribution", str)
    conversations.add_column("attribution_evidence", str)
    conversations.add_column("retry", int, not_null_default=0)
    conversations.add_column("superseded_by", str)
    db.execute("drop index if exists idx_conversations_run_id_arm_task_id_trial")
    db.execute("create unique index idx_conversations_current on conversations (run_id, arm, task_id, trial) where superseded_by is null")
    db.execute("create unique index idx_conversations_run_id_arm_task_id_trial_retry on conversations (run_id, arm, task_id, trial, retry)")
