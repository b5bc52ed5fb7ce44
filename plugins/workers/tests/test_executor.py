"""The workers executor: it plays the default (`local`) runs while loaded, `--workers auto` counts processes by what a run
holds in flight, and the run header says how many and why."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any, ClassVar

import pytest
from bench_workers import START_METHOD_ENV, WorkersExecutor, auto_workers, executor, start_method
from click.testing import CliRunner

from bench_kernel import RunConfig, get_plugin_manager, run
from bench_kernel.testing import ExecutorConformance, cli


@pytest.mark.parametrize(
    ("in_flight", "cpus", "can_fork", "expected"),
    [
        (1, 8, True, 1),  # C=1
        (32, 8, True, 1),  # the default concurrency: the test suite's runs play in their own process
        (256, 8, True, 1),
        (257, 8, True, 2),
        (1024, 8, True, 4),
        (4096, 8, True, 7),  # one CPU is kept for the run's process, which writes
        (1024, 2, True, 1),  # two CPUs: workers, the writer (and a local model server) would share them
        (1024, 1, True, 1),
        (4096, 16, False, 1),  # no fork: spawned workers would start as slowly as the run itself
    ],
)
def test_auto_workers_follow_the_conversations_in_flight_and_the_cpus(in_flight: int, cpus: int, can_fork: bool, expected: int) -> None:
    count, why = auto_workers(in_flight, cpus, can_fork)
    assert count == expected and why.startswith("auto: ")


def test_the_executor_counts_workers_by_what_a_run_holds_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(executor.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.delenv(START_METHOD_ENV, raising=False)
    workers = WorkersExecutor()
    auto = RunConfig(domain="toy", concurrency=512)
    assert workers.workers(auto)[0] == (2 if start_method() == "fork" else 1)
    assert workers.workers(auto, units=20)[0] == 1  # a small run: 20 conversations in flight at most
    assert workers.plays_in_this_process(auto) == (start_method() != "fork")  # else workers: data built first
    assert workers.workers(RunConfig(domain="toy", concurrency=2, workers=4)) == (2, "as configured")  # never more than C
    assert workers.workers(RunConfig(domain="toy", concurrency=512, workers=1)) == (1, "as configured")
    monkeypatch.setenv(START_METHOD_ENV, "spawn")
    assert start_method() == "spawn" and workers.workers(auto)[0] == 1
    assert workers.workers_line(auto, 600) == "  workers: this process, auto: workers would be spawned, a start-up each"


def test_loaded_it_plays_the_runs_that_name_local_and_those_that_name_it(tmp_path: Path) -> None:
    played: list[str] = []

    def note(ctx: Any, todo: int, skipped: int) -> None:
        played.append(ctx.executor.name)

    for named, selected in (("local", ["mock", "workers"]), ("workers", ["mock", "workers"]), ("local", ["mock", "no:workers"])):
        config = RunConfig(domain="mock", executor=named, num_tasks=1, run_id=f"{named}-{selected[1]}")
        assert run(config, tmp_path / "r.db", plugins=get_plugin_manager(selected), on_start=note).status == "complete"
    assert played == ["workers", "workers", "local"]  # blocked: the kernel's own executor, one process


def test_workers_auto_is_the_default_and_the_header_says_what_it_chose(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BENCH_WORKERS", raising=False)
    base = ["run", "--plugin", "mock", "--format", "none", "--progress", "lines", "--num-tasks", "3"]
    result = CliRunner().invoke(cli, [*base, "--db", str(tmp_path / "auto.db")])
    assert result.exit_code == 0, result.output
    assert "  workers: this process, auto: 6 conversations in flight fit one process" in result.output  # 3 tasks + baseline
    two = CliRunner().invoke(cli, [*base, "--db", str(tmp_path / "two.db"), "--workers", "2"])
    started = "forked after loading" if start_method() == "fork" else "spawned"
    assert two.exit_code == 0 and f"  workers: 2 processes ({started}), as configured" in two.output, two.output
    for db in ("auto.db", "two.db"):
        with sqlite3.connect(tmp_path / db) as conn:
            assert conn.execute("select count(*), count(distinct id) from conversations").fetchone() == (6, 6)


class TestWorkersExecutor(ExecutorConformance):
    plugin = "workers"
    workers: ClassVar[int] = 2
    domain_plugin = "mock"
    domain = "mock"
