"""Progress on stderr: lines when not a terminal, a live display on one, nothing with --progress none."""

from __future__ import annotations

import asyncio
import io
import json
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from click.testing import CliRunner

from bench_kernel.cli import cli
from bench_kernel.modelhub.hub import EndpointLimit
from bench_kernel.run.progress import Progress, ProgressState, error_kind


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


LIMITS = [
    EndpointLimit(endpoint="openai|http://a/v1|m", roles=["agent", "user"], limit=16, source="concurrency x roles"),
    EndpointLimit(endpoint="openai|http://b/v1|j", roles=["judge"], limit=4, source="model setting"),
]


def context(max_cost: float | None = None) -> Any:
    return SimpleNamespace(
        run_id="r",
        config=SimpleNamespace(max_cost=max_cost, concurrency=8),
        models=SimpleNamespace(spent=0.0, in_flight_limits=lambda: LIMITS),
        store=SimpleNamespace(last_run_event=lambda run_id, kinds: None),
    )


def result(reason: str = "user_stop", error: str | None = None) -> Any:
    return SimpleNamespace(termination_reason=reason, error=error)


def test_state_line_rate_eta_spend_and_errors() -> None:
    state = ProgressState(total=10, done=4, started_s=0.0, spent=0.5, max_cost=2.0)
    state.errors.update({"timeout": 1, "agent_error": 2})
    assert state.rate(8.0) == 0.5 and state.eta_s(8.0) == 12.0
    assert state.line(8.0) == "4/10 conversations  0.50/s  ETA 12s  spent $0.5000 of 2.00  errors agent_error=2, timeout=1"
    assert ProgressState(total=3).line(5.0) == "0/3 conversations  -/s  ETA -  spent $0.0000"
    assert ProgressState(total=200, done=1, started_s=0.0).line(100.0).split("  ")[2] == "ETA 5h31m"


def test_error_kinds() -> None:
    assert error_kind(result()) is None
    assert error_kind(result("max_steps")) == "max_steps"
    assert error_kind(result("agent_stop", "tool blew up")) == "agent_stop"


def test_lines_are_periodic_and_the_last_one_always_shows() -> None:
    stream, clock = io.StringIO(), Clock()
    ctx = context(max_cost=1.0)
    with Progress("auto", stream=stream, clock=clock, every_s=10.0) as progress:
        progress.start(ctx, 4, 1)
        for seconds, reason in ((2, "user_stop"), (11, "timeout"), (12, "user_stop"), (13, "user_stop")):
            clock.now = 100.0 + seconds
            ctx.models.spent += 0.1
            progress.finished(result(reason))
    lines = stream.getvalue().splitlines()
    assert lines[:4] == [
        "run r: 4 conversations to run, 1 already stored",
        "  in flight: 8 conversations at most",
        "  endpoint openai|http://a/v1|m (agent, user): 16 requests (concurrency x roles)",
        "  endpoint openai|http://b/v1|j (judge): 4 requests (model setting), below the 8 conversations: some will wait for a slot",
    ]
    assert [line.split("  ")[1] for line in lines[4:]] == ["2/4 conversations", "4/4 conversations"]
    assert "spent $0.4000 of 1.00" in lines[-1] and "errors timeout=1" in lines[-1]


def test_live_display_and_none() -> None:
    stream = io.StringIO()
    with Progress("live", stream=stream) as progress:
        progress.start(context(), 2, 0)
        assert progress.live is not None
        progress.finished(result("timeout"))
        assert progress.__rich__().startswith("1/2 conversations") and progress.__rich__().endswith("errors timeout=1")
    assert progress.live is None and "2 conversations to run" in stream.getvalue()
    quiet = io.StringIO()
    with Progress("none", stream=quiet) as progress:
        progress.start(context(), 2, 0)
        progress.finished(result())
    assert quiet.getvalue() == ""


def test_in_a_run_the_live_display_starts_once_the_first_requests_are_out() -> None:
    async def run() -> tuple[bool, bool]:
        with Progress("live", stream=io.StringIO()) as progress:
            progress.start(context(), 2, 0)
            at_start = progress.live is not None
            for _ in range(500):  # the loop waits for replies: quiet at its first on-time timer, however loaded the machine
                await asyncio.sleep(0.01)
                if progress.live is not None:
                    break
            return at_start, progress.live is not None

    assert asyncio.run(run()) == (False, True)


def test_a_run_that_ends_before_the_live_display_starts_leaves_none_running() -> None:
    async def run() -> Progress:
        with Progress("live", stream=io.StringIO()) as progress:
            progress.start(context(), 2, 0)
        await asyncio.sleep(0.05)
        return progress

    assert asyncio.run(run()).live is None


def test_json_report_on_stdout_is_never_mixed_with_progress(tmp_path: Path, use_plugins: Callable[..., None]) -> None:
    db = str(tmp_path / "r.db")
    out = CliRunner().invoke(cli, ["run", "--db", db, "--format", "json", "--progress", "lines"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["conversations"] == 3
    assert "6/6 conversations" in out.stderr  # 3 tasks, agent and baseline arms
    quiet = CliRunner().invoke(cli, ["run", "--db", str(tmp_path / "q.db"), "--format", "none", "--progress", "none"])
    assert "conversations to run" not in quiet.stderr and "/6 conversations" not in quiet.stderr
