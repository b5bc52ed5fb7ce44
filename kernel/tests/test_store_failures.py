"""A results database that cannot be opened or written is one clean error saying what to do; finished work survives."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from plugin_factory import needs_installed

from bench_kernel.cli import cli
from bench_kernel.errors import StoreError
from bench_kernel.store.store import open_store_for_reading, store_error


def bench(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def finished_run(db: Path) -> str:
    result = bench("run", "-p", "mock", "--num-tasks", "2", "--db", str(db), "--format", "none")
    assert result.exit_code == 0, result.output
    with sqlite3.connect(db) as conn:
        return str(conn.execute("select id from runs").fetchone()[0])


def conversations(db: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True) as conn:
        assert conn.execute("pragma integrity_check").fetchone()[0] == "ok"
        return conn.execute("select id, termination_reason from conversations order by id").fetchall()


def clean_failure(result: Result, *phrases: str) -> None:
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    for phrase in phrases:
        assert phrase in result.output, result.output


@needs_installed("mock")
def test_a_missing_directory_says_to_create_it(tmp_path: Path) -> None:
    db = tmp_path / "missing" / "dir" / "b.db"
    clean_failure(
        bench("run", "-p", "mock", "--db", str(db), "--format", "none"), f"the directory {db.parent} does not exist: create it or pass another --db"
    )


@needs_installed("mock")
@pytest.mark.parametrize("content", [b"hello, not a database\n", b"SQLite format 3\x00" + b"\xff" * 200])
def test_a_file_that_is_not_a_results_database_is_refused_by_run_report_and_runs(tmp_path: Path, content: bytes) -> None:
    db = tmp_path / "b.db"
    db.write_bytes(content)
    for args in (["run", "-p", "mock", "--format", "none"], ["report", "some-run"], ["runs"]):
        clean_failure(bench(*args, "--db", str(db)), "not a bench results database, or it is damaged")
    assert db.read_bytes() == content  # never overwritten


@needs_installed("mock")
def test_a_damaged_database_is_named_as_such(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    run_id = finished_run(db)
    db.write_bytes(db.read_bytes()[:20_000])
    clean_failure(bench("report", run_id, "--db", str(db)), "damaged", "sqlite3 FILE .recover")


@pytest.fixture
def read_only_file(tmp_path: Path) -> Iterator[Path]:
    """A finished run's database that this process cannot write: immutable as root (chattr), read-only by mode otherwise."""
    db = tmp_path / "b.db"
    finished_run(db)
    if os.geteuid() != 0:
        db.chmod(0o444)
        tmp_path.chmod(0o555)
        yield db
        tmp_path.chmod(0o755)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(db)], capture_output=True).returncode != 0:
        pytest.skip("running as root without chattr +i: no way to make a file read-only for this process")
    try:
        yield db
    finally:
        subprocess.run(["chattr", "-i", str(db)], check=True)


@needs_installed("mock")
def test_report_and_runs_work_on_a_read_only_database_and_run_refuses_it_cleanly(read_only_file: Path) -> None:
    before = conversations(read_only_file)
    run_id = str(open_store_for_reading(read_only_file).runs()[0]["id"])
    report = bench("report", run_id, "--db", str(read_only_file), "--format", "json")
    assert report.exit_code == 0, report.output
    assert run_id in bench("runs", "--db", str(read_only_file)).output
    clean_failure(bench("run", "-p", "mock", "--trials", "2", "--db", str(read_only_file), "--format", "none"), "read-only: pass a writable --db")
    assert conversations(read_only_file) == before


def test_store_errors_say_what_to_do() -> None:
    cases = {
        "database or disk is full": "free some space",
        "attempt to write a readonly database": "pass a writable --db",
        "file is not a database": "not a bench results database",
        "database is locked": "run the same command again",
    }
    for text, advice in cases.items():
        error = store_error("x.db", sqlite3.OperationalError(text))
        assert isinstance(error, StoreError) and advice in str(error) and str(error).startswith("results database x.db: ")


@needs_installed("mock")
def test_a_full_disk_mid_run_is_a_clean_error_and_finished_conversations_survive(tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    finished_run(db)
    before = conversations(db)
    limit = db.stat().st_size + 4096  # room for a page or two, not for a run of 48 conversations

    def small_disk() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG) instead of killing us
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    result = subprocess.run(
        [sys.executable, "-m", "bench_kernel", "run", "-p", "mock", "--trials", "3", "--db", str(db), "--format", "none"],
        preexec_fn=small_disk,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "the disk refused a write (full, or a file-size limit): free some space and run the same command again" in result.stderr
    after = conversations(db)
    assert set(before) <= set(after)  # every finished conversation is intact (and the database passes integrity_check)
