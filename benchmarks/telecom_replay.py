"""Telecom domain costs: generating the tasks, CPU per task for gold replay + evaluation, memory per conversation.

    python benchmarks/telecom_replay.py [--data-dir DIR | --own] [--split base] [--conversations 100] [--per-task]

Uses tau2's telecom files from ../shared/reference/tau2/telecom when present (or --data-dir), else
our own data. Figures are printed, never asserted.

1. Generation: loading the domain with every composition (3,405 tasks built on fresh environments,
   initialization actions run and checked), then verifying every one of them.
2. CPU: for every task of the split, the gold replay (tau2's gold path, plus the live path its
   assertions are judged on), then the tool calls of a conversation that makes the gold calls (the
   user's on the phone, the sync after each) and the evaluation of that trajectory.
3. Memory: K environments for different tasks held at once, each after its gold actions.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from bench_compose import verify
from bench_telecom import TelecomDomain
from domain_costs import cpu_per_task, describe, memory_per_conversation

from bench_kernel import DomainOptions

REFERENCE = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference" / "tau2" / "telecom"


def main() -> None:
    """Run the measurements and print them."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=REFERENCE if (REFERENCE / "db.toml").is_file() else None)
    parser.add_argument("--own", action="store_true", help="measure our own data even when tau2's files are present")
    parser.add_argument("--split", default=None, help="default: base with tau2's files, default with ours")
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--per-task", action="store_true", help="also print every task's figures")
    args = parser.parse_args()
    if args.own:
        args.data_dir = None
    split = args.split or ("base" if args.data_dir else "default")
    everything = "composed" if args.data_dir else "full"

    start = time.process_time()
    composed = TelecomDomain().load(DomainOptions(data_dir=args.data_dir, split=everything))
    generated = time.process_time()
    problems = [p for task in composed.tasks for p in verify(composed, task)]
    print(f"data: {composed.source}")
    print(
        f"generate all {len(composed.tasks)} compositions: {generated - start:.2f} s CPU "
        f"({1000 * (generated - start) / len(composed.tasks):.3f} ms per task); "
        f"verify them: {time.process_time() - generated:.2f} s CPU, {len(problems)} problems"
    )

    data = TelecomDomain().load(DomainOptions(data_dir=args.data_dir, split=split))
    rows = cpu_per_task(data)
    print(f"split {split}: {len(data.tasks)} tasks")
    print(describe("gold replay CPU per task", [r[1] for r in rows]))
    print(describe("conversation replay + evaluation CPU per task", [r[2] for r in rows]))
    print(describe("total CPU per task", [r[1] + r[2] for r in rows]))
    if args.per_task:
        for task_id, gold_s, eval_s in rows:
            print(f"  {task_id}: gold {1000 * gold_s:7.3f} ms  evaluate {1000 * eval_s:7.3f} ms")
    count, per_env = memory_per_conversation(data, args.conversations)
    print(f"memory per in-flight conversation (gold actions done, {count} held): {per_env / 1024:.1f} KiB")


if __name__ == "__main__":
    main()
