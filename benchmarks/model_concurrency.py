"""Concurrency efficiency with real HTTP: llm-fc agent and llm-user over a fake OpenAI server with fixed latency.

    python benchmarks/model_concurrency.py [--latency-s 1.0] [--waves 2]

The fake server runs in its own process (as a real model server would), answering every chat
completion after a fixed latency; agent and user are bench-llm's model participants talking to it
through bench-openai's httpx client, on the mock domain's upgrade task (5 model requests per
conversation). For C conversations in flight and N = waves x C conversations:
    ideal wall = ceil(N / C) x requests per conversation x latency,   efficiency = ideal / measured.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_mock.scripted_models import upgrade_world

from bench_kernel import ModelConfig, RunConfig, Store, run
from bench_kernel.testing import FakeOpenAIServer

TASK = "upgrade_by_email"


world = upgrade_world


def serve(latency_s: float) -> None:
    """Child process: serve until stdin closes."""
    with FakeOpenAIServer(world, latency_s=latency_s, record=False) as server:
        print(server.base_url, flush=True)
        sys.stdin.read()


def start_server(latency_s: float) -> tuple[subprocess.Popen[str], str]:
    """Start the fake server in its own process and return it with its base URL."""
    proc = subprocess.Popen(
        [sys.executable, __file__, "--serve", "--latency-s", str(latency_s)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not re.match(r"http://127\.0\.0\.1:\d+/v1", line):
        proc.kill()
        raise SystemExit(f"fake server did not start: {line!r}")
    return proc, line


def measure(base_url: str, latency_s: float, concurrency: int, waves: int, workdir: Path) -> None:
    """One concurrency level: run N conversations and compare the wall time with the ideal."""
    n = waves * concurrency
    model = ModelConfig(model="fake-model", base_url=base_url, max_concurrency=concurrency, timeout_s=60)
    config = RunConfig(
        domain="mock",
        plugins=["mock", "openai", "llm"],
        agent="llm-fc",
        user="llm-user",
        task_ids=[TASK],
        trials=n,
        baseline=False,
        concurrency=concurrency,
        models={"agent": model, "user": model},
        run_id=f"c{concurrency}",
    )
    db = workdir / f"c{concurrency}.db"
    cpu0, wall0 = time.process_time(), time.perf_counter()
    summary = run(config, db)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    store = Store(db)
    calls = store.db.execute("select count(*) from llm_calls where run_id = ?", [summary.run_id]).fetchone()[0]
    rewards = [r["reward"] for r in store.conversations(summary.run_id)]
    store.close()
    per_conversation = calls / summary.finished
    ideal = math.ceil(summary.finished / concurrency) * per_conversation * latency_s
    print(
        json.dumps(
            {
                "concurrency": concurrency,
                "conversations": summary.finished,
                "requests_per_conversation": per_conversation,
                "latency_s": latency_s,
                "wall_s": round(wall, 2),
                "ideal_s": round(ideal, 2),
                "efficiency": round(ideal / wall, 3),
                "harness_cpu_s": round(cpu, 2),
                "mean_reward": sum(rewards) / len(rewards),
            }
        )
    )


def main() -> None:
    """Parse arguments; serve, or measure at 32 and 256 in flight."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency-s", type=float, default=1.0)
    parser.add_argument("--waves", type=int, default=2)
    parser.add_argument("--levels", default="32,256")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.latency_s)
        return
    proc, base_url = start_server(args.latency_s)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for level in (int(x) for x in args.levels.split(",")):
                measure(base_url, args.latency_s, level, args.waves, Path(tmp))
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=10)


if __name__ == "__main__":
    main()
