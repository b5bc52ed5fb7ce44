"""Progress of a run on stderr (never mixed with a report on stdout): a live display on a terminal, periodic lines, or nothing."""

from __future__ import annotations

import asyncio
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, TextIO

import attrs

from bench_kernel.run.methodology import METHODOLOGY_EVENT, methodology_lines
from bench_kernel.schema.messages import TerminationReason

MODES = ("auto", "live", "lines", "none")
NORMAL_ENDS = {TerminationReason.USER_STOP.value, TerminationReason.AGENT_STOP.value}


@attrs.define
class ProgressState:
    """What the display shows: counts, rate, ETA, spend against the cap, errors by kind."""

    total: int = 0
    done: int = 0
    started_s: float = 0.0
    spent: float = 0.0
    max_cost: float | None = None
    errors: Counter[str] = attrs.field(factory=Counter)

    def rate(self, now_s: float) -> float | None:
        """Conversations per second so far (None before the first one finishes)."""
        elapsed = now_s - self.started_s
        return self.done / elapsed if self.done and elapsed > 0 else None

    def eta_s(self, now_s: float) -> float | None:
        """Seconds left at the rate so far."""
        rate = self.rate(now_s)
        return (self.total - self.done) / rate if rate else None

    def line(self, now_s: float) -> str:
        """One status line: done/total, rate, ETA, spend, errors by kind."""
        rate, eta = self.rate(now_s), self.eta_s(now_s)
        parts = [
            f"{self.done}/{self.total} conversations",
            f"{rate:.2f}/s" if rate is not None else "-/s",
            f"ETA {_duration(eta)}" if eta is not None else "ETA -",
        ]
        cap = f" of {self.max_cost:.2f}" if self.max_cost is not None else ""
        parts.append(f"spent ${self.spent:.4f}{cap}")
        if self.errors:
            parts.append("errors " + ", ".join(f"{kind}={n}" for kind, n in sorted(self.errors.items())))
        return "  ".join(parts)


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


def error_kind(result: Any) -> str | None:
    """A finished conversation's error kind (its termination reason), or None when it ended normally."""
    reason = getattr(result.termination_reason, "value", result.termination_reason)
    if reason in NORMAL_ENDS and not result.error:
        return None
    return str(reason)


class Progress:
    """Progress on a stream (stderr by default): mode auto picks live on a terminal and lines otherwise."""

    def __init__(self, mode: str = "auto", stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic, every_s: float = 10.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.mode = ("live" if self.stream.isatty() else "lines") if mode == "auto" else mode
        self.clock = clock
        self.every_s = every_s
        self.state = ProgressState()
        self.spend: Callable[[], float] = lambda: 0.0
        self.last_line_s = 0.0
        self.live: Any = None
        self.closed = False

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.closed = True
        if self.live is not None:
            self.live.stop()
            self.live = None

    def start(self, ctx: Any, todo: int, skipped: int) -> None:
        """Announce the run (the runner's on_start)."""
        self.state = ProgressState(total=todo, started_s=self.clock(), max_cost=ctx.config.max_cost)
        self.spend = lambda: float(ctx.models.spent)
        self.last_line_s = self.state.started_s
        if self.mode == "none":
            return
        self._write(f"run {ctx.run_id}: {todo} conversations to run, {skipped} already stored")
        for line in methodology_lines(ctx.store.last_run_event(ctx.run_id, (METHODOLOGY_EVENT,))):
            self._write(line)
        for line in in_flight_lines(ctx.config.concurrency, ctx.models.in_flight_limits()):
            self._write(line)
        executor = getattr(ctx, "executor", None)  # (None: the run plays in this process, no line to write)
        where = executor.workers_line(ctx.config, todo) if executor is not None else None
        if where:
            self._write(where)
        if self.mode == "live" and todo:
            from bench_kernel.run.runner import call_when_quiet

            try:  # once the first requests are out: importing rich and starting its display took 50-70 ms before them
                call_when_quiet(asyncio.get_running_loop(), self._go_live, 0.005)
            except RuntimeError:  # no loop running (a caller outside a run)
                self._go_live()

    def _go_live(self) -> None:
        if self.closed:
            return
        from rich.console import Console
        from rich.live import Live

        # The renderable is this object: every refresh redraws rate, ETA and spend, between conversations too.
        self.live = Live(self, console=Console(file=self.stream), transient=True, refresh_per_second=4)
        self.live.start()

    def finished(self, result: Any) -> None:
        """Count one finished conversation (the runner's on_finished)."""
        state = self.state
        state.done += 1
        state.spent = self.spend()
        kind = error_kind(result)
        if kind is not None:
            state.errors[kind] += 1
        now = self.clock()
        # The live display redraws itself 4 times a second; lines are written here.
        if self.mode == "lines" and (state.done == state.total or now - self.last_line_s >= self.every_s):
            self.last_line_s = now
            self._write("  " + state.line(now))

    def __rich__(self) -> str:
        """The live line, recomputed at each refresh."""
        self.state.spent = self.spend()
        return self.state.line(self.clock())

    def _write(self, text: str) -> None:
        print(text, file=self.stream, flush=True)


def in_flight_lines(concurrency: int, limits: Sequence[Any]) -> list[str]:
    """The run header's in-flight lines: conversations, then each endpoint's request limit (flagged when it throttles)."""
    lines = [f"  in flight: {concurrency} conversations at most"]
    for limit in limits:
        below = f", below the {concurrency} conversations: some will wait for a slot" if limit.limit < concurrency else ""
        lines.append(f"  endpoint {limit.describe()}{below}")
    return lines
