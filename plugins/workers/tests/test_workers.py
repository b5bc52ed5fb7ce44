"""`bench run --workers 2` against one process: the same rows, and resume, the cost cap and signals as with one process."""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from bench_mock.scripted_models import upgrade_world
from bench_workers import START_METHOD_ENV
from click.testing import CliRunner

from bench_kernel import ExecutorError, RunConfig, get_plugin_manager, hookimpl, run
from bench_kernel.testing import FakeOpenAIServer, Reply, cli, stored_rows

TASK = "upgrade_by_email"
BENCH = Path(sys.executable).with_name("bench")


world = upgrade_world


def llm_args(base_url: str, db: Path, trials: int) -> list[str]:
    """A run of llm-fc and llm-user of bench-llm against the fake server."""
    roles = [
        f"--model-option={role}.{key}={value}"
        for role in ("agent", "user")
        for key, value in (("backend", "openai"), ("model", "fake-model"), ("base_url", base_url))
    ]
    return [
        "run",
        "--plugin",
        "mock",
        "--plugin",
        "openai",
        "--plugin",
        "llm",
        "--agent",
        "llm-fc",
        "--user",
        "llm-user",
        "--task-id",
        TASK,
        "--trials",
        str(trials),
        "--no-baseline",
        "--concurrency",
        "8",
        "--db",
        str(db),
        "--format",
        "none",
        *roles,
    ]


rows = stored_rows


def invoke(args: list[str]) -> Any:
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return result


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_workers_store_what_one_process_stores_offline(tmp_path: Path, start: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(START_METHOD_ENV, start)  # spawn: where the platform cannot fork
    base = ["run", "--plugin", "mock", "--trials", "3", "--format", "none", "--progress", "lines"]
    invoke([*base, "--db", str(tmp_path / "one.db"), "--workers", "1"])
    two = invoke([*base, "--db", str(tmp_path / "two.db"), "--workers", "2"])
    one_rows, two_rows = rows(tmp_path / "one.db"), rows(tmp_path / "two.db")
    started = "forked after loading" if start == "fork" else "spawned"
    assert "complete" in two.output and f"workers: 2 processes ({started}), as configured" in two.output
    assert len(one_rows["conversations"]) > 10 and len({r[8] for r in one_rows["conversations"]}) > 1  # rewards differ
    assert one_rows == two_rows


@pytest.mark.parametrize("start", ["fork", "spawn"])
def test_workers_on_deferred_tables_store_what_one_process_stores(tmp_path: Path, start: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Airline's database is built after the run begins: by each worker for itself, by the run's process for the gold
    # check, whose verdict the workers' results wait for.
    monkeypatch.setenv(START_METHOD_ENV, start)
    base = ["run", "--plugin", "airline", "--num-tasks", "6", "--trials", "2", "--format", "none"]
    invoke([*base, "--db", str(tmp_path / "one.db"), "--workers", "1"])
    invoke([*base, "--db", str(tmp_path / "two.db"), "--workers", "2"])
    one_rows = rows(tmp_path / "one.db")
    assert len(one_rows["conversations"]) == 18 and one_rows == rows(tmp_path / "two.db")


def test_workers_store_what_one_process_stores_with_models(tmp_path: Path) -> None:
    with FakeOpenAIServer(world) as server:
        invoke(llm_args(server.base_url, tmp_path / "one.db", trials=12))
        invoke([*llm_args(server.base_url, tmp_path / "two.db", trials=12), "--workers", "2"])
    one_rows, two_rows = rows(tmp_path / "one.db"), rows(tmp_path / "two.db")
    assert len(one_rows["conversations"]) == 12 and {r[8] for r in one_rows["conversations"]} == {1.0}
    assert sum(count for *_, count, _ in one_rows["llm_calls"]) == 12 * 5
    assert one_rows == two_rows


def capped(db: Path, base_url: str, *more: str) -> tuple[int, str, int, float]:
    """Exit code, status, stored conversations and spend of a run capped at $0.50."""
    result = CliRunner().invoke(cli, [*llm_args(base_url, db, trials=40), "--price", "fake-model=10000,10000", "--max-cost", "0.5", *more])
    with sqlite3.connect(db) as conn:
        [(status,)] = conn.execute("select status from runs").fetchall()
        [(stored,)] = conn.execute("select count(*) from conversations").fetchall()
        [(spent,)] = conn.execute("select sum(cost) from llm_calls").fetchall()
    return result.exit_code, status, stored, spent


def test_the_cost_cap_stops_every_worker_as_it_stops_one_process(tmp_path: Path) -> None:
    with FakeOpenAIServer(world, latency_s=0.02) as server:
        one = capped(tmp_path / "one.db", server.base_url)
        two = capped(tmp_path / "two.db", server.base_url, "--workers", "2")
    # Conversations in flight when the cap is reached end as infrastructure errors (exit 1), in both.
    assert one[:2] == two[:2] == (1, "incomplete")
    assert one[2] < 40 and two[2] < 40 and one[3] >= 0.5 and two[3] >= 0.5


def wait_for(db: Path, at_least: int, process: subprocess.Popen[str], limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s  # a safety net against a hung run, not a timing assertion
    while time.monotonic() < deadline:
        assert process.poll() is None, "the run ended before it could be interrupted"
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
                if conn.execute("select count(*) from conversations").fetchone()[0] >= at_least:
                    return
        except sqlite3.OperationalError:
            pass
        time.sleep(0.02)
    pytest.fail(f"no {at_least} conversations stored within {limit_s}s")


def children(pid: int) -> set[int]:
    """The processes whose parent is pid (Linux /proc)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def gone(pids: set[int], limit_s: float = 20) -> bool:
    """Whether every pid has exited within limit_s (a safety net, not a timing assertion)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if not any(Path(f"/proc/{pid}").exists() and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3] for pid in pids):
            return True
        time.sleep(0.05)
    return False


class Gate:
    """Answers the first `open_for` requests at once and holds every later one (a reply a minute away) until opened:
    a run can finish at most the conversations those requests make, however slow the machine."""

    def __init__(self, open_for: int) -> None:
        self.open_for = open_for
        self.answered = 0

    def __call__(self, body: dict[str, Any]) -> Any:
        """The world's reply, held once the quota is spent."""
        self.answered += 1
        reply = Reply.completion(world(body))
        return reply.after(60) if self.answered > self.open_for else reply


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGKILL])
def test_a_stopped_run_with_workers_resumes_to_the_rows_of_an_uninterrupted_run(tmp_path: Path, signum: int) -> None:
    db, clean = tmp_path / "stopped.db", tmp_path / "clean.db"
    # Each conversation takes 5 requests and at most 16 are in flight (8 per worker), so 150 prompt replies finish
    # at least 17 and at most 30 of the 60 conversations: the signal always finds the run unfinished, whatever the
    # machine's load or the writer's lag behind the workers. Held replies are cancelled when the server stops.
    gate = Gate(open_for=150)
    with FakeOpenAIServer(gate, latency_s=0.05) as server:
        args = [*llm_args(server.base_url, db, trials=60), "--workers", "2"]
        process = subprocess.Popen([str(BENCH), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            wait_for(db, 4, process)
            workers = children(process.pid)
            process.send_signal(signum)
            _, err = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        gate.open_for = 10**9
        assert len(workers) >= 2 and gone(workers), "worker processes outlived the run's process"
        with sqlite3.connect(db) as conn:
            [(status,)] = conn.execute("select status from runs").fetchall()
            [(stored,)] = (conn.execute("select count(*) from conversations").fetchone(),)
        if signum == signal.SIGKILL:
            assert process.returncode == -signal.SIGKILL and status == "running"
        else:
            assert process.returncode == 128 + signum and "Resume with:" in err, err
            assert status == "interrupted"
        assert 4 <= stored < 60
        resumed = CliRunner().invoke(cli, args)
        assert resumed.exit_code == 0, resumed.output
        assert f"{60 - stored} conversations to run, {stored} already stored" in resumed.output
        invoke(llm_args(server.base_url, clean, trials=60))
    stopped_rows, clean_rows = rows(db), rows(clean)
    for table in ("conversations", "messages", "metric_values", "tool_calls"):
        assert stopped_rows[table] == clean_rows[table], table
    # Calls of conversations dropped in flight stay ledgered (they cost), as with one process: never fewer calls.
    stopped_calls = {row[:3]: row[3] for row in stopped_rows["llm_calls"]}
    assert all(stopped_calls.get(row[:3], 0) >= row[3] for row in clean_rows["llm_calls"])


class _InProcessOnly:
    """A plugin registered in this process only (not an installed entry point): a worker cannot load it."""

    @hookimpl
    def register_task_transforms(self, register: Any) -> None:
        """Nothing to register."""


def test_a_worker_that_cannot_start_fails_the_run_with_its_reason(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(START_METHOD_ENV, "spawn")  # a spawned worker loads the run's plugins by name
    plugins = get_plugin_manager(["mock", "workers"], extra=[("in-process", _InProcessOnly())])
    config = RunConfig(domain="mock", workers=2, num_tasks=2)
    with pytest.raises(ExecutorError, match=r"worker process .* failed: .*'in-process' is not installed"):
        run(config, tmp_path / "r.db", plugins=plugins)
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("select status from runs").fetchall() == [("interrupted",)]


def test_forked_workers_play_with_the_run_s_own_plugins_and_store_what_one_process_stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(START_METHOD_ENV, raising=False)
    if not sys.platform.startswith("linux"):
        pytest.skip("workers are forked on Linux only")
    plugins = get_plugin_manager(["mock", "workers"], extra=[("in-process", _InProcessOnly())])  # forked workers need no entry point
    for name, workers in (("one", 1), ("two", 2)):
        summary = run(RunConfig(domain="mock", workers=workers, trials=2), tmp_path / f"{name}.db", plugins=plugins)
        assert summary.status == "complete"
    assert rows(tmp_path / "one.db") == rows(tmp_path / "two.db")


def test_workers_fill_and_read_the_model_cache(tmp_path: Path) -> None:
    db = tmp_path / "cached.db"
    with FakeOpenAIServer(world) as server:
        invoke([*llm_args(server.base_url, db, trials=6), "--cache", "--workers", "2", "--run-id", "first"])
        asked = len(server.completions)
        invoke([*llm_args(server.base_url, db, trials=6), "--cache", "--workers", "2", "--run-id", "second"])
        again = len(server.completions) - asked
    with sqlite3.connect(db) as conn:
        cached = dict(conn.execute("select run_id, sum(cached) from llm_calls group by run_id").fetchall())
        entries = conn.execute("select count(*) from llm_cache").fetchone()[0]
    assert asked == 30 and entries > 0  # the workers' responses reached the cache through the writer
    assert again == 0 and cached["second"] == 30
