"""The built-in executor `local`, registered like any plugin's executor."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel.markers import hookimpl
from bench_kernel.run.context import Executor
from bench_kernel.run.executors import LocalExecutor


@hookimpl
def register_executors(register: Callable[[Executor], None]) -> None:
    """The local executor (the default): the run's own process (bench-workers' executor replaces it when loaded)."""
    register(LocalExecutor())
