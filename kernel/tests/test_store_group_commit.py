"""Ledger rows recorded inside an event loop are committed together at the loop's next turn, or with the next write."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from test_store import begin, result

from bench_kernel.modelhub.hub import LedgerEntry
from bench_kernel.store.store import Store


def entry(n: int = 0) -> LedgerEntry:
    return LedgerEntry(role="agent", model=f"m{n}", request_hash=None, prompt_tokens=1, completion_tokens=1,
                       latency_ms=1, cost=0.5, cached=False)


def committed(path: Path) -> int:
    """Ledger rows another connection sees (only committed ones)."""
    with sqlite3.connect(path) as other:
        return int(other.execute("select count(*) from llm_calls").fetchone()[0])


@pytest.fixture
def store(tmp_path: Path):
    opened = Store(tmp_path / "runs.db")
    begin(opened)
    yield opened
    opened.close()


def commits_during(store: Store) -> list[str]:
    """Every COMMIT the store's connection runs from now on."""
    seen: list[str] = []
    store.db.conn.set_trace_callback(lambda sql: seen.append(sql) if sql.strip().upper() == "COMMIT" else None)
    return seen


def stranded(store: Store) -> None:
    """Record a call in a loop that stops in the same turn: its flush, due at the next turn, never runs."""
    loop = asyncio.new_event_loop()
    loop.call_soon(store.record_llm_call, "r", "c", "agent", entry())
    loop.call_soon(loop.stop)
    loop.run_forever()
    loop.close()


def test_outside_a_loop_each_call_is_committed_at_once(store: Store) -> None:
    store.record_llm_call("r", "c", "agent", entry())
    assert committed(store.path) == 1


def test_calls_of_one_turn_share_one_commit_at_the_next_turn(store: Store) -> None:
    commits = commits_during(store)

    async def burst() -> tuple[int, int]:
        for n in range(50):
            store.record_llm_call("r", f"c{n}", "agent", entry(n))
        before = committed(store.path)
        await asyncio.sleep(0)
        return before, committed(store.path)

    assert asyncio.run(burst()) == (0, 50)
    assert len(commits) == 1
    assert store.run_spend("r") == 25.0


def test_a_conversation_saved_in_the_same_turn_carries_the_pending_calls(store: Store) -> None:
    async def finish() -> int:
        store.record_llm_call("r", "c", "agent", entry())
        store.save_conversation(result(trial=0), [])
        return committed(store.path)

    assert asyncio.run(finish()) == 1


def test_a_loop_that_ends_before_its_next_turn_does_not_strand_later_calls(store: Store) -> None:
    stranded(store)
    assert committed(store.path) == 0

    async def record_and_turn() -> None:
        store.record_llm_call("r", "c", "agent", entry(1))
        await asyncio.sleep(0)

    asyncio.run(record_and_turn())
    assert committed(store.path) == 2


def test_close_commits_what_is_pending(tmp_path: Path) -> None:
    store = Store(tmp_path / "runs.db")
    begin(store)

    stranded(store)
    assert committed(store.path) == 0
    store.close()
    assert committed(tmp_path / "runs.db") == 1


def test_a_failed_flush_keeps_the_rows_for_the_next_write(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    real_insert = store._insert
    failures = iter([sqlite3.OperationalError("disk I/O error")])

    def flaky_insert(table: str, rows: list[dict]) -> None:
        if table == "llm_calls" and rows:
            failure = next(failures, None)
            if failure is not None:
                raise failure
        real_insert(table, rows)

    monkeypatch.setattr(store, "_insert", flaky_insert)

    async def record_and_turn() -> int:
        store.record_llm_call("r", "c", "agent", entry())
        await asyncio.sleep(0)  # the flush fails quietly: no caller to raise to
        return committed(store.path)

    assert asyncio.run(record_and_turn()) == 0
    store.add_event("r", "run.note", {})  # the next write commits them
    assert committed(store.path) == 1
