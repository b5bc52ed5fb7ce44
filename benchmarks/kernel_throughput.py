"""Harness CPU time per conversation and concurrency efficiency, mock domain, offline participants.

    python benchmarks/kernel_throughput.py [--conversations 2000] [--latency-ms 20]

1. CPU: the oracle agent and scripted user on every mock task, many trials, concurrency 64;
   reports process CPU seconds per conversation (conversation + evaluation + SQLite write).
2. Concurrency: the same participants, each turn delayed by a fixed latency (as a model
   server would), at several concurrency levels. Ideal wall = ceil(total turns / C) x latency
   (ceil(N / C) x turns per conversation x latency when all conversations are alike);
   efficiency = ideal / measured (1.0 = the harness adds nothing).
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import attrs

import bench_kernel
from bench_kernel import (
    Agent,
    AgentSession,
    AssistantMessage,
    ConversationSetup,
    Message,
    OracleAgent,
    ScriptedUser,
    UserMessage,
    UserSession,
    UserSimulator,
    get_plugin_manager,
)
from bench_kernel.run import runner

TURNS = [0]  # participant turns actually delayed, across the process (the ideal's unit)


@attrs.define
class PacedAgentSession(AgentSession):
    """Wraps a session and waits a fixed latency before each reply."""

    inner: AgentSession
    latency_s: float

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """The inner reply, after the latency."""
        TURNS[0] += 1
        await asyncio.sleep(self.latency_s)
        return await self.inner.respond(incoming)

    def is_stop(self, message: AssistantMessage) -> bool:
        """As the inner session."""
        return self.inner.is_stop(message)


@attrs.define
class PacedUserSession(UserSession):
    """Wraps a user session and waits a fixed latency before each reply."""

    inner: UserSession
    latency_s: float

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        """The inner reply, after the latency."""
        TURNS[0] += 1
        await asyncio.sleep(self.latency_s)
        return await self.inner.respond(incoming)


@attrs.define(kw_only=True)
class PacedOracle(Agent):
    """The oracle with a model-like latency per turn."""

    name: str = "paced-oracle"
    calls_models_itself: bool = False
    latency_s: float = 0.02

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A paced oracle session."""
        return PacedAgentSession(OracleAgent().start(setup), self.latency_s)


@attrs.define(kw_only=True)
class PacedScripted(UserSimulator):
    """The scripted user with a model-like latency per turn."""

    name: str = "paced-scripted"
    latency_s: float = 0.02

    def start(self, setup: ConversationSetup) -> UserSession:
        """A paced scripted session."""
        return PacedUserSession(ScriptedUser().start(setup), self.latency_s)


class PacedPlugin:
    """Registers the paced participants."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s

    @bench_kernel.hookimpl
    def register_agents(self, register: Callable[[Agent], None]) -> None:
        """The paced oracle."""
        register(PacedOracle(latency_s=self.latency_s))

    @bench_kernel.hookimpl
    def register_user_simulators(self, register: Callable[[UserSimulator], None]) -> None:
        """The paced scripted user."""
        register(PacedScripted(latency_s=self.latency_s))


def run_once(config: runner.RunConfig, db: Path, extra: list[tuple[str, object]]) -> tuple[runner.RunSummary, float, float]:
    """Run a configuration; return its summary, wall seconds and process CPU seconds."""
    plugins = get_plugin_manager(["mock"], extra)
    cpu0, wall0 = time.process_time(), time.perf_counter()
    summary = runner.run(config, db, plugins=plugins)
    return summary, time.perf_counter() - wall0, time.process_time() - cpu0


def cpu_benchmark(workdir: Path, conversations: int) -> None:
    """CPU seconds per conversation with instant participants."""
    trials = max(1, conversations // 12)
    config = runner.RunConfig(domain="mock", plugins=["mock"], trials=trials, baseline=False, concurrency=64)
    summary, wall, cpu = run_once(config, workdir / "cpu.db", [])
    print(
        f"cpu: {summary.finished} conversations in {wall:.2f}s wall, {cpu:.2f}s CPU "
        f"-> {1000 * cpu / summary.finished:.2f} ms CPU per conversation "
        f"({summary.finished / wall:.0f} conversations/s)"
    )


def concurrency_benchmark(workdir: Path, latency_s: float, levels: Sequence[tuple[int, int]]) -> None:
    """Measured wall against the ideal at several concurrency levels."""
    extra = [("paced", PacedPlugin(latency_s))]
    for n, concurrency in levels:
        trials = max(1, math.ceil(n / 12))
        config = runner.RunConfig(
            domain="mock", plugins=["mock"], agent="paced-oracle", user="paced-scripted", trials=trials, baseline=False, concurrency=concurrency
        )
        db = workdir / f"c{concurrency}.db"
        TURNS[0] = 0
        summary, wall, cpu = run_once(config, db, extra)
        turns = TURNS[0] / summary.finished
        # Conversations differ in length: the ideal keeps each worker busy, turn after turn.
        ideal = math.ceil(TURNS[0] / concurrency) * latency_s
        print(
            f"concurrency {concurrency:>4}: {summary.finished} conversations, {turns:.1f} turns each, "
            f"latency {1000 * latency_s:.0f} ms: wall {wall:.2f}s vs ideal {ideal:.2f}s "
            f"-> efficiency {ideal / wall:.2f} (CPU {cpu:.2f}s)"
        )


def main() -> None:
    """Parse arguments and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=2400)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        cpu_benchmark(workdir, args.conversations)
        concurrency_benchmark(workdir, args.latency_ms / 1000, [(240, 1), (1200, 32), (2400, 256), (4800, 1024)])


if __name__ == "__main__":
    main()
