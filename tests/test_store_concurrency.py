"""Real `bench` processes sharing one database: parallel writers, one run started twice, kill -9, SIGINT and SIGTERM."""

from __future__ import annotations

import os
import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

BENCH = Path(sys.executable).parent / "bench"
MOCK_TASKS = 12


def units(trials: int) -> int:
    """Conversations of a mock run: every task's trials plus one baseline conversation per task."""
    return MOCK_TASKS * trials + MOCK_TASKS


def env() -> dict[str, str]:
    """The environment of a `bench` subprocess, without the caller's BENCH_* settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}


def run_args(db: Path, trials: int, *extra: str) -> list[str]:
    """A mock run into db."""
    return ["run", "--plugin", "mock", "--db", str(db), "--trials", str(trials), "--format", "none", *extra]


def start(args: list[str], cwd: Path, name: str) -> subprocess.Popen[str]:
    """A `bench` process whose output goes to files named after it."""
    out, err = (cwd / f"{name}.out").open("w"), (cwd / f"{name}.err").open("w")
    return subprocess.Popen([str(BENCH), *args], env=env(), cwd=cwd, stdout=out, stderr=err, text=True)


def bench(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run `bench` to its end."""
    return subprocess.run([str(BENCH), *args], env=env(), cwd=cwd, capture_output=True, text=True, timeout=300)


def stored(db: Path, run_id: str | None = None) -> int:
    """Conversations stored so far (0 before the table exists), through a read-only connection."""
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as conn:
            sql, params = ("select count(*) from conversations where run_id = ?", [run_id]) if run_id else ("select count(*) from conversations", [])
            return int(conn.execute(sql, params).fetchone()[0])
    except sqlite3.OperationalError:  # not created yet, or mid-migration
        return 0


def wait_stored(process: subprocess.Popen[str], db: Path, at_least: int, limit_s: float = 120, run_id: str | None = None) -> None:
    """Poll until at_least conversations (of run_id, when given) are stored; fail if the process ends first."""
    deadline = time.monotonic() + limit_s  # a safety net against a hung run, not a timing assertion
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the run ended (code {process.returncode}) before {at_least} conversations were stored")
        if stored(db, run_id) >= at_least:
            return
        time.sleep(0.01)
    pytest.fail(f"no {at_least} conversations stored within {limit_s}s")


def finish(process: subprocess.Popen[str], limit_s: float = 300) -> int:
    """Wait for a process (killing it if it hangs) and return its exit code."""
    try:
        return process.wait(timeout=limit_s)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def query(db: Path, sql: str, params: list[object] | None = None) -> list[tuple[object, ...]]:
    """Rows of a query on the database."""
    with sqlite3.connect(db) as conn:
        return conn.execute(sql, params or []).fetchall()


def half_written(db: Path) -> int:
    """Stored conversations missing messages or metric values (one transaction each: always 0)."""
    [(count,)] = query(
        db,
        """select count(*) from conversations c
                              where c.num_messages != (select count(*) from messages m where m.conversation_id = c.id)
                                 or not exists (select 1 from metric_values v where v.conversation_id = c.id)""",
    )
    return int(count)


def duplicates(db: Path) -> int:
    """(run, arm, task, trial) stored more than once."""
    [(count,)] = query(db, "select count(*) from (select 1 from conversations group by run_id, arm, task_id, trial having count(*) > 1)")
    return int(count)


def runs_listing(db: Path, cwd: Path) -> str:
    """`bench runs` output."""
    listed = bench(["runs", "--db", str(db)], cwd)
    assert listed.returncode == 0, listed.stderr
    return listed.stdout


def test_parallel_runs_on_one_fresh_database_all_complete_while_reports_read(tmp_path: Path) -> None:
    db, trials, writers = tmp_path / "shared.db", 40, 3
    processes = [start(run_args(db, trials, "--run-id", f"w{n}", "--concurrency", "8"), tmp_path, f"w{n}") for n in range(writers)]
    try:
        wait_stored(processes[0], db, 1, run_id="w0")  # w0 itself must exist: another run may store first
        report = bench(["report", "w0", "--db", str(db), "--format", "json"], tmp_path)  # while the runs write
        codes = [finish(p) for p in processes]
    finally:
        for p in processes:
            finish(p, 1)
    errors = [(tmp_path / f"w{n}.err").read_text() for n in range(writers)]
    assert codes == [0] * writers, errors
    assert report.returncode == 0, report.stderr
    assert not any("locked" in e for e in errors)
    for n in range(writers):
        assert stored(db, f"w{n}") == units(trials)
    assert duplicates(db) == 0 and half_written(db) == 0
    assert sorted(query(db, "select id, status from runs")) == [(f"w{n}", "complete") for n in range(writers)]


def test_the_same_run_started_twice_is_refused_and_taken_over_once_its_holder_is_killed(tmp_path: Path) -> None:
    db, trials = tmp_path / "lease.db", 400
    first = start(run_args(db, trials, "--concurrency", "2"), tmp_path, "first")
    try:
        wait_stored(first, db, 20)
        second = bench(run_args(db, trials), tmp_path)
        assert first.poll() is None, "the first run ended before the second one tried: raise the trials"
        listing = runs_listing(db, tmp_path)
        first.send_signal(signal.SIGKILL)
        first.wait()
    finally:
        finish(first, 1)
    assert second.returncode == 1
    assert f"is being run right now by process {first.pid}" in second.stderr, second.stderr
    assert "Traceback" not in second.stderr
    assert "  running  " in listing
    assert "  interrupted  " in runs_listing(db, tmp_path)  # its holder died: not "running" forever

    at_kill = stored(db)
    resumed = bench(run_args(db, trials), tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{units(trials) - at_kill} conversations to run, {at_kill} already stored" in resumed.stderr
    assert stored(db) == units(trials) and duplicates(db) == 0 and half_written(db) == 0
    assert "  complete  " in runs_listing(db, tmp_path)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_run_cleanly_and_says_how_to_resume(tmp_path: Path, signum: signal.Signals, code: int) -> None:
    db, trials = tmp_path / "signal.db", 150
    process = start(run_args(db, trials, "--concurrency", "4"), tmp_path, "run")
    try:
        wait_stored(process, db, 30)
        os.kill(process.pid, signum)
        returned = finish(process, 60)
    finally:
        finish(process, 1)
    err = (tmp_path / "run.err").read_text()
    assert returned == code, err
    assert f"interrupted by {signum.name}" in err and "Traceback" not in err and "Aborted!" not in err
    [(run_id, status)] = query(db, "select id, status from runs")
    assert status == "interrupted" and f"{run_id}  interrupted  " in runs_listing(db, tmp_path)
    at_stop = stored(db)
    assert 30 <= at_stop < units(trials) and half_written(db) == 0
    [(event,)] = query(db, "select data_json from events where kind = 'run.interrupted'")
    assert signum.name in str(event)

    command = err.split("Resume with:\n", 1)[1].strip().splitlines()[0]
    words = shlex.split(command)
    assert words[0] == "bench" and words[-2:] == ["--run-id", run_id]
    resumed = bench(words[1:], tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{units(trials) - at_stop} conversations to run, {at_stop} already stored" in resumed.stderr
    assert stored(db) == units(trials) and duplicates(db) == 0 and half_written(db) == 0
    assert query(db, "select status from runs") == [("complete",)]


def read_only_mount_works() -> bool:
    """True when this machine lets an unprivileged user namespace mount a read-only tmpfs."""
    try:
        probe = subprocess.run(
            ["unshare", "-rm", "sh", "-c", "mount -t tmpfs none /mnt && mount -o remount,ro /mnt"], capture_output=True, timeout=30
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return probe.returncode == 0


@pytest.mark.skipif(not read_only_mount_works(), reason="needs `unshare -rm` (user namespaces) to mount a read-only file system")
def test_runs_and_report_read_a_database_on_a_read_only_file_system(tmp_path: Path) -> None:
    db = tmp_path / "made.db"
    made = bench(run_args(db, 1, "--run-id", "kept"), tmp_path)
    assert made.returncode == 0, made.stderr
    mount = tmp_path / "ro"
    mount.mkdir()
    script = (
        f"mount -t tmpfs none {mount} && cp {db} {mount}/ro.db && mount -o remount,ro {mount} && "
        f"! touch {mount}/probe 2>/dev/null && {BENCH} runs --db {mount}/ro.db && "
        f"{BENCH} report kept --db {mount}/ro.db --format json"
    )
    done = subprocess.run(["unshare", "-rm", "sh", "-c", script], env=env(), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "kept  complete  " in done.stdout and '"average_reward"' in done.stdout
