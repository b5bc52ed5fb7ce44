"""The collector off during `bench run`'s set-up only: not for other commands or processes, nor in spawned workers."""

from __future__ import annotations

import gc
import multiprocessing

from bench_kernel import setupgc


def _paused_in_a_child(queue: multiprocessing.Queue) -> None:  # type: ignore[type-arg]
    setupgc.pause_for_a_run(["/venv/bin/bench", "run", "--plugin", "mock"])
    queue.put(gc.isenabled())


def test_only_a_bench_run_pauses_the_collector_and_the_runs_start_resumes_it() -> None:
    try:
        for argv in (["/venv/bin/bench", "report"], ["/venv/bin/pytest", "run"], ["/venv/bin/bench", "--help"], []):
            setupgc.pause_for_a_run(argv)
            assert gc.isenabled(), argv
        setupgc.pause_for_a_run(["/venv/bin/bench", "--quiet", "run", "--plugin", "mock"])
        assert not gc.isenabled()
        frozen = gc.get_freeze_count()
        setupgc.resume()
        assert gc.isenabled() and gc.get_freeze_count() > frozen
    finally:
        gc.enable()
        gc.unfreeze()


def test_a_spawned_worker_keeps_its_collector() -> None:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    child = context.Process(target=_paused_in_a_child, args=(queue,))
    child.start()
    assert queue.get(timeout=120) is True
    child.join(timeout=60)
