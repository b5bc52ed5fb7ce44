"""Start-up per domain: the time from `bench run`'s process start to its first model request, median of several runs.

    python benchmarks/startup.py [--runs 7] [--domains airline,telecom] [--reference DIR] [--bench PATH ...]
        [--cache-dir DIR]   # where the runs keep task-set hashes (default: a fresh directory, warmed by one run first)

Each measurement is one `bench run` process (`llm-fc` agent, `llm-user`, bench-openai, `--num-tasks 1`, one
conversation, no baseline) against bench's scripted OpenAI-protocol server on 127.0.0.1, whose every answer stops the
conversation: what is timed is what a user waits for before the first request leaves. Domains run with tau2's data
when the reference directory (`--reference`, $BENCH_REFERENCE, else ../shared/reference beside the checkout) holds
it (`tau2/<domain>`), and with their own packaged data. The runs share one task-set cache directory, warmed by a
first run that is not counted (a domain that composes its tasks computes their hash once: docs/throughput.md).
Figures are printed, never asserted; the machine's other load moves them: compare figures taken together. Given
`--bench` more than once (e.g. an installation of the previous version and this one), the runs alternate between
them, so that both see the same load.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from throughput import Launcher, bench_command

from bench_kernel.testing import FakeOpenAIServer

TAU2_DOMAINS = ("airline", "retail", "telecom", "banking_knowledge")
OWN_DOMAINS = ("airline", "retail", "telecom", "banking", "banking_knowledge", "mock", "services")


def stop(body: dict[str, Any]) -> dict[str, Any]:
    """Every answer: the customer's (and the agent's) last words."""
    return {"role": "assistant", "content": "Thank you, that is all. ###STOP###"}


def command(bench: str, base_url: str, domain: str, data_dir: Path | None, db: Path) -> list[str]:
    """The `bench run` command line of one measurement."""
    settings = [("backend", "openai"), ("model", "fake-model"), ("base_url", base_url), ("timeout_s", "60")]
    roles = [f"--model-option={role}.{key}={value}" for role in ("agent", "user") for key, value in settings]
    data = ["--data-dir", str(data_dir)] if data_dir else []
    plugins = ["--plugin", domain, "--plugin", "openai", "--plugin", "llm"]
    run = ["--agent", "llm-fc", "--user", "llm-user", "--num-tasks", "1", "--trials", "1", "--no-baseline", "--allow-broken-tasks"]
    return [bench, "run", *plugins, *run, "--db", str(db), "--format", "none", *data, *roles]


def measure(launcher: Launcher, server: FakeOpenAIServer, argv: list[str]) -> tuple[float, float, int]:
    """(process start to first request, CPU of the whole process, exit status) of one run."""
    seen = len(server.requests)
    started, _, usage, status = launcher.run(argv)
    first = next((r.received_at for r in server.requests[seen:] if r.path.endswith("/chat/completions")), None)
    return (first - started if first is not None else float("nan")), usage.ru_utime + usage.ru_stime, status


def reference_dir(given: str | None) -> Path:
    """The directory holding tau2's data (`tau2/<domain>`)."""
    default = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference"
    return Path(given or os.environ.get("BENCH_REFERENCE") or default)


def main() -> None:
    """Measure every domain with each data source it has here, print one JSON line each, then a table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7, help="Timed runs per domain and data source.")
    parser.add_argument("--domains", default="", help="Comma-separated domains (default: every one listed above).")
    parser.add_argument("--reference", help="The directory holding tau2/<domain> (default $BENCH_REFERENCE or ../shared/reference).")
    parser.add_argument("--bench", action="append", help="A bench executable to measure (default: this venv's); repeatable.")
    parser.add_argument("--cache-dir", help="$BENCH_CACHE_DIR for the runs (default: a fresh temporary directory).")
    args = parser.parse_args()
    benches = args.bench or bench_command()
    chosen = set(filter(None, args.domains.split(",")))
    tau2 = reference_dir(args.reference) / "tau2"
    cases = [(d, "tau2", tau2 / d) for d in TAU2_DOMAINS if (tau2 / d).is_dir()] + [(d, "own", None) for d in OWN_DOMAINS]
    cases = [c for c in cases if not chosen or c[0] in chosen]
    rows = []
    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(stop, record=False) as server:
        os.environ["BENCH_CACHE_DIR"] = args.cache_dir or str(Path(tmp) / "cache")
        launcher = Launcher(compile_bytecode=False)
        for domain, source, data_dir in cases:
            found: dict[str, list[tuple[float, float, int]]] = {bench: [] for bench in benches}
            for i in range(args.runs + 1):  # the first run of each warms caches (the task-set hash, the OS's files)
                for b, bench in enumerate(benches):
                    argv = command(bench, server.base_url, domain, data_dir, Path(tmp) / f"{domain}-{source}-{b}-{i}.db")
                    found[bench].append(measure(launcher, server, argv))
            for bench, runs in found.items():
                walls, cpus = [w for w, _, _ in runs[1:]], [c for _, c, _ in runs[1:]]
                row = {
                    "bench": bench,
                    "domain": domain,
                    "data": source,
                    "first_s": round(runs[0][0], 3),
                    "median_s": round(statistics.median(walls), 3),
                    "min_s": round(min(walls), 3),
                    "cpu_median_s": round(statistics.median(cpus), 3),
                    "failed": sum(1 for _, _, status in runs if status),
                }
                rows.append(row)
                print(json.dumps(row), flush=True)
        launcher.close()
    print(f"\nstart-up to the first request, {args.runs} runs each (after one warm-up run, shown as `first`)\n")
    print("| bench | domain | data | median s | min s | CPU median s | first s | failed |\n|---|---|---|---|---|---|---|---|")
    for r in rows:
        cells = [r[k] for k in ("bench", "domain", "data", "median_s", "min_s", "cpu_median_s", "first_s", "failed")]
        print("| " + " | ".join(str(c) for c in cells) + " |")


if __name__ == "__main__":
    main()
