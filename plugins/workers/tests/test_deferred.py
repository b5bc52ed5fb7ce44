"""Forked workers on deferred tables: each worker builds its own copy after forking, the run's process one for the gold
check, and its writer holds what the workers send until that check passed: the errors and rows of one process."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from bench_workers import start_method
from bench_workers.processes import HoldingWriter
from deferred_domain import BROKEN_READ, TASKS, CountersDomain, CountersPlugin, Loader

from bench_kernel import ConfigError, RunConfig, Store, TaskFileError, get_plugin_manager, run

pytestmark = pytest.mark.skipif(start_method() != "fork", reason="workers are forked on Linux only (spawned ones cannot load the in-process domain)")


def _run(tmp_path: Path, domain: CountersDomain, handle_signals: bool = False, **config: Any) -> Any:
    plugins = get_plugin_manager(["workers"], extra=[("counters", CountersPlugin(domain))])
    return run(RunConfig(domain="counters", workers=2, **config), tmp_path / "runs.db", plugins=plugins, handle_signals=handle_signals)


def _rows(tmp_path: Path, run_id: str) -> list[dict[str, Any]]:
    store = Store(tmp_path / "runs.db")
    try:
        return store.conversations(run_id)
    finally:
        store.close()


def test_a_run_on_deferred_tables_scores_as_on_built_ones(tmp_path: Path) -> None:
    deferred = CountersDomain()
    _run(tmp_path, domain=deferred, run_id="deferred", trials=2, concurrency=4)
    _run(tmp_path, domain=CountersDomain(deferred=False), run_id="eager", trials=2, concurrency=4)
    assert deferred.loader.calls == 1  # the run's process builds its own copy once (the workers' are theirs)
    keyed = {
        r: {(c["arm"], c["task_id"], c["trial"]): (c["reward"], c["termination_reason"]) for c in _rows(tmp_path, r)} for r in ("deferred", "eager")
    }
    assert keyed["deferred"] == keyed["eager"] and len(keyed["eager"]) == 6  # 2 tasks x 2 trials, and the baseline


def test_a_loader_that_fails_in_a_run_stops_it_with_its_error_and_stores_no_conversation(tmp_path: Path) -> None:
    problem = TaskFileError("/data/db.json", ["not valid JSON: Expecting value at line 3 column 7"])
    with pytest.raises(TaskFileError) as caught:
        _run(tmp_path, domain=CountersDomain(loader=Loader(fail=problem)), run_id="broken", trials=3, concurrency=2)
    assert caught.value is problem
    assert _rows(tmp_path, "broken") == []
    store = Store(tmp_path / "runs.db")
    try:
        assert store.db.execute("select status from runs where id = 'broken'").fetchall() == [("interrupted",)]  # begun, interrupted
    finally:
        store.close()
    _run(tmp_path, domain=CountersDomain(), run_id="broken", trials=3, concurrency=2)  # fixed, the same run resumes
    assert len(_rows(tmp_path, "broken")) == 8


def test_tasks_whose_gold_replay_fails_are_refused_once_the_data_is_loaded_before_any_conversation_is_stored(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot be scored.*read-z \(gold action z1 get_counter: Error: Counter zz"):
        _run(tmp_path, domain=CountersDomain(tasks=[*TASKS, BROKEN_READ]), run_id="refused", concurrency=3)
    assert _rows(tmp_path, "refused") == []
    _run(tmp_path, domain=CountersDomain(tasks=[*TASKS, BROKEN_READ]), run_id="allowed", concurrency=3, allow_broken_tasks=True)
    assert len(_rows(tmp_path, "allowed")) > 0
    store = Store(tmp_path / "runs.db")
    try:
        events = [
            json.loads(row[0]) for row in store.db.execute("select data_json from events where run_id = 'allowed' and kind = 'run.gold_failures'")
        ]
    finally:
        store.close()
    assert [f["task_id"] for f in events[0]["tasks"]] == ["read-z"] and len(events) == 1


@pytest.mark.parametrize("refused", [False, True], ids=["check-passes", "check-refuses"])
def test_workers_results_are_held_back_until_the_run_s_own_gold_check_passed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, refused: bool) -> None:
    run_process = os.getpid()
    arrived = threading.Event()
    seen: list[tuple[int, int, int]] = []
    """When a worker's first finished conversation reached the writer: (held, finished, stored) conversations."""
    apply = HoldingWriter.apply

    def noting(writer: HoldingWriter, message: Any) -> None:
        apply(writer, message)
        if message[0] == "done" and not arrived.is_set():
            held = sum(m[0] == "done" for m in writer.held or [])
            seen.append((held, writer.finished, len(writer.ctx.store.conversations(writer.ctx.run_id))))
            arrived.set()

    class Waiting(Loader):
        def __call__(self) -> Mapping[str, Mapping[str, Any]]:
            if os.getpid() == run_process:  # the run's copy, for the gold check: done once a worker's result waits
                assert arrived.wait(60), "no worker's result reached the writer"  # a safety net, not a timing assertion
            return super().__call__()

    monkeypatch.setattr(HoldingWriter, "apply", noting)
    domain = CountersDomain(tasks=[*TASKS, BROKEN_READ] if refused else TASKS, loader=Waiting())
    if refused:
        with pytest.raises(ConfigError, match=r"cannot be scored.*read-z"):  # the error one process gives
            _run(tmp_path, domain=domain, run_id="held", trials=2, concurrency=4)
        assert _rows(tmp_path, "held") == []  # the workers' results were dropped, the workers stopped
    else:
        summary = _run(tmp_path, domain=domain, run_id="held", trials=2, concurrency=4)
        assert summary.status == "complete" and len(_rows(tmp_path, "held")) == summary.planned > 0
    assert seen == [(1, 0, 0)]


def test_a_signal_while_workers_results_are_held_stores_nothing_and_the_run_resumes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_process = os.getpid()
    arrived, ended = threading.Event(), threading.Event()
    apply = HoldingWriter.apply

    def noting(writer: HoldingWriter, message: Any) -> None:
        apply(writer, message)
        if message[0] == "done":
            arrived.set()

    class Interrupting(Loader):
        def __call__(self) -> Mapping[str, Mapping[str, Any]]:
            if os.getpid() == run_process:  # the run's copy: Ctrl-C once a worker's result is held, no verdict before
                assert arrived.wait(60), "no worker's result reached the writer"  # safety nets, not timing assertions
                os.kill(run_process, signal.SIGINT)
                ended.wait(60)
            return super().__call__()

    monkeypatch.setattr(HoldingWriter, "apply", noting)
    try:
        summary = _run(tmp_path, domain=CountersDomain(loader=Interrupting()), handle_signals=True, run_id="stopped", trials=2, concurrency=4)
    finally:
        ended.set()
    assert (summary.signal, summary.status, summary.finished) == (signal.SIGINT, "interrupted", 0)
    assert _rows(tmp_path, "stopped") == []
    resumed = _run(tmp_path, domain=CountersDomain(), run_id="stopped", trials=2, concurrency=4)
    assert resumed.resumed and resumed.status == "complete" and len(_rows(tmp_path, "stopped")) == resumed.planned > 0
