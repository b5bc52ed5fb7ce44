"""Several connections on one database: writes wait for the write lock, migrations once, a lease per run."""

from __future__ import annotations

import multiprocessing
import os
import sqlite3
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlite_utils import Migrations
from test_store import begin, result

from bench_kernel.errors import ConfigError, ResumeConflictError, RunBusyError
from bench_kernel.store.lease import STALE_S, Holder, holder_alive, pid_alive, process_started
from bench_kernel.store.store import Store, open_store_for_reading


@pytest.fixture
def store(tmp_path: Path):
    opened = Store(tmp_path / "runs.db")
    yield opened
    opened.close()


# --------------------------------------------------------------------------- write lock


def hold_write_lock(path: Path, seconds: float, started: threading.Event) -> None:
    """Another writer: one write transaction held open for a while, then committed."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("begin immediate")
    conn.execute("insert into events (run_id, kind, ts_utc, data_json) values ('other', 'x', '', '{}')")
    started.set()
    time.sleep(seconds)
    conn.execute("commit")
    conn.close()


def test_a_write_waits_for_another_writer_instead_of_failing(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    store = Store(path)
    begin(store)
    store.save_conversation(result(trial=0), [])  # the read snapshot a deferred transaction would start from
    started = threading.Event()
    other = threading.Thread(target=hold_write_lock, args=(path, 0.3, started))
    other.start()
    started.wait(5)
    try:
        store.save_conversation(result(trial=1), [])
        store.record_llm_call("r", None, "agent", _Call())
        store.add_event("r", "run.note", {})
    finally:
        other.join()
    assert store.unit_counts("r")["stored"] == 2
    store.close()


class _Call:
    role, model, request_hash, prompt_tokens, completion_tokens = "agent", "m", None, 1, 1
    latency_ms, cost, cached, error, ts_utc, attempts, kind = 1, 0.0, False, None, "", 1, "chat"


def _open(path: str, barrier: Any, errors: Any) -> None:
    barrier.wait(10)
    try:
        Store(path).close()
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which asserts there is none
        errors.put(f"{type(exc).__name__}: {exc}")


def test_processes_opening_a_fresh_database_at_once_migrate_it_once(tmp_path: Path) -> None:
    context = multiprocessing.get_context("fork")
    errors = context.Queue()
    for round_ in range(4):
        path = str(tmp_path / f"fresh-{round_}.db")
        barrier = context.Barrier(4)
        workers = [context.Process(target=_open, args=(path, barrier, errors)) for _ in range(4)]
        for w in workers:
            w.start()
        for w in workers:
            w.join(60)
        assert [w.exitcode for w in workers] == [0] * 4
        with sqlite3.connect(path) as conn:
            names = [r[0] for r in conn.execute("select name from _sqlite_migrations where migration_set = 'bench-kernel'")]
            mode = conn.execute("pragma journal_mode").fetchone()[0]
        assert len(names) == len(set(names)) and "m012_run_lease" in names and mode == "wal"
    found = []
    while not errors.empty():
        found.append(errors.get())
    assert found == []


def test_opening_a_migrated_database_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    Store(path).close()
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("begin immediate")  # a writer holds the lock: a reader must not need it
    try:
        reader = Store(path)
        reader.db.execute("pragma busy_timeout = 0")
        assert reader.runs() == []
        reader.close()
    finally:
        conn.execute("rollback")
        conn.close()


# --------------------------------------------------------------------------- leases


def test_a_run_held_by_a_live_store_is_refused_with_its_holder(tmp_path: Path) -> None:
    first, second = Store(tmp_path / "runs.db"), Store(tmp_path / "runs.db")
    begin(first)
    with pytest.raises(RunBusyError, match=rf"'r' is being run right now by process {os.getpid()} on .*heartbeat 0s ago"):
        begin(second)
    assert issubclass(RunBusyError, ResumeConflictError)
    assert second.run("r").status == "running"
    first.set_status("r", "complete")  # gives the lease back
    assert begin(second) is False
    [row] = second.db.query("select holder_token, status from runs")
    assert row == {"holder_token": second.holder.token, "status": "running"}
    first.close()
    second.close()


def dead_pid() -> int:
    """The pid of a process that has ended and been reaped."""
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def set_holder(store: Store, *, host: str, pid: int, heartbeat: datetime, started: str | None = None) -> None:
    store.db.execute(
        "update runs set holder_host = ?, holder_pid = ?, holder_started = ?, holder_token = 'elsewhere', heartbeat_utc = ?",
        [host, pid, started, heartbeat.isoformat(timespec="milliseconds")],
    )


def test_a_run_whose_holder_died_reads_interrupted_and_is_taken_over(store: Store) -> None:
    begin(store)
    set_holder(store, host=store.holder.host, pid=dead_pid(), heartbeat=datetime.now(UTC))
    assert store.runs()[0]["status"] == "interrupted" and store.run("r").status == "interrupted"
    assert begin(store) is False
    assert store.runs()[0]["status"] == "running"


def test_a_holder_on_another_host_counts_while_its_heartbeat_is_fresh(store: Store) -> None:
    begin(store)
    set_holder(store, host="another-host", pid=1, heartbeat=datetime.now(UTC))
    with pytest.raises(RunBusyError, match="process 1 on another-host"):
        begin(Store(store.path))  # type: ignore[arg-type]
    set_holder(store, host="another-host", pid=1, heartbeat=datetime.now(UTC) - timedelta(seconds=STALE_S + 1))
    assert store.runs()[0]["status"] == "interrupted"
    assert begin(store) is False


def test_a_pid_reused_by_a_later_process_is_not_the_holder(store: Store) -> None:
    begin(store)
    set_holder(store, host=store.holder.host, pid=os.getpid(), heartbeat=datetime.now(UTC), started="1")
    assert store.holder.started not in (None, "1")
    assert store.runs()[0]["status"] == "interrupted"


def test_a_live_holder_on_this_host_keeps_its_run_whatever_its_heartbeat(store: Store) -> None:
    # A loop blocked for minutes (a heavy metric) must not give a live run away.
    begin(store)
    set_holder(
        store, host=store.holder.host, pid=os.getpid(), started=store.holder.started, heartbeat=datetime.now(UTC) - timedelta(seconds=10 * STALE_S)
    )
    assert store.runs()[0]["status"] == "running"
    with pytest.raises(RunBusyError):
        begin(Store(store.path))  # type: ignore[arg-type]


def test_the_heartbeat_moves_only_while_the_lease_is_held(store: Store) -> None:
    begin(store)
    store.db.execute("update runs set heartbeat_utc = '2000-01-01T00:00:00.000+00:00'")
    store.heartbeat("r")
    [(beat,)] = store.db.execute("select heartbeat_utc from runs").fetchall()
    assert beat > "2000"
    store.set_status("r", "complete")
    store.heartbeat("r")
    assert store.db.execute("select heartbeat_utc, holder_pid, status from runs").fetchall() == [(None, None, "complete")]


def test_finished_statuses_are_shown_as_stored(store: Store) -> None:
    begin(store)
    store.set_status("r", "incomplete")
    assert store.runs()[0]["status"] == "incomplete"


def test_liveness_of_pids_and_unreadable_heartbeats() -> None:
    assert pid_alive(os.getpid()) and not pid_alive(dead_pid()) and not pid_alive(0)
    now = datetime.now(UTC).isoformat()
    assert not holder_alive(None, None, None, None)
    assert not holder_alive("elsewhere", 1, None, "not a time") and not holder_alive("elsewhere", 1, None, None)
    assert holder_alive("elsewhere", 1, None, now)
    assert process_started(os.getpid()) == Holder.this_process().started


def test_an_unreaped_killed_child_is_not_alive() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        child.kill()
        deadline = time.monotonic() + 10
        while Path(f"/proc/{child.pid}/stat").exists() and "Z" not in Path(f"/proc/{child.pid}/stat").read_text().rpartition(")")[2][:3]:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert not pid_alive(child.pid)
    finally:
        child.wait()


# --------------------------------------------------------------------------- read-only


def test_a_read_only_store_reads_and_refuses_to_write(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    writer = Store(path)
    begin(writer)
    writer.set_status("r", "complete")
    writer.close()
    reader = Store(path, read_only=True)
    assert [r["status"] for r in reader.runs()] == ["complete"]
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        reader.add_event("r", "x", {})
    reader.close()


def test_a_read_only_store_that_needs_migrations_says_how_to_upgrade(tmp_path: Path) -> None:
    path = tmp_path / "runs.db"
    Store(path).close()
    newer = Migrations("a-plugin")
    newer(name="m001_table")(lambda db: db.table("t").create({"x": int}))
    with pytest.raises(ConfigError, match=r"read-only and needs an upgrade first \(1 pending migrations, e.g. m001_table\)"):
        Store(path, [newer], read_only=True)


def test_commands_that_read_open_a_writable_database_as_usual(tmp_path: Path) -> None:
    store = open_store_for_reading(tmp_path / "runs.db")
    store.add_event("r", "x", {})  # writable: migrated and opened read-write
    store.close()


def test_a_lock_sqlite_reports_without_waiting_during_migration_is_retried(tmp_path: Path, monkeypatch: Any) -> None:
    from bench_kernel.store import store as store_module

    real, failures = store_module.migrate, []

    def flaky(*args: Any) -> None:
        if len(failures) < 2:  # as SQLite answers the side of a lock deadlock it breaks, at once
            failures.append(1)
            raise sqlite3.OperationalError("database is locked")
        real(*args)

    monkeypatch.setattr(store_module, "migrate", flaky)
    Store(tmp_path / "r.db").close()
    assert len(failures) == 2
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("select count(*) from _sqlite_migrations").fetchone()[0] > 0


def test_other_migration_errors_are_not_retried(tmp_path: Path, monkeypatch: Any) -> None:
    from bench_kernel.store import store as store_module

    calls = []

    def broken(*args: Any) -> None:
        calls.append(1)
        raise sqlite3.OperationalError("no such table: nope")

    monkeypatch.setattr(store_module, "migrate", broken)
    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        Store(tmp_path / "r.db")
    assert calls == [1]
