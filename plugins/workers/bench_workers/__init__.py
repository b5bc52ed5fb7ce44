"""bench-workers: `bench run --workers auto|N` plays conversations in processes of this machine; the run's process stores.

Its executor, `workers`, replaces the kernel's `local` (the default) while loaded: one process, or N worker processes
forked once the run is loaded (spawned where the platform cannot fork). It loads with every run (`bench.always`).
"""

from __future__ import annotations

from collections.abc import Callable

import bench_kernel
from bench_workers.executor import PER_WORKER, START_METHOD_ENV, WorkersExecutor, auto_workers, start_method

__all__ = ["PER_WORKER", "START_METHOD_ENV", "WorkersExecutor", "auto_workers", "start_method"]


@bench_kernel.hookimpl
def register_executors(register: Callable[[bench_kernel.Executor], None]) -> None:
    """The workers executor (in place of `local`)."""
    register(WorkersExecutor())
