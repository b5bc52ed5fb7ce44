"""The collector off during `bench run`'s set-up only: not for other commands or processes, nor in spawned workers."""

from __future__ import annotations

import gc
import multiprocessing
import subprocess
import sys
from pathlib import Path

import pytest
from bench_codecache import setupgc


def _paused_in_a_child(queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    setupgc.pause_for_a_run(["/venv/bin/bench", "run", "--plugin", "practice"])
    queue.put(gc.isenabled())


def test_only_a_bench_run_pauses_the_collector(monkeypatch: pytest.MonkeyPatch) -> None:
    try:
        for argv in (["/venv/bin/bench", "report"], ["/venv/bin/pytest", "run"], ["/venv/bin/bench", "--help"], []):
            setupgc.pause_for_a_run(argv)
            assert gc.isenabled(), argv
        monkeypatch.setattr(sys, "orig_argv", ["python", "-m", "other_tool", "run"])
        setupgc.pause_for_a_run(["-m", "run"])
        assert gc.isenabled()
        setupgc.pause_for_a_run(["/venv/bin/bench", "--quiet", "run", "--plugin", "practice"])
        assert not gc.isenabled()
        gc.enable()
        monkeypatch.setattr(sys, "orig_argv", ["python", "-X", "importtime", "-m", "bench_kernel", "run"])
        setupgc.pause_for_a_run(["-m", "run"])  # `python -m bench_kernel run`, while the package is imported
        assert not gc.isenabled()
    finally:
        gc.enable()


RUN_SCRIPT = """
import gc, sys
sys.argv = ["bench", "run", "--plugin", "practice", "--db", "r.db", "--format", "none", "--progress", "none"]
import bench_kernel
paused = not gc.isenabled()
from bench_kernel.cli import main
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print(paused, gc.isenabled())
"""


def test_a_run_sets_up_without_the_collector_and_plays_with_it(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", RUN_SCRIPT], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.split() == ["True", "True"]  # off from bench_kernel's import, back on once the run began


def test_a_spawned_worker_keeps_its_collector() -> None:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_paused_in_a_child, args=(queue,))
    child.start()
    assert queue.get(timeout=120) is True
    child.join(timeout=60)
