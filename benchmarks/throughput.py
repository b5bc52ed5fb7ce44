"""Throughput of whole `bench run` processes against a fake OpenAI server with a fixed latency.

    python benchmarks/throughput.py [--latency-s 0.2] [--waves 4] [--levels 1,32,256,1024] [--variants process,workers2,ray]

The fake server (the test suite's, in this process) answers every chat completion after `latency_s`;
each measurement runs `bench run` as its own process (llm-fc agent and llm-user of bench-llm through
bench-openai, the mock domain's upgrade task, `waves x C` conversations at C in flight), so start-up,
CPU and peak memory are the process's own. Per level and variant it prints:
    efficiency = ideal / wall after start-up, ideal = waves x requests per conversation x latency
    conversations per hour, CPU ms per conversation (user + system of the whole process, start-up included), peak RSS (KiB, and per conversation in
    flight above a C=1 run), start-up (process start to the server's first request).
Start-up is measured as an installed bench starts from the second run on: the bench packages' bytecode is compiled
up front and the children may cache it (PYTHONDONTWRITEBYTECODE, set on some machines, would have every run compile
every module from source, ~0.1 s).
Variants: `process` (one process), `workers2` (`--workers 2`) and `ray` (`--executor ray`); a variant whose
option `bench run` does not have (or, for ray, without Ray installed) is reported as unavailable. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import compileall
import gc
import importlib.metadata
import importlib.util
import json
import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from model_concurrency import TASK, world

from bench_kernel import Store
from bench_kernel.testing import FakeOpenAIServer

VARIANTS = {"process": [], "workers2": ["--workers", "2"], "ray": ["--executor", "ray", "--plugin", "ray"]}


def bench_command() -> list[str]:
    """The `bench` executable beside this interpreter."""
    return [str(Path(sys.executable).with_name("bench"))]


def unavailable(variant: str) -> str | None:
    """Why the variant cannot run here (`bench run` lacks its option, or Ray is not installed), or None."""
    flags = VARIANTS[variant]
    if not flags:
        return None
    helptext = subprocess.run([*bench_command(), "run", "--help"], capture_output=True, text=True, check=False).stdout
    if flags[0] not in helptext:
        return f"bench run has no {flags[0]}"
    if variant == "ray" and importlib.util.find_spec("ray") is None:
        return "Ray is not installed: pip install 'bench-ray[ray]'"
    return None


def command(base_url: str, concurrency: int, waves: int, db: Path, variant: str, max_concurrency: int | None = None) -> list[str]:
    """The `bench run` command line of one measurement."""
    settings = [("backend", "openai"), ("model", "fake-model"), ("base_url", base_url), ("timeout_s", "120")]
    if max_concurrency:
        settings.append(("max_concurrency", str(max_concurrency)))
    roles = [f"--model-option={role}.{key}={value}" for role in ("agent", "user") for key, value in settings]
    return [
        *bench_command(),
        "run",
        "--plugin",
        "mock",
        "--plugin",
        "openai",
        "--plugin",
        "llm",
        "--agent",
        "llm-fc",
        "--user",
        "llm-user",
        "--task-id",
        TASK,
        "--trials",
        str(waves * concurrency),
        "--no-baseline",
        "--concurrency",
        str(concurrency),
        "--db",
        str(db),
        "--run-id",
        f"c{concurrency}",
        "--format",
        "none",
        *roles,
        *VARIANTS[variant],
    ]


# Children are started by this small launcher process, not by the script: a child forked from a process inherits
# its peak RSS through exec (Linux keeps the larger of the two), and the script grows with the fake server's records.
LAUNCHER = """
import json, os, subprocess, sys, tempfile, time
for line in sys.stdin:
    with tempfile.TemporaryFile() as err:
        started = time.monotonic()
        proc = subprocess.Popen(json.loads(line), stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        ended = time.monotonic()
        err.seek(0)
        tail = err.read()[-400:].decode(errors="replace")
    print(json.dumps([started, ended, usage.ru_utime, usage.ru_stime, usage.ru_maxrss, status, tail]), flush=True)
"""


def with_bytecode() -> dict[str, str]:
    """The children's environment, bytecode of bench's packages compiled (in their own __pycache__) and allowed."""
    names = {"bench_kernel", *(entry.module.split(".")[0] for entry in importlib.metadata.entry_points(group="bench"))}
    for name in sorted(names):
        spec = importlib.util.find_spec(name)
        for location in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(location, quiet=1)
    return {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


class Launcher:
    """A small process that runs each measured child and reports its times and resource usage."""

    def __init__(self, compile_bytecode: bool = True) -> None:
        env = with_bytecode() if compile_bytecode else dict(os.environ)  # else: the bytecode the installation has
        self.proc = subprocess.Popen([sys.executable, "-c", LAUNCHER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)

    def run(self, argv: list[str]) -> tuple[float, float, Any, int]:
        """(start time, end time, rusage, exit status) of one child process."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        # The server lives in this process and keeps every request it read (and airline's tasks): out of its collector,
        # or its full passes grow with every measurement (0.3 s stalls of every reply by the tenth run).
        gc.freeze()
        self.proc.stdin.write(json.dumps(argv) + "\n")
        self.proc.stdin.flush()
        started, ended, utime, stime, maxrss, status, tail = json.loads(self.proc.stdout.readline())
        if status:
            print(f"  exit status {status}: {tail}", file=sys.stderr)
        return started, ended, SimpleNamespace(ru_utime=utime, ru_stime=stime, ru_maxrss=maxrss), status

    def close(self) -> None:
        """End the launcher."""
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait()


def measure(
    launcher: Launcher,
    server: FakeOpenAIServer,
    latency_s: float,
    concurrency: int,
    waves: int,
    variant: str,
    workdir: Path,
    max_concurrency: int | None = None,
) -> dict[str, Any]:
    """One level of one variant."""
    db = workdir / f"{variant}-c{concurrency}.db"
    seen = len(server.requests)
    started, ended, usage, status = launcher.run(command(server.base_url, concurrency, waves, db, variant, max_concurrency))
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
    return {
        "variant": variant,
        "concurrency": concurrency,
        "conversations": done,
        "exit": status,
        "requests_per_conversation": round(per_conversation, 2),
        "startup_s": round(first - started, 3),
        "wall_s": round(ended - started, 2),
        "efficiency": round(ideal / working, 3),
        "conversations_per_hour": round(done / (ended - started) * 3600),
        "cpu_ms_per_conversation": round(1000 * cpu / done, 2) if done else None,
        "peak_rss_kib": usage.ru_maxrss,
    }


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
    launcher = Launcher()
    with FakeOpenAIServer(world, latency_s=args.latency_s, record=False) as server, tempfile.TemporaryDirectory() as tmp:
        for variant in args.variants.split(","):
            why = unavailable(variant)
            if why:
                print(json.dumps({"variant": variant, "unavailable": why}), flush=True)
                continue
            baseline_rss = None
            for level in levels:
                found = measure(launcher, server, args.latency_s, level, args.waves, variant, Path(tmp), args.max_concurrency)
                baseline_rss = baseline_rss or (found["peak_rss_kib"] if level == 1 else None)
                if baseline_rss and level > 1:
                    found["kib_per_conversation_in_flight"] = round((found["peak_rss_kib"] - baseline_rss) / level, 1)
                print(json.dumps(found), flush=True)
    launcher.close()


if __name__ == "__main__":
    main()
