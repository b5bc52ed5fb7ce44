"""Retail domain costs: CPU per task for gold replay + evaluation, and memory per in-flight conversation.

    python benchmarks/retail_replay.py [--data-dir DIR] [--conversations 100] [--per-task]

Uses tau2's retail data from ../shared/reference/tau2/retail when present (or --data-dir), else
our generated suite. Figures are printed, never asserted.

1. Load: the one-off CPU and memory of parsing db.json into the shared base tables.
2. CPU: for every task, a fresh environment, its gold actions run as a conversation would run
   them, then the evaluation of that trajectory against the task's gold replay (computed once
   per task and per run, as a run does), in process CPU time.
3. Memory: K environments for different tasks, each after running its gold actions, all held at
   once; tracemalloc's growth divided by K is what one more conversation in flight costs.
"""

from __future__ import annotations

import argparse
import gc
import json
import time
import tracemalloc
from pathlib import Path

from bench_retail import RetailDomain
from bench_retail.records import base_tables
from domain_costs import cpu_per_task, describe, memory_per_conversation

from bench_kernel import DomainOptions

REFERENCE = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference" / "tau2" / "retail"


def base_table_bytes(db_path: Path) -> int:
    """Memory held by the parsed, shared tables of a db.json (measured on a second parse)."""
    gc.collect()
    tracemalloc.start()
    tables = base_tables(json.loads(db_path.read_text(encoding="utf-8")))
    gc.collect()
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert tables
    return size


def main() -> None:
    """Run the three measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=REFERENCE if (REFERENCE / "db.json").is_file() else None)
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--per-task", action="store_true", help="also print every task's figures")
    args = parser.parse_args()

    start = time.process_time()
    data = RetailDomain().load(DomainOptions(data_dir=args.data_dir))
    data.agent_state.content_hash()  # base digests, computed once per run
    print(f"data: {data.source} ({len(data.tasks)} tasks)")
    print(f"load db.json into shared tables + base digests: {time.process_time() - start:.3f} s CPU (once per run)")
    print(f"shared base tables in memory: {base_table_bytes(Path(data.source) / 'db.json') / 2**20:.1f} MiB (once per run)")

    rows = cpu_per_task(data)
    print(describe("gold replay CPU per task", [r[1] for r in rows]))
    print(describe("conversation replay + evaluation CPU per task", [r[2] for r in rows]))
    print(describe("total CPU per task", [r[1] + r[2] for r in rows]))
    if args.per_task:
        for task_id, gold_s, eval_s in rows:
            print(f"  task {task_id:>5}: gold {1000 * gold_s:7.3f} ms  evaluate {1000 * eval_s:7.3f} ms")

    count, per_env = memory_per_conversation(data, args.conversations)
    print(f"memory per in-flight conversation (gold actions done, {count} held): {per_env / 1024:.1f} KiB")


if __name__ == "__main__":
    main()
