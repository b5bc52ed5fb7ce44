"""Inside an event loop, the model calls and conversations written in one turn share one commit, at the next turn."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest
from test_store import begin, result

from bench_kernel.modelhub.hub import LedgerEntry
from bench_kernel.store.store import GROUP_COMMIT_S, Store


def entry(n: int = 0) -> LedgerEntry:
    return LedgerEntry(role="agent", model=f"m{n}", request_hash=None, prompt_tokens=1, completion_tokens=1, latency_ms=1, cost=0.5, cached=False)


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


def test_a_runs_commit_window_gathers_the_writes_of_later_turns(store: Store) -> None:
    store.window_s = 60.0  # longer than any turn of this test
    commits = commits_during(store)

    async def turns() -> list[int]:
        seen = []
        for n in range(3):  # three turns of the loop
            store.record_llm_call("r", f"c{n}", "agent", entry(n))
            store.save_conversation(result(trial=n), [])
            await asyncio.sleep(0.01)
            seen.append(committed(store.path))
        store.flush()
        return [*seen, committed(store.path), conversations_committed(store.path)]

    assert asyncio.run(turns()) == [0, 0, 0, 3, 3]
    assert len(commits) == 1


def test_a_runs_commit_window_commits_when_it_ends(store: Store) -> None:
    store.window_s = GROUP_COMMIT_S

    async def window() -> tuple[int, int]:
        store.record_llm_call("r", "c", "agent", entry())
        before = committed(store.path)
        await asyncio.sleep(GROUP_COMMIT_S * 1.5)  # its timer comes after the window's, whatever the load
        return before, committed(store.path)

    assert asyncio.run(window()) == (0, 1)


def conversations_committed(path: Path) -> int:
    with sqlite3.connect(path) as other:
        return int(other.execute("select count(*) from conversations").fetchone()[0])


def test_a_conversation_and_its_calls_of_one_turn_are_committed_together(store: Store) -> None:
    async def finish() -> tuple[int, int, int, int]:
        store.record_llm_call("r", "c", "agent", entry())
        store.save_conversation(result(trial=0), [])
        before = committed(store.path), conversations_committed(store.path)
        await asyncio.sleep(0)
        return (*before, committed(store.path), conversations_committed(store.path))

    assert asyncio.run(finish()) == (0, 0, 1, 1)
    assert store.unit_counts("r")["stored"] == 1


def test_a_write_that_is_not_grouped_commits_the_turn_first(store: Store) -> None:
    async def note() -> int:
        store.record_llm_call("r", "c", "agent", entry())
        store.add_event("r", "run.note", {})
        return committed(store.path)

    assert asyncio.run(note()) == 1


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


def test_a_failed_write_rolls_back_alone(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    real_insert = store._insert

    def failing_tool_calls(table: str, rows: list[dict]) -> None:
        if table == "tool_calls":
            raise sqlite3.OperationalError("disk I/O error")
        real_insert(table, rows)

    async def turn() -> None:
        store.record_llm_call("r", "c", "agent", entry())
        monkeypatch.setattr(store, "_insert", failing_tool_calls)
        with pytest.raises(sqlite3.OperationalError):
            store.save_conversation(result(trial=0), [])  # its conversation and message rows went in before the failure
        monkeypatch.setattr(store, "_insert", real_insert)
        await asyncio.sleep(0)

    asyncio.run(turn())
    assert (committed(store.path), conversations_committed(store.path)) == (1, 0)
    with sqlite3.connect(store.path) as other:
        assert other.execute("select count(*) from messages").fetchone()[0] == 0


class CommitFailsOnce:
    """The store's connection, except that its next COMMIT fails as a full disk would."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn, self.failures = conn, 1

    def execute(self, sql: str, *args: object) -> sqlite3.Cursor:
        if sql == "COMMIT" and self.failures:
            self.failures -= 1
            raise sqlite3.OperationalError("database or disk is full")
        return self.conn.execute(sql, *args)

    def __getattr__(self, name: str) -> object:
        return getattr(self.conn, name)


def test_a_failed_turn_commit_is_raised_by_the_next_write(store: Store) -> None:
    store.db.conn = CommitFailsOnce(store.db.conn)  # type: ignore[assignment]

    async def turn() -> None:
        store.save_conversation(result(trial=0), [])
        await asyncio.sleep(0)  # the commit fails here, with no caller to raise to
        with pytest.raises(sqlite3.OperationalError, match=r"disk is full.*run again on resume"):
            store.record_llm_call("r", "c", "agent", entry())
        store.record_llm_call("r", "c", "agent", entry())
        await asyncio.sleep(0)

    asyncio.run(turn())
    assert (conversations_committed(store.path), committed(store.path)) == (0, 1)


def test_a_read_of_the_ledger_in_the_same_turn_sees_its_calls(store: Store) -> None:
    async def turn() -> tuple[float, list[str]]:
        for n in range(3):
            store.record_llm_call("r", "c", "agent", entry(n))
        spend = store.run_spend("r")
        store.record_llm_call("r", "c", "agent", entry(3))
        await asyncio.sleep(0)
        return spend, [row["model"] for row in store.db.query("select model from llm_calls order by id")]

    assert asyncio.run(turn()) == (1.5, ["m0", "m1", "m2", "m3"])


def test_a_plugins_write_commits_at_once_and_rolls_back_whole(store: Store) -> None:
    with store.write() as db:
        db.execute("insert into events (run_id, ts_utc, kind, data_json) values ('r', 't', 'plugin.note', '{}')")
    with pytest.raises(RuntimeError), store.write() as db:
        db.execute("insert into events (run_id, ts_utc, kind, data_json) values ('r', 't', 'plugin.lost', '{}')")
        raise RuntimeError("the plugin failed half way")
    with sqlite3.connect(store.path) as other:
        kinds = [row[0] for row in other.execute("select kind from events where kind like 'plugin.%'")]
    assert kinds == ["plugin.note"]


def test_a_grouped_plugin_write_joins_the_turns_commit(store: Store) -> None:
    async def turn() -> tuple[int, int]:
        store.record_llm_call("r", "c", "agent", entry())
        with store.write(grouped=True) as db:
            db.execute("update runs set seed = 7 where id = 'r'")
        before = committed(store.path)
        await asyncio.sleep(0)
        return before, committed(store.path)

    assert asyncio.run(turn()) == (0, 1)
    assert store.run("r").seed == 7  # type: ignore[union-attr]
