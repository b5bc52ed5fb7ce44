"""Deferred tables (State.deferred): built once on first use, in a run while it waits for its first replies, and a
loader's failure stops the run before any conversation is stored."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from toy_domain import ToyDomain, ToyPlugin

from bench_kernel import DeferredDataError, DomainData, DomainOptions, State, TaskFileError
from bench_kernel.errors import ConfigError
from bench_kernel.plugins import get_plugin_manager
from bench_kernel.run.runner import RunConfig, run
from bench_kernel.store.store import Store

COUNTERS = {"a": {"value": 0}, "b": {"value": 41}}


class Loader:
    """A loader that counts its calls and the threads it ran on, and can be made to fail."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.calls = 0
        self.threads: list[str] = []
        self.fail = fail

    def __call__(self) -> Mapping[str, Mapping[str, Any]]:
        self.calls += 1
        self.threads.append(threading.current_thread().name)
        if self.fail is not None:
            raise self.fail
        return {"counters": {k: dict(v) for k, v in COUNTERS.items()}}


def test_nothing_is_built_until_a_record_is_read_and_then_once() -> None:
    load = Loader()
    state = State.deferred({"counters": None}, load)
    fork = state.fork()
    assert load.calls == 0 and len(state.pending_loads()) == 1  # forking reads no record
    assert fork.counters["b"] == {"value": 41}
    assert load.calls == 1 and state.pending_loads() == []
    fork.counters.edit("a")["value"] = 5
    assert state.fork().counters["a"] == {"value": 0} and fork.counters["a"] == {"value": 5}
    assert state.content_hash() == State.from_records({"counters": COUNTERS}).content_hash()
    assert load.calls == 1


def test_threads_that_ask_together_share_one_build() -> None:
    gate = threading.Event()
    load = Loader()

    def slow() -> Mapping[str, Mapping[str, Any]]:
        gate.wait(5)
        return load()

    state = State.deferred({"counters": None}, slow)
    seen: list[Any] = []
    readers = [threading.Thread(target=lambda: seen.append(state.fork().counters["a"])) for _ in range(4)]
    for reader in readers:
        reader.start()
    gate.set()
    for reader in readers:
        reader.join(5)
    assert load.calls == 1 and seen == [{"value": 0}] * 4


def test_a_failing_loader_raises_the_same_named_error_everywhere_and_no_handler_takes_it() -> None:
    problem = TaskFileError("/data/db.json", ["not valid JSON: Expecting value at line 3 column 7"])
    state = State.deferred({"counters": None}, Loader(fail=problem))
    for _ in range(2):
        with pytest.raises(DeferredDataError) as caught:
            state.fork().counters["a"]
        assert caught.value.error is problem
    try:
        state.fork().counters["a"]
    except Exception:  # noqa: BLE001 - what a tool's or a conversation's own handler would write
        pytest.fail("a handler of Exception took the data's failure for its own")
    except DeferredDataError:
        pass
    other = State.deferred({"counters": None}, Loader(fail=KeyError("flights")))
    with pytest.raises(DeferredDataError) as caught:
        other.fork().counters["a"]
    assert isinstance(caught.value.error, ConfigError) and "KeyError" in str(caught.value.error)


@attrs.define(kw_only=True)
class DeferredToyDomain(ToyDomain):
    """The toy domain with its counters deferred."""

    loader: Loader = attrs.field(factory=Loader)

    def load(self, options: DomainOptions) -> DomainData:
        data = super().load(options)
        return attrs.evolve(data, agent_state=State.deferred({"counters": None}, self.loader))


def _run(tmp_path: Path, domain: ToyDomain, **config: Any) -> Any:
    plugins = get_plugin_manager([], extra=[("toy", ToyPlugin(domain))])
    return run(RunConfig(domain="toy", **config), tmp_path / "runs.db", plugins=plugins)


def _rows(tmp_path: Path, run_id: str) -> list[dict[str, Any]]:
    store = Store(tmp_path / "runs.db")
    try:
        return store.conversations(run_id)
    finally:
        store.close()


def test_a_run_on_deferred_tables_scores_as_on_built_ones(tmp_path: Path) -> None:
    deferred = DeferredToyDomain()
    _run(tmp_path, domain=deferred, run_id="deferred", trials=2, concurrency=4)
    _run(tmp_path, domain=ToyDomain(), run_id="eager", trials=2, concurrency=4)
    assert deferred.loader.calls == 1
    keyed = {
        r: {(c["arm"], c["task_id"], c["trial"]): (c["reward"], c["termination_reason"]) for c in _rows(tmp_path, r)} for r in ("deferred", "eager")
    }
    assert keyed["deferred"] == keyed["eager"] and len(keyed["eager"]) > 0


def test_a_loader_that_fails_in_a_run_stops_it_with_its_error_and_stores_no_conversation(tmp_path: Path) -> None:
    problem = TaskFileError("/data/db.json", ["not valid JSON: Expecting value at line 3 column 7"])
    domain = DeferredToyDomain(loader=Loader(fail=problem))
    with pytest.raises(TaskFileError) as caught:
        _run(tmp_path, domain=domain, run_id="broken", trials=3, concurrency=2)
    assert caught.value is problem
    assert _rows(tmp_path, "broken") == []
    store = Store(tmp_path / "runs.db")
    try:
        # Built once the run began (bench-workers: by the run's process while its workers play): begun, interrupted.
        assert store.db.execute("select status from runs where id = 'broken'").fetchall() == [("interrupted",)]
    finally:
        store.close()
    # Fixed, the same run resumes and completes.
    _run(tmp_path, domain=DeferredToyDomain(), run_id="broken", trials=3, concurrency=2)
    assert len(_rows(tmp_path, "broken")) > 0


BROKEN_READ = {
    "id": "read-z",
    "user_scenario": {"instructions": {"domain": "toy", "reason_for_call": "Read zz.", "known_info": "", "task_instructions": ""}},
    "evaluation_criteria": {"actions": [{"action_id": "z1", "name": "get_counter", "arguments": {"name": "zz"}}], "reward_basis": ["DB"]},
}


def test_tasks_whose_gold_replay_fails_are_refused_once_the_data_is_loaded_before_any_conversation_is_stored(tmp_path: Path) -> None:
    from toy_domain import TASKS

    domain = DeferredToyDomain(tasks=[*TASKS, BROKEN_READ])
    with pytest.raises(ConfigError, match=r"cannot be scored.*read-z \(gold action z1 get_counter: Error: Counter zz"):
        _run(tmp_path, domain=domain, run_id="refused", concurrency=3)
    assert _rows(tmp_path, "refused") == []
    allowed = DeferredToyDomain(tasks=[*TASKS, BROKEN_READ])
    _run(tmp_path, domain=allowed, run_id="allowed", concurrency=3, allow_broken_tasks=True)
    assert len(_rows(tmp_path, "allowed")) > 0
    store = Store(tmp_path / "runs.db")
    try:
        events = [
            json.loads(row[0]) for row in store.db.execute("select data_json from events where run_id = 'allowed' and kind = 'run.gold_failures'")
        ]
    finally:
        store.close()
    assert [f["task_id"] for f in events[0]["tasks"]] == ["read-z"] and len(events) == 1


def test_the_preload_future_fails_rather_than_hangs_when_what_follows_the_load_fails() -> None:
    import asyncio

    from bench_kernel.run.runner import preload

    data = DeferredToyDomain().load(DomainOptions())

    def broken() -> None:
        raise OSError("disk full")

    async def main() -> None:
        loading = preload(data, on_loaded=broken)
        assert loading is not None
        with pytest.raises(OSError, match="disk full"):
            await asyncio.wait_for(loading, 10)
        assert preload(data) is None  # loaded: nothing left to build

    asyncio.run(main())


def test_an_interrupted_load_is_not_a_verdict_and_runs_again() -> None:
    calls: list[int] = []

    def load() -> Mapping[str, Mapping[str, Any]]:
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt
        return {"counters": {k: dict(v) for k, v in COUNTERS.items()}}

    state = State.deferred({"counters": None}, load)
    with pytest.raises(KeyboardInterrupt):
        state.fork().counters["a"]
    assert state.fork().counters["a"] == {"value": 0} and len(calls) == 2


def test_the_preload_thread_digests_the_shared_records_so_no_first_score_does() -> None:
    import asyncio

    from bench_kernel.run.runner import preload

    data = DeferredToyDomain().load(DomainOptions())
    bases = [table.base for table in data.agent_state.tables.values()]

    async def main() -> None:
        loading = preload(data, after_s=0)
        assert loading is not None and all(base._digests is None for base in bases)
        await asyncio.wait_for(loading, 10)

    asyncio.run(main())
    assert all(base._digests is not None for base in bases)
    assert data.agent_state.content_hash() == State.from_records({"counters": COUNTERS}).content_hash()


def _busy_for(loop: Any, seconds: float) -> None:
    """Keep the loop busy for `seconds`, in callbacks of 10 ms (each longer than a quiet timer may be late)."""
    end = time.monotonic() + seconds

    def busy() -> None:
        time.sleep(0.01)
        if time.monotonic() < end:
            loop.call_soon(busy)

    loop.call_soon(busy)


def test_the_preload_starts_once_the_loop_is_quiet_not_while_conversations_set_up() -> None:
    import asyncio

    from bench_kernel.run.runner import call_when_quiet

    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        called = loop.create_future()
        start = time.monotonic()
        _busy_for(loop, 0.2)
        call_when_quiet(loop, lambda: called.set_result(time.monotonic()), 0.005)
        return start, await asyncio.wait_for(called, 10)

    start, at = asyncio.run(main())
    assert at - start >= 0.2


def test_a_loop_that_is_never_quiet_gets_its_preload_all_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from bench_kernel.run import runner

    monkeypatch.setattr(runner, "QUIET_AT_LATEST_S", 0.05)

    async def main() -> tuple[float, float]:
        loop = asyncio.get_running_loop()
        called = loop.create_future()
        start = time.monotonic()
        _busy_for(loop, 2.0)
        runner.call_when_quiet(loop, lambda: called.set_result(time.monotonic()), 0.005)
        return start, await asyncio.wait_for(called, 10)

    start, at = asyncio.run(main())
    assert at - start < 1.5  # called while the loop was still busy (it stays busy for 2 s)


def test_conversations_play_with_rare_young_collections_and_set_up_frozen_then_as_before() -> None:
    import asyncio
    import gc

    from bench_kernel.run.runner import YOUNG_COLLECTION_THRESHOLD, _collector_for_conversations

    before = gc.get_threshold()

    async def main() -> tuple[int, int]:
        async with _collector_for_conversations():
            return gc.get_threshold()[0], gc.get_freeze_count()

    young, frozen = asyncio.run(main())
    assert young == max(before[0], YOUNG_COLLECTION_THRESHOLD) and frozen > 0
    assert gc.get_threshold() == before
