"""The SQLite results store: runs, conversations written whole (one commit per turn of a run's loop), metric values in long format."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
from sqlite_utils import Database, Migrations  # (bench-codecache, where installed, imports it without numpy)

from bench_kernel.errors import ConfigError, ResumeConflictError, RunBusyError, StoreError
from bench_kernel.schema.events import Event
from bench_kernel.schema.messages import AssistantMessage, Message, TerminationReason, ToolMessage, UserMessage
from bench_kernel.schema.results import ConversationResult
from bench_kernel.serialization import canonical_json, unstructure, utc_now
from bench_kernel.store.lease import Holder, heartbeat_age_s, holder_alive
from bench_kernel.store.migrations import migrations as kernel_migrations

BUSY_TIMEOUT_MS = 30_000
"""How long a writer waits for another process's write transaction to end before giving up."""
GROUP_COMMIT_S = 0.05
"""A run's commit window: its grouped writes commit together this often (what a process killed outright can lose)."""


@attrs.frozen(kw_only=True)
class MetricValue:
    """One value of one metric for one conversation."""

    metric: str
    plugin: str
    value: float | None
    details: Any = None
    error: str | None = None


@attrs.frozen(kw_only=True)
class PluginRows:
    """Rows a metric wrote for its plugin's own tables, stored in the conversation's transaction."""

    plugin: str
    metric: str
    rows: list[tuple[str, dict[str, Any]]]


@attrs.frozen(kw_only=True)
class RunRecord:
    """A stored run: read its fields as attributes (`run.id`) or by key (`run["id"]`), like the rows of `RunView`."""

    id: str
    created_utc: str
    updated_utc: str
    status: str
    """running, complete, partial, failed or interrupted."""
    config: dict[str, Any]
    """The run's configuration as stored (its identity: what decides its results)."""
    config_hash: str
    plugins: list[dict[str, Any]]
    """The plugins the run loaded: name, distribution, version, builtin."""
    task_sets: dict[str, str]
    """Domain name -> content hash of its tasks and policy."""
    seed: int

    def __getitem__(self, key: str) -> Any:
        """A field by name, so report code written against row dicts reads a run the same way."""
        if key not in RUN_FIELDS:
            raise KeyError(f"{key!r}: a run record has {', '.join(RUN_FIELDS)}")
        return getattr(self, key)

    def keys(self) -> tuple[str, ...]:
        """The field names (`dict(run)` gives the record as a plain dict)."""
        return RUN_FIELDS


RUN_FIELDS: tuple[str, ...] = tuple(f.name for f in attrs.fields(RunRecord))


def open_store(path: Path | str, extra_migrations: Sequence[Migrations] = (), *, read_only: bool = False) -> Store:
    """Open (creating and migrating, unless read_only) the results database; failures are one StoreError that says what to do."""
    try:
        return Store(path, extra_migrations, read_only=read_only)
    except sqlite3.Error as exc:
        raise store_error(path, exc) from exc


def open_store_for_reading(path: Path | str, extra_migrations: Sequence[Migrations] = ()) -> Store:
    """Open the results database to read it: read-only when it cannot be written (file, directory or file system)."""
    target = Path(path)
    if not target.exists() or (os.access(target, os.W_OK) and os.access(target.resolve().parent, os.W_OK)):
        try:
            return Store(target, extra_migrations)
        except sqlite3.Error as exc:
            text = str(exc).lower()
            if not isinstance(exc, sqlite3.OperationalError) or not any(s in text for s in ("readonly", "read-only", "unable to open")):
                raise store_error(path, exc) from exc
    # os.access can say "writable" where the write still fails (root on an immutable file)
    return open_store(path, extra_migrations, read_only=True)


def store_error(path: Path | str, exc: BaseException) -> StoreError:
    """A clean error for a failed open or write of the results database, saying what to do about it."""
    text, where = str(exc), Path(path)
    lowered = text.lower()
    if "full" in lowered or "disk i/o" in lowered:
        advice = (
            "the disk refused a write (full, or a file-size limit): free some space and run the same command "
            "again (finished conversations are kept; the run resumes)"
        )
    elif "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered:
        advice = (
            "this file is not a bench results database, or it is damaged: pass another --db "
            "(a damaged database can be salvaged with `sqlite3 FILE .recover`)"
        )
    elif "readonly" in lowered or "read-only" in lowered:
        advice = "the file or its file system is read-only: pass a writable --db (reports can still read it)"
    elif "unable to open" in lowered and not where.parent.is_dir():
        advice = f"the directory {where.parent} does not exist: create it or pass another --db"
    elif "unable to open" in lowered:
        advice = "it cannot be opened: check that it is a file you may read and write, or pass another --db"
    else:
        advice = "run the same command again; if it fails again, pass another --db"
    return StoreError(f"results database {where}: {text}; {advice}")


class Store:
    """The results database; opening it applies every pending migration set."""

    def __init__(self, path: Path | str, extra_migrations: Sequence[Migrations] = (), *, read_only: bool = False) -> None:
        self._start(Path(path) if path != ":memory:" else None)
        if read_only and self.path is not None:
            self.db = Database(_read_only_connection(self.path))
            self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _refuse_pending(self.db, (kernel_migrations, *extra_migrations), self.path)
            return
        self.db = Database(memory=True) if self.path is None else Database(self.path)
        self.db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        # WAL + NORMAL survives a killed process (only an OS crash may drop the last commits).
        self.db.execute("PRAGMA synchronous = NORMAL")
        # Checkpoint the WAL every ~16 MB instead of every 4 MB: fewer synchronous checkpoints inside commits.
        self.db.execute("PRAGMA wal_autocheckpoint = 4000")
        _migrate_retrying(self.db, (kernel_migrations, *extra_migrations), self._write)

    @classmethod
    def over(cls, connection: sqlite3.Connection, path: Path) -> Store:
        """A store around a connection opened elsewhere, as it is: no migration, no pragma (immutable readers)."""
        store = cls.__new__(cls)
        store._start(path)
        store.db = Database(connection)
        return store

    def _start(self, path: Path | None) -> None:
        self.path = path
        self.holder = Holder.this_process()
        self._turn_loop: asyncio.AbstractEventLoop | None = None
        """The loop whose current turn holds the open write transaction (see _write)."""
        self._failed_commit: sqlite3.Error | None = None
        self._depth = 0
        self._turn_calls: list[dict[str, Any]] = []
        """Ledger rows of the open turn, inserted when it commits (see record_llm_call)."""
        self.window_s = 0.0
        """How long grouped writes gather before their commit (a run's: GROUP_COMMIT_S); 0: at the loop's next turn."""

    def close(self) -> None:
        """Commit what is pending and close the connection."""
        try:
            self.flush()
        finally:
            self.db.close()

    def flush(self) -> None:
        """Commit the writes of the current loop turn now; raises if an earlier turn's commit failed."""
        self._end_turn()
        self._raise_failed_commit()

    @contextlib.contextmanager
    def _write(self, *, grouped: bool = False) -> Iterator[None]:
        """An atomic write (nested: a savepoint); `grouped` ones share the event loop turn's transaction (docs/store.md)."""
        # BEGIN IMMEDIATE: a deferred transaction that reads then writes cannot wait out another writer in WAL mode.
        loop = _running_loop() if grouped else None
        if self._turn_loop is not None and self._turn_loop is not loop and not self._depth:
            self._end_turn()  # an ungrouped write, or a turn left open by a loop that stopped first
        self._raise_failed_commit()
        self._depth += 1
        try:
            if self.db.conn.in_transaction:
                with self._savepoint():
                    yield
            elif loop is not None:
                self.db.conn.execute("BEGIN IMMEDIATE")
                self._turn_loop = loop
                if self.window_s:
                    loop.call_later(self.window_s, self._turn_ended, loop)
                else:
                    loop.call_soon(self._turn_ended, loop)
                with self._savepoint():
                    yield
            else:
                self.db.conn.execute("BEGIN IMMEDIATE")
                try:
                    yield
                    self.db.conn.execute("COMMIT")
                except BaseException:
                    self.db.rollback()
                    raise
        finally:
            self._depth -= 1

    @contextlib.contextmanager
    def write(self, *, grouped: bool = False) -> Iterator[Database]:
        """A plugin's writes as one of the store's own (docs/plugins.md); yields the database."""
        with self._write(grouped=grouped):
            yield self.db

    @contextlib.contextmanager
    def _savepoint(self) -> Iterator[None]:
        self.db.conn.execute("SAVEPOINT bench_write")
        try:
            yield
        except BaseException:
            if self.db.conn.in_transaction:  # a RAISE(ROLLBACK) trigger can end the whole transaction
                self.db.conn.execute("ROLLBACK TO bench_write")
                self.db.conn.execute("RELEASE bench_write")
            raise
        self.db.conn.execute("RELEASE bench_write")

    def _turn_ended(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._turn_loop is loop:
            self._end_turn()

    def _end_turn(self) -> None:
        """Commit the open turn's transaction; a failure is kept for the next write, which has a caller to raise to."""
        if self._turn_loop is None:
            return
        self._turn_loop = None
        if not self.db.conn.in_transaction:  # SQLite rolled it back on a failed write, which raised: the turn is lost
            self._turn_calls = []
            return
        try:
            self._settle_calls()
            self.db.conn.execute("COMMIT")
        except sqlite3.Error as exc:
            self.db.rollback()
            self._failed_commit = exc

    def _settle_calls(self) -> None:
        """Insert the open turn's ledger rows (before its commit, or before a read of llm_calls)."""
        calls, self._turn_calls = self._turn_calls, []
        self._insert("llm_calls", calls)

    def _raise_failed_commit(self) -> None:
        if self._failed_commit is not None:
            exc, self._failed_commit = self._failed_commit, None
            raise type(exc)(f"{exc} (the writes of one turn of the run were rolled back: their conversations run again on resume)") from exc

    # ------------------------------------------------------------------ runs

    def begin_run(
        self, run_id: str, config: dict[str, Any], config_hash: str, plugins: list[dict[str, Any]], task_sets: dict[str, str], seed: int
    ) -> bool:
        """Create the run, or check that a resumed run has the same configuration, taking its lease; True if new."""
        # The lease is taken in the check's transaction, so two processes cannot both pass it; set_status gives it back.
        with self._write():
            rows = list(self.db.query("select * from runs where id = ?", [run_id]))
            now = utc_now()
            holder = {f"holder_{name}": value for name, value in attrs.asdict(self.holder).items()}
            lease = {"status": "running", "updated_utc": now, "heartbeat_utc": now, **holder}
            if not rows:
                row = {"id": run_id, "created_utc": now, "config_json": canonical_json(config), "config_hash": config_hash, "seed": seed}
                self._insert("runs", [{**row, "plugins_json": canonical_json(plugins), "task_sets_json": canonical_json(task_sets), **lease}])
                self.db.table("plugins_used").insert_all([_plugin_used_row(run_id, p) for p in plugins], replace=True)
                return True
            _refuse_held(rows[0], self.holder)
            _refuse_changed(_run_record(rows[0]), config, config_hash, task_sets)
            self.db.table("runs").update(run_id, lease)
        return False

    def add_run_plugin(self, run_id: str, plugin: dict[str, Any]) -> bool:
        """List a plugin that stored results for a run after it (`bench review RUN`), so its report sections show; True if new."""
        with self._write():
            run = self.run(run_id)
            assert run is not None
            if any(p["name"] == plugin["name"] for p in run.plugins):
                return False
            entry = {**plugin, "added_utc": utc_now()}
            self.db.execute("update runs set plugins_json = ? where id = ?", [canonical_json([*run.plugins, entry]), run_id])
            self.db.table("plugins_used").insert(_plugin_used_row(run_id, entry), replace=True)
        return True

    def heartbeat(self, run_id: str) -> None:
        """Show that this store's process is still running the run (while it holds the lease)."""
        with self._write():
            self.db.execute("update runs set heartbeat_utc = ? where id = ? and holder_token = ?", [utc_now(), run_id, self.holder.token])

    def set_status(self, run_id: str, status: str) -> None:
        """Record a run's status (complete, incomplete, failed, interrupted) and give back the lease if this store holds it."""
        with self._write():
            self.db.execute("update runs set status = ?, updated_utc = ? where id = ?", [status, utc_now(), run_id])
            self.db.execute(
                "update runs set holder_host = null, holder_pid = null, holder_started = null, holder_token = null, heartbeat_utc = null "
                "where id = ? and holder_token = ?",
                [run_id, self.holder.token],
            )

    def run(self, run_id: str, *, missing_ok: bool = False) -> RunRecord | None:
        """A stored run, or None when missing_ok and it does not exist."""
        rows = list(self.db.query("select * from runs where id = ?", [run_id]))
        if not rows:
            if missing_ok:
                return None
            known = ", ".join(r["id"] for r in self.db.query("select id from runs order by created_utc desc limit 5"))
            raise ConfigError(f"no run {run_id!r} in {self.path or ':memory:'} (recent: {known or 'none'})")
        return _run_record(rows[0])

    def runs_with(self, **settings: str | None) -> list[RunRecord]:
        """The stored runs whose configuration has these top-level text values, newest first."""
        where = " and ".join(f"json_extract(config_json, '$.{key}') is ?" for key in settings) or "1"
        rows = self.db.query(f"select * from runs where {where} order by created_utc desc, rowid desc", list(settings.values()))
        return [_run_record(row) for row in rows]

    def runs(self) -> list[dict[str, Any]]:
        """Every run with its conversation count and mean agent reward; a run whose process died reads interrupted."""
        sql = """select r.id, r.created_utc, r.status, r.seed, r.holder_host, r.holder_pid, r.holder_started, r.heartbeat_utc,
                   json_extract(r.config_json, '$.profile.name') as profile,
                   json_extract(r.config_json, '$.profile.sha256') as profile_sha256,
                   count(c.id) as conversations, avg(case when c.arm = 'agent' then c.reward end) as mean_reward
                 from runs r left join conversations c on c.run_id = r.id and c.superseded_by is null
                 group by r.id order by r.created_utc"""
        holder = ("holder_host", "holder_pid", "holder_started", "heartbeat_utc")
        return [{k: shown_status(row) if k == "status" else v for k, v in row.items() if k not in holder} for row in self.db.query(sql)]

    # ------------------------------------------------------------------ conversations

    def unit_counts(self, run_id: str) -> dict[str, int]:
        """How many conversations a run has stored, and how many of them are infrastructure errors."""
        sql = "select count(*), sum(termination_reason = ?) from conversations where run_id = ? and superseded_by is null"
        stored, infra = self.db.execute(sql, [TerminationReason.INFRASTRUCTURE_ERROR.value, run_id]).fetchone()
        return {"stored": int(stored or 0), "infrastructure_errors": int(infra or 0)}

    def evaluated_endings(self, run_id: str) -> dict[str, tuple[int, str | None]]:
        """How the newest rows of a run's evaluated arms (all but the baseline) ended: reason -> (count, one error)."""
        sql = (
            "select termination_reason, count(*), min(error) from conversations where run_id = ? and arm != 'baseline' "
            "and superseded_by is null group by termination_reason"
        )
        return {reason: (int(n), error) for reason, n, error in self.db.execute(sql, [run_id]).fetchall()}

    def finished_units(self, run_id: str) -> set[tuple[str, str, int]]:
        """(arm, task, trial) of every unit whose newest conversation finished (infrastructure errors excluded)."""
        sql = "select arm, task_id, trial from conversations where run_id = ? and termination_reason != ? and superseded_by is null"
        rows = self.db.execute(sql, [run_id, TerminationReason.INFRASTRUCTURE_ERROR.value]).fetchall()
        return {(a, t, int(n)) for a, t, n in rows}

    def save_conversation(
        self, result: ConversationResult, metrics: Iterable[MetricValue], plugin_rows: Sequence[PluginRows] = ()
    ) -> list[MetricValue]:
        """Write a finished conversation whole (messages, tool calls, events, metrics, plugin rows); returns the metric values stored."""
        cid = result.conversation_id
        with self._write(grouped=True):
            self._delete_conversation(cid)
            if result.retry:  # the unit's earlier row is kept, marked as replaced by this one
                self.db.execute(
                    "update conversations set superseded_by = ? where run_id = ? and arm = ? and task_id = ? and trial = ? and superseded_by is null",
                    [cid, result.run_id, result.arm, result.task_id, result.trial],
                )
            self._insert("conversations", [_conversation_row(result)])
            self._insert("messages", _message_rows(cid, result.messages))
            self._insert("tool_calls", _tool_call_rows(cid, result.messages))
            self._insert("conversation_events", event_rows(result.run_id, cid, result.events))
            stored = self._plugin_rows(list(metrics), plugin_rows)
            self._insert("metric_values", [metric_row(result.run_id, cid, m) for m in stored])
        return stored

    def _plugin_rows(self, metrics: list[MetricValue], plugin_rows: Sequence[PluginRows]) -> list[MetricValue]:
        failed: dict[tuple[str, str], str] = {}
        for batch in plugin_rows:
            try:
                with self._savepoint():
                    for table, row in batch.rows:
                        self._insert(table, [row])
            except Exception as exc:  # noqa: BLE001 - a metric's bad rows never cost the conversation
                failed[(batch.plugin, batch.metric)] = f"rows not stored: {type(exc).__name__}: {exc}"
        if not failed:
            return metrics
        kept = [m for m in metrics if not any(m.plugin == p and (m.metric == n or m.metric.startswith(f"{n}.")) for p, n in failed)]
        return kept + [MetricValue(metric=metric, plugin=plugin, value=None, error=error) for (plugin, metric), error in failed.items()]

    def record_llm_call(self, run_id: str, conversation_id: str | None, arm: str, call: Any) -> None:
        """Ledger one model call as soon as it is made (kept even if its conversation never finishes)."""
        # In a loop, the turn's rows go in one statement at its commit, after its conversations sent their next requests.
        row = _llm_call_row(run_id, conversation_id, arm, call)
        loop = _running_loop()
        if loop is None:
            with self._write():
                self._insert("llm_calls", [row])
            return
        if self._turn_loop is not loop:
            with self._write(grouped=True):
                pass  # opens this turn's transaction
        self._turn_calls.append(row)

    def run_spend(self, run_id: str) -> float:
        """What a run's model calls have cost so far (known prices only), across every resume."""
        self._settle_calls()
        row = self.db.execute("select sum(cost) from llm_calls where run_id = ?", [run_id]).fetchone()
        return float(row[0] or 0.0)

    def _insert(self, table: str, rows: list[dict[str, Any]]) -> None:
        # Plain executemany: sqlite-utils' insert_all re-inspects the table on every call (hot path).
        if not rows:
            return
        columns = list(rows[0])
        sql = f"insert into {table} ({', '.join(columns)}) values ({', '.join('?' for _ in columns)})"
        self.db.conn.executemany(sql, [[row[c] for c in columns] for row in rows])

    def _delete_conversation(self, cid: str) -> None:
        # Only an infrastructure error is ever overwritten: finished conversations are skipped on resume.
        if self.db.execute("select 1 from conversations where id = ?", [cid]).fetchone() is None:
            return
        # Model calls stay: they were made and paid for, whatever became of their conversation.
        for table in ("metric_values", "tool_calls", "messages", "conversation_events"):
            self.db.execute(f"delete from {table} where conversation_id = ?", [cid])
        self.db.execute("delete from conversations where id = ?", [cid])

    def cache_get(self, key: str) -> str | None:
        """A cached model response, or None."""
        row = self.db.execute("select response_json from llm_cache where key = ?", [key]).fetchone()
        return None if row is None else row[0]

    def cache_put(self, key: str, response_json: str) -> None:
        """Remember a model response (committed with its turn of the loop, so a killed run keeps it)."""
        with self._write(grouped=True):
            self.db.execute("insert or replace into llm_cache (key, response_json, created_utc) values (?, ?, ?)", [key, response_json, utc_now()])

    def llm_costs(self, run_id: str) -> list[dict[str, Any]]:
        """Per role and model: calls, cached calls, errors, tokens and cost (None if any price is unknown)."""
        sql = """select coalesce(l.arm, '-') as arm, l.role, l.model, count(*) as calls, sum(l.cached) as cached,
                   count(l.error) as errors, sum(l.prompt_tokens) as prompt_tokens,
                   sum(l.completion_tokens) as completion_tokens, sum(l.cost) as cost,
                   sum(case when l.cost is null and l.error is null then 1 else 0 end) as unpriced
                 from llm_calls l where l.run_id = ? group by l.arm, l.role, l.model order by l.arm, l.role, l.model"""
        self._settle_calls()
        return list(self.db.query(sql, [run_id]))

    def reported_usage(self, run_id: str) -> list[dict[str, Any]]:
        """Per arm and model, as `llm_costs` rows (cost unknown): token usage agents that called their own models reported."""
        sql = f"""select c.arm, 'agent (reported)' as role, coalesce({_REPORTED_MODEL}, '-') as model,
                   count(*) as calls, 0 as cached, 0 as errors,
                   sum(json_extract(m.usage_json, '$.prompt_tokens')) as prompt_tokens,
                   sum(json_extract(m.usage_json, '$.completion_tokens')) as completion_tokens,
                   null as cost, count(*) as unpriced
                 from messages m join conversations c on c.id = m.conversation_id
                 where c.run_id = ? and m.role = 'assistant' and m.usage_json is not null
                   and not exists (select 1 from llm_calls l where l.conversation_id = c.id and l.role = 'agent')
                 group by c.arm, model order by c.arm, model"""
        self._settle_calls()
        return list(self.db.query(sql, [run_id]))

    def reported_models(self, run_id: str) -> list[str]:
        """The models the agents of a run's evaluated arms said they used (a reply's `model`), in name order."""
        sql = f"""select distinct {_REPORTED_MODEL} as model from messages m join conversations c on c.id = m.conversation_id
                 where c.run_id = ? and c.arm != 'baseline' and m.role = 'assistant'
                   and m.message_json like '%"model"%' and {_REPORTED_MODEL} is not null order by model"""
        return [row["model"] for row in self.db.query(sql, [run_id])]

    def conversations(self, run_id: str, *, include_superseded: bool = False) -> list[dict[str, Any]]:
        """A run's conversations in (arm, task, trial) order, newest row per unit unless include_superseded (`--retry-attributed`)."""
        current = "" if include_superseded else " and superseded_by is null"
        sql = f"select * from conversations where run_id = ?{current} order by arm, task_id, trial, retry"
        return list(self.db.query(sql, [run_id]))

    def current_retries(self, run_id: str) -> dict[tuple[str, str, int], int]:
        """(arm, task, trial) -> retry ordinal of each unit whose newest row is a replay (`--retry-attributed`)."""
        sql = "select arm, task_id, trial, retry from conversations where run_id = ? and superseded_by is null and retry > 0"
        return {(a, t, int(n)): int(r) for a, t, n, r in self.db.execute(sql, [run_id]).fetchall()}

    def attributed_units(self, run_id: str, labels: Sequence[str]) -> list[tuple[str, str, int, int]]:
        """(arm, task, trial, retry) of the finished newest rows whose failure is attributed to one of these labels."""
        marks = ", ".join("?" * len(labels))
        sql = (
            f"select arm, task_id, trial, retry from conversations where run_id = ? and superseded_by is null "
            f"and termination_reason != ? and attribution in ({marks}) order by arm, task_id, trial"
        )
        rows = self.db.execute(sql, [run_id, TerminationReason.INFRASTRUCTURE_ERROR.value, *labels]).fetchall()
        return [(a, t, int(n), int(r)) for a, t, n, r in rows]

    def set_attribution(self, conversation_id: str, label: str | None, evidence: dict[str, Any] | None) -> None:
        """Replace a stored conversation's attribution (a reviewer's verdict, a new judgment); None: it passed."""
        sql = "update conversations set attribution = ?, attribution_evidence = ? where id = ?"
        with self._write():
            self.db.execute(sql, [label, None if evidence is None else canonical_json(evidence), conversation_id])

    def metric_values(self, run_id: str) -> list[dict[str, Any]]:
        """Every metric value of a run."""
        return list(self.db.query("select * from metric_values where run_id = ? order by conversation_id, metric", [run_id]))

    def failing_metrics(self, run_id: str) -> list[tuple[str, str, int, str]]:
        """(plugin, metric, conversations, one error) of each metric whose every stored value in a run is an error."""
        sql = "select plugin, metric, count(*), min(error) from metric_values where run_id = ? group by plugin, metric having count(error) = count(*)"
        return [(plugin, metric, int(n), error) for plugin, metric, n, error in self.db.execute(sql, [run_id]).fetchall()]

    def messages(self, conversation_id: str) -> list[dict[str, Any]]:
        """A conversation's messages, in order."""
        return list(self.db.query("select * from messages where conversation_id = ? order by idx", [conversation_id]))

    def conversation_events(self, conversation_id: str) -> list[dict[str, Any]]:
        """A conversation's events, in the order they were emitted."""
        sql = "select * from conversation_events where conversation_id = ? order by idx"
        return list(self.db.query(sql, [conversation_id]))

    def last_run_event(self, run_id: str, kinds: Sequence[str]) -> dict[str, Any] | None:
        """The data of the run's latest event of one of these kinds, or None."""
        marks = ", ".join("?" * len(kinds))
        sql = f"select data_json from events where run_id = ? and conversation_id is null and kind in ({marks}) order by id desc limit 1"
        row = self.db.execute(sql, [run_id, *kinds]).fetchone()
        return None if row is None else dict(json.loads(row[0]))

    def add_event(self, run_id: str, kind: str, data: dict[str, Any], conversation_id: str | None = None) -> None:
        """Append an event to the run's log."""
        with self._write():
            row = {"run_id": run_id, "conversation_id": conversation_id, "ts_utc": utc_now(), "kind": kind, "data_json": canonical_json(data)}
            self._insert("events", [row])


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


MIGRATE_ATTEMPTS = 20


def _migrate_retrying(db: Database, migration_sets: Sequence[Migrations], write: Callable[[], contextlib.AbstractContextManager[None]]) -> None:
    """`migrate`, again after a "database is locked" that SQLite gave without waiting."""
    # Switching a fresh database to WAL while another process writes is a deadlock SQLite breaks by failing one side
    # at once, busy_timeout or not; migrating is idempotent, so that side tries again.
    for attempt in range(1, MIGRATE_ATTEMPTS + 1):
        try:
            migrate(db, migration_sets, write)
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or attempt == MIGRATE_ATTEMPTS:
                raise
            if db.conn.in_transaction:
                db.conn.rollback()
            time.sleep(0.05 * attempt)


def migrate(db: Database, migration_sets: Sequence[Migrations], write: Callable[[], contextlib.AbstractContextManager[None]]) -> None:
    """Apply every pending migration, safely when several processes open a fresh database at once (docs/store.md)."""
    while any(m.pending(db) for m in migration_sets):  # nothing pending: nothing written, readers stay readers
        outside: tuple[Migrations, Any] | None = None
        with write():
            migration_sets[0].ensure_migrations_table(db)  # one table records every set's migrations
            for migration_set, migration in ((s, m) for s in migration_sets for m in s.pending(db)):
                if not migration.transactional:
                    outside = (migration_set, migration)
                    break
                with db.atomic():
                    migration.fn(db)
                    _record_migration(db, migration_set.name, migration.name)
        if outside is not None:
            migration_set, migration = outside
            migration.fn(db)
            with write():
                _record_migration(db, migration_set.name, migration.name)


def _read_only_connection(path: Path) -> sqlite3.Connection:
    # A WAL database needs its -shm file: on a read-only file system that cannot be created, and nothing can
    # change the file there anyway, so SQLite may treat it as immutable.
    uri = path.resolve().as_uri()
    error: sqlite3.Error | None = None
    for options in ("mode=ro", "mode=ro&immutable=1"):
        conn = sqlite3.connect(f"{uri}?{options}", uri=True)
        try:
            conn.execute("select count(*) from sqlite_master").fetchone()
            return conn
        except sqlite3.Error as exc:
            conn.close()
            error = exc
    assert error is not None
    raise error


def _refuse_pending(db: Database, migration_sets: Sequence[Migrations], path: Path) -> None:
    pending = [m.name for migration_set in migration_sets for m in migration_set.pending(db)]
    if pending:
        raise ConfigError(
            f"{path} is read-only and needs an upgrade first ({len(pending)} pending migrations, "
            f"e.g. {pending[0]}): open it once with write access (e.g. `bench runs --db {path}`)"
        )


def _record_migration(db: Database, set_name: str, name: str) -> None:
    db.execute(f"insert or ignore into {Migrations.migrations_table} (migration_set, name, applied_at) values (?, ?, ?)", [set_name, name, utc_now()])


def shown_status(row: dict[str, Any]) -> str:
    """A run's status as it stands: "running" only while its holder lives, "interrupted" once it died."""
    if row["status"] == "running" and not _row_holder_alive(row):
        return "interrupted"
    return str(row["status"])


def _row_holder_alive(row: dict[str, Any]) -> bool:
    return holder_alive(row.get("holder_host"), row.get("holder_pid"), row.get("holder_started"), row.get("heartbeat_utc"))


def _refuse_held(row: dict[str, Any], me: Holder) -> None:
    if row["status"] != "running" or row.get("holder_token") in (None, me.token):
        return
    if not _row_holder_alive(row):
        return  # its process died (kill -9, crash): this one takes the run over
    age = heartbeat_age_s(row["heartbeat_utc"])
    raise RunBusyError(
        f"run {row['id']!r} is being run right now by process {row['holder_pid']} on {row['holder_host']} "
        f"(heartbeat {age:.0f}s ago); wait for it to end, or stop it, then run the same command again to resume"
    )


def _refuse_changed(existing: RunRecord, config: dict[str, Any], config_hash: str, task_sets: dict[str, str]) -> None:
    if existing.task_sets != task_sets:
        raise ResumeConflictError(f"run {existing.id!r} exists but its tasks or policy changed since; use another --run-id")
    if existing.config_hash != config_hash:
        changed = sorted(k for k in set(config) | set(existing.config) if config.get(k) != existing.config.get(k))
        raise ResumeConflictError(
            f"run {existing.id!r} exists with a different configuration (changed: {', '.join(changed) or 'plugins or kernel'}); "
            "use another --run-id to start a new run"
        )


_REPORTED_MODEL = "json_extract(m.message_json, '$.raw_data.model')"
"""Where an assistant message keeps the model its agent said it used (bench-llm's adapters put it there)."""


def _run_record(row: dict[str, Any]) -> RunRecord:
    plain = {name: row[name] for name in ("id", "created_utc", "updated_utc", "config_hash", "seed")}
    decoded = {name: json.loads(row[f"{name}_json"]) for name in ("config", "plugins", "task_sets")}
    return RunRecord(**plain, **decoded, status=shown_status(row))


_CONVERSATION_COLUMNS = (
    *("run_id", "arm", "task_id", "trial", "seed", "agent", "user", "reward", "error"),
    *("started_utc", "ended_utc", "duration_ms", "agent_cost", "user_cost", "channel", "retry"),
)
"""The conversation columns that hold the result's field of the same name."""


def _plugin_used_row(run_id: str, plugin: dict[str, Any]) -> dict[str, Any]:
    return {"run_id": run_id, "name": plugin["name"], "distribution": plugin.get("distribution"), "version": plugin.get("version")}


def _conversation_row(r: ConversationResult) -> dict[str, Any]:
    return {
        "id": r.conversation_id,
        **{column: getattr(r, column) for column in _CONVERSATION_COLUMNS},
        "termination_reason": r.termination_reason.value,
        "reward_info_json": None if r.reward_info is None else canonical_json(unstructure(r.reward_info)),
        "num_messages": len(r.messages),
        "attributes_json": canonical_json(r.attributes) if r.attributes else None,
        "attribution": r.attribution.label if r.attribution else None,
        "attribution_evidence": canonical_json(r.attribution.evidence_record()) if r.attribution else None,
    }


def metric_row(run_id: str, conversation_id: str, m: MetricValue) -> dict[str, Any]:
    """A `metric_values` row (for `Store.write`)."""
    details = None if m.details is None else canonical_json(m.details)
    return {"run_id": run_id, "conversation_id": conversation_id, **{c: getattr(m, c) for c in _METRIC_COLUMNS}, "details_json": details}


_METRIC_COLUMNS = ("metric", "plugin", "value", "error")
"""The metric value columns that hold the value's field of the same name."""


def event_rows(run_id: str, conversation_id: str, events: Sequence[Event], first: int = 0) -> list[dict[str, Any]]:
    """`conversation_events` rows, numbered from `first` (for `Store.write`)."""
    return [
        {
            "conversation_id": conversation_id,
            "idx": first + i,
            "run_id": run_id,
            "message_index": e.message_index,
            "kind": e.kind,
            "source": e.source,
            "data_json": canonical_json(e.data),
            "ts_utc": e.ts_utc,
        }
        for i, e in enumerate(events)
    ]


_LLM_CALL_COLUMNS = ("role", "model", "request_hash", "prompt_tokens", "completion_tokens", "latency_ms", "cost", "error", "ts_utc", "attempts")
"""The ledger columns that hold the call's attribute of the same name."""


def _llm_call_row(run_id: str, conversation_id: str | None, arm: str, call: Any) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "conversation_id": conversation_id,
        "arm": arm,
        "kind": getattr(call, "kind", "chat"),
        **{column: getattr(call, column) for column in _LLM_CALL_COLUMNS},
        "cost_known": int(call.cost is not None),
        "cached": int(call.cached),
    }


def _message_rows(cid: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [
        {
            "conversation_id": cid,
            "idx": idx,
            "role": m.role,
            "content": m.content,
            "tool_calls_json": canonical_json(data["tool_calls"]) if data.get("tool_calls") else None,
            "tool_call_id": m.id if isinstance(m, ToolMessage) else None,
            "requestor": m.requestor if isinstance(m, ToolMessage) else None,
            "error": int(m.error) if isinstance(m, ToolMessage) else None,
            "cost": getattr(m, "cost", None),
            "turn_idx": m.turn_idx,
            "timestamp_utc": m.timestamp,
            "latency_ms": getattr(m, "latency_ms", None),
            "usage_json": canonical_json(m.usage) if isinstance(m, AssistantMessage | UserMessage) and m.usage else None,
            "message_json": canonical_json(data),
        }
        for idx, m in enumerate(messages)
        for data in (unstructure(m),)  # once per message: the tool calls column is a part of it
    ]


def _tool_call_rows(cid: str, messages: Sequence[Message]) -> list[dict[str, Any]]:
    results = {m.id: m for m in messages if isinstance(m, ToolMessage)}
    return [
        {
            "conversation_id": cid,
            "message_idx": idx,
            "call_id": call.id or f"#{n}",
            "name": call.name,
            "requestor": call.requestor,
            "arguments_json": canonical_json(call.arguments),
            "result": results[call.id].content if call.id in results else None,
            "error": int(results[call.id].error) if call.id in results else None,
        }
        for idx, m in enumerate(messages)
        for n, call in enumerate(getattr(m, "tool_calls", None) or [])
    ]
