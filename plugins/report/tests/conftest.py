"""bench-report's tests: the `bench` command line with its command added, and runs of the kernel's practice domain."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bench_kernel.testing import bench_cli

sys.path.insert(0, str(Path(__file__).parent))  # the hand-built report the format tests share


@pytest.fixture
def bench() -> Callable[..., Result]:
    """`bench ARGS` in-process, with bench-report's `bench compare`: the click result, stdout and stderr apart."""
    cli = bench_cli(["practice", "report"])

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, list(args))

    return invoke


@pytest.fixture
def runs(tmp_path: Path, bench: Callable[..., Result]) -> str:
    """A results file with two practice runs of two trials each: `good` (the oracle) and `idle` (do-nothing, failing)."""
    db = str(tmp_path / "r.db")
    for agent, run_id in (("oracle", "good"), ("do-nothing", "idle")):
        done = bench(
            "run", "--plugin", "practice", "--agent", agent, "--run-id", run_id, "--trials", "2", "--db", db, "--format", "none", "--progress", "none"
        )
        assert done.exit_code == 0, done.output
    return db
