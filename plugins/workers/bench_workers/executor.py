"""The workers executor: the run's own process, or `--workers N` processes of this machine (auto: chosen by the run's shape)."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable

import attrs

from bench_kernel import ConversationResult, Executor, LocalExecutor, RunConfig, RunContext, Unit

PER_WORKER = 256
"""Conversations in flight per process under `--workers auto`: past it, one loop's bursts cost efficiency (docs/decisions.md)."""
START_METHOD_ENV = "BENCH_WORKER_START"
"""`spawn` spawns workers even where they could be forked (on Linux)."""


@attrs.define(kw_only=True)
class WorkersExecutor(Executor):
    """This machine: one event loop in the run's process, or `--workers N` processes with one loop each."""

    name: str = "workers"
    description: str = "this machine: the run's own process, or --workers N processes streaming results to it"
    replaces: str = "local"
    """The default executor: a run that names `local` (or nothing) is played by this one while bench-workers is loaded."""

    async def execute(self, ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None]) -> int:
        """Play in this process, or in worker processes when the run asks for (or `auto` chooses) more than one."""
        workers, _ = self.workers(ctx.config, len(units))
        if workers <= 1:  # (plays_in_this_process says this before the units are known)
            return await LocalExecutor().execute(ctx, units, on_finished)
        from bench_workers.processes import run_in_processes  # multiprocessing only for runs that use it

        return await run_in_processes(ctx, units, on_finished, workers, start_method())

    def plays_in_this_process(self, config: RunConfig) -> bool:
        """True for one worker (or one conversation in flight)."""
        return self.workers(config)[0] <= 1

    def builds_data_after_starting(self, config: RunConfig) -> bool:
        """True: with workers too (each builds its own copy, the run's process one for the gold check)."""
        return True

    def workers(self, config: RunConfig, units: int | None = None) -> tuple[int, str]:
        """How many processes play the run, and why (never more for fewer units: plays_in_this_process relies on it)."""
        # More workers than conversations in flight would put more in flight than --concurrency allows.
        in_flight = config.concurrency if units is None else min(config.concurrency, units)
        if config.workers is not None:
            return max(1, min(config.workers, in_flight)), "as configured"
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        return auto_workers(in_flight, cpus, start_method() == "fork")

    def workers_line(self, config: RunConfig, units: int) -> str | None:
        """The run header's line: how many processes play, started how, and why."""
        count, why = self.workers(config, units)
        started = "forked after loading" if start_method() == "fork" else "spawned"
        return f"  workers: {'this process' if count <= 1 else f'{count} processes ({started})'}, {why}"


def auto_workers(in_flight: int, cpus: int, can_fork: bool) -> tuple[int, str]:
    """`--workers auto`: a process per PER_WORKER conversations in flight, one CPU kept for the run's process (the
    writer); one process where workers cannot be forked or the machine has fewer than 3 CPUs."""
    wanted = min(math.ceil(in_flight / PER_WORKER), cpus - 1) if can_fork else 1
    if wanted > 1:
        return wanted, f"auto: {in_flight} conversations in flight, up to {PER_WORKER} per process, {cpus} CPUs (one for the writer)"
    fits = in_flight <= PER_WORKER
    why = f"{in_flight} conversations in flight fit one process" if fits else f"{cpus} CPUs: workers would share them with the writer"
    return 1, "auto: " + ("workers would be spawned, a start-up each" if not can_fork else why)


def start_method() -> str:
    """`fork` on Linux (workers start from the loaded run), else `spawn` (macOS's libraries are not fork-safe)."""
    forced = os.environ.get(START_METHOD_ENV, "").strip().lower()
    return "fork" if forced != "spawn" and sys.platform.startswith("linux") else "spawn"
