"""Throughput of whole `bench run` processes against a fake OpenAI server with a fixed latency.

    python benchmarks/throughput.py [--latency-s 0.2] [--waves 4] [--levels 1,32,256,1024] [--variants process,workers2,ray]

The fake server (the test suite's, in this process) answers every chat completion after `latency_s`;
each measurement runs `bench run` as its own process (llm-fc agent and llm-user of bench-llm through
bench-openai, the mock domain's upgrade task, `waves x C` conversations at C in flight), so start-up,
CPU and peak memory are the process's own. Per level and variant it prints:
    efficiency = ideal / wall after start-up, ideal = waves x requests per conversation x latency
    conversations per hour, CPU ms per conversation (user + system of the whole process, start-up included), peak RSS (KiB, and per conversation in
    flight above a C=1 run), start-up (process start to the server's first request).
Variants: `process` (one process), `workers2` (`--workers 2`) and `ray` (`--executor ray`); a variant whose
option `bench run` does not have is reported as unavailable. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from model_concurrency import TASK, world

from bench_kernel import Store
from bench_kernel.testing import FakeOpenAIServer

VARIANTS = {"process": [], "workers2": ["--workers", "2"], "ray": ["--executor", "ray", "--plugin", "ray"]}


def bench_command() -> list[str]:
    """The `bench` executable beside this interpreter."""
    return [str(Path(sys.executable).with_name("bench"))]


def available(variant: str) -> bool:
    """Whether `bench run` has the variant's option."""
    flags = VARIANTS[variant]
    if not flags:
        return True
    helptext = subprocess.run([*bench_command(), "run", "--help"], capture_output=True, text=True, check=False).stdout
    return flags[0] in helptext


def command(base_url: str, concurrency: int, waves: int, db: Path, variant: str, max_concurrency: int | None = None) -> list[str]:
    """The `bench run` command line of one measurement."""
    settings = [("backend", "openai"), ("model", "fake-model"), ("base_url", base_url), ("timeout_s", "120")]
    if max_concurrency:
        settings.append(("max_concurrency", str(max_concurrency)))
    roles = [f"--model-option={role}.{key}={value}" for role in ("agent", "user") for key, value in settings]
    return [*bench_command(), "run", "--plugin", "mock", "--plugin", "openai", "--plugin", "llm", "--agent", "llm-fc",
            "--user", "llm-user", "--task-id", TASK, "--trials", str(waves * concurrency), "--no-baseline",
            "--concurrency", str(concurrency), "--db", str(db), "--run-id", f"c{concurrency}", "--format", "none",
            *roles, *VARIANTS[variant]]


def run_child(argv: list[str]) -> tuple[float, float, Any, int]:
    """(start time, end time, rusage, exit status) of one child process."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    ended = time.monotonic()
    if status:
        err = proc.stderr.read().decode(errors="replace")[-400:] if proc.stderr else ""
        print(f"  exit status {status}: {err}", file=sys.stderr)
    return started, ended, usage, status


def measure(server: FakeOpenAIServer, latency_s: float, concurrency: int, waves: int, variant: str, workdir: Path,
            max_concurrency: int | None = None) -> dict[str, Any]:
    """One level of one variant."""
    db = workdir / f"{variant}-c{concurrency}.db"
    seen = len(server.requests)
    started, ended, usage, status = run_child(command(server.base_url, concurrency, waves, db, variant, max_concurrency))
    first = next((r.received_at for r in server.requests[seen:] if r.path.endswith("/chat/completions")), ended)
    store = Store(db)
    try:
        runs = store.db.execute("select id from runs").fetchall()
        run_id = runs[0][0] if runs else ""
        calls = store.db.execute("select count(*) from llm_calls where run_id = ?", [run_id]).fetchone()[0]
        done = store.db.execute("select count(*) from conversations where run_id = ?", [run_id]).fetchone()[0]
    finally:
        store.close()
    per_conversation = calls / done if done else 0
    ideal = math.ceil(done / concurrency) * per_conversation * latency_s
    working = max(ended - first, 1e-9)
    cpu = usage.ru_utime + usage.ru_stime
    return {"variant": variant, "concurrency": concurrency, "conversations": done, "exit": status,
            "requests_per_conversation": round(per_conversation, 2), "startup_s": round(first - started, 3),
            "wall_s": round(ended - started, 2), "efficiency": round(ideal / working, 3),
            "conversations_per_hour": round(done / (ended - started) * 3600),
            "cpu_ms_per_conversation": round(1000 * cpu / done, 2) if done else None,
            "peak_rss_kib": usage.ru_maxrss}


def main() -> None:
    """Measure every level of every variant and print one JSON line each."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--latency-s", type=float, default=0.2)
    parser.add_argument("--waves", type=int, default=4)
    parser.add_argument("--levels", default="1,32,256,1024")
    parser.add_argument("--variants", default="process,workers2,ray")
    parser.add_argument("--max-concurrency", type=int, help="Requests in flight per endpoint (model max_concurrency); default: bench's.")
    args = parser.parse_args()
    levels = [int(x) for x in args.levels.split(",")]
    with FakeOpenAIServer(world, latency_s=args.latency_s) as server, tempfile.TemporaryDirectory() as tmp:
        for variant in args.variants.split(","):
            if not available(variant):
                print(json.dumps({"variant": variant, "unavailable": f"bench run has no {VARIANTS[variant][0]}"}), flush=True)
                continue
            baseline_rss = None
            for level in levels:
                found = measure(server, args.latency_s, level, args.waves, variant, Path(tmp), args.max_concurrency)
                baseline_rss = baseline_rss or (found["peak_rss_kib"] if level == 1 else None)
                if baseline_rss and level > 1:
                    found["kib_per_conversation_in_flight"] = round((found["peak_rss_kib"] - baseline_rss) / level, 1)
                print(json.dumps(found), flush=True)


if __name__ == "__main__":
    main()
