"""Airline domain: gold replay + evaluation CPU time per task, and memory per in-flight conversation.

    python benchmarks/airline_replay.py [--data-dir DIR | --own-suite] [--conversations 40]

Uses tau2's airline data when it is found (--data-dir, $BENCH_TAU2_DATA_DIR, or ../shared/reference/tau2
next to the repository), otherwise the plugin's own generated suite.

1. Per task: CPU time to replay the gold actions (the gold state), to run the same actions as a
   conversation would (the predicted state) and to evaluate it; then the time of the reference
   (tau2) DB hash that `bench check` adds. Figures are printed, never asserted.
2. Memory: tracemalloc over K environments for different tasks, each with its gold actions run
   and all held at once; reports the bytes each extra in-flight conversation adds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import tracemalloc
from pathlib import Path

from bench_airline import AirlineDomain

from bench_kernel import (
    AssistantMessage,
    DomainData,
    DomainOptions,
    Environment,
    Message,
    Task,
    TerminationReason,
    ToolCall,
    build_environment,
    evaluate,
    replay_gold,
)

REPO = Path(__file__).resolve().parents[1]


def find_data_dir(given: str | None) -> Path | None:
    """The tau2 airline directory to use, or None for the packaged suite."""
    for candidate in (given, os.environ.get("BENCH_TAU2_DATA_DIR"), REPO / ".." / "shared" / "reference" / "tau2"):
        if candidate is None:
            continue
        for path in (Path(candidate), Path(candidate) / "airline"):
            if (path / "db.json").is_file():
                return path.resolve()
    return None


def play(data: DomainData, task: Task) -> tuple[Environment, list[Message]]:
    """Run a task's gold actions as a conversation would: the final env and the messages."""
    env = build_environment(data, task)
    messages: list[Message] = []
    for i, action in enumerate(task.gold_actions()):
        call = ToolCall(id=f"c{i}", name=action.name, arguments=dict(action.arguments))
        messages += [AssistantMessage(tool_calls=[call]), env.execute(call)]
    facts = task.evaluation_criteria.communicate_info if task.evaluation_criteria else None
    messages.append(AssistantMessage(content="Done. " + " ".join(facts or [])))
    return env, messages


def time_tasks(data: DomainData) -> None:
    """CPU time per task, gold replay + evaluation, and the reference hash on top."""
    rows = []
    for task in data.tasks:
        start = time.process_time()
        gold = replay_gold(data, task)
        env, messages = play(data, task)
        reward = asyncio.run(evaluate(task, messages, TerminationReason.USER_STOP, env, gold)).reward
        middle = time.process_time()
        data.reference_hash(env.agent_tools.state)
        end = time.process_time()
        rows.append((task.id, len(task.gold_actions()), (middle - start) * 1000, (end - middle) * 1000, reward))
    print(f"{'task':>28} {'actions':>7} {'replay+eval ms':>14} {'tau2 hash ms':>12} {'reward':>6}")
    for task_id, actions, replay_ms, hash_ms, reward in rows:
        print(f"{task_id[:28]:>28} {actions:>7} {replay_ms:>14.2f} {hash_ms:>12.2f} {reward:>6.1f}")
    replay = [r[2] for r in rows]
    hashes = [r[3] for r in rows]
    print(
        f"replay+eval per task: mean {statistics.mean(replay):.2f} ms, median {statistics.median(replay):.2f} ms, "
        f"max {max(replay):.2f} ms; total {sum(replay) / 1000:.3f} s for {len(rows)} tasks"
    )
    print(
        f"tau2 reference hash per task (bench check only): mean {statistics.mean(hashes):.2f} ms "
        f"(the first call dumps every shared record once; median of the rest {statistics.median(hashes[1:] or hashes):.2f} ms)"
    )
    print(f"rewards: {sum(r[4] == 1.0 for r in rows)}/{len(rows)} at 1.0 when the gold actions are replayed")


def memory_per_conversation(data: DomainData, count: int) -> None:
    """Bytes each extra in-flight conversation holds: K environments with their gold actions run."""
    tasks = [data.tasks[i % len(data.tasks)] for i in range(count)]
    play(data, tasks[0])  # warm caches (schemas, base digests) outside the measurement
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    held = [play(data, task) for task in tasks]
    after, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    writes = sum(1 for env, _ in held for table in env.agent_tools.state.tables.values() for _ in table.overlay)
    print(
        f"memory: {count} environments held, {(after - before) / count / 1024:.1f} KiB per conversation "
        f"(messages included; {writes / count:.2f} changed records each; peak {(peak - before) / 1024:.0f} KiB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--own-suite", action="store_true", help="use the plugin's generated suite even if tau2 data is found")
    parser.add_argument("--conversations", type=int, default=40)
    args = parser.parse_args()
    data_dir = None if args.own_suite else find_data_dir(args.data_dir)
    start = time.process_time()
    data = AirlineDomain(name="airline").load(DomainOptions(data_dir=data_dir))
    print(
        f"data: {data.source} ({'tau2 reference' if data_dir else 'our generated suite'}), {len(data.tasks)} tasks, "
        f"loaded in {(time.process_time() - start) * 1000:.0f} ms CPU"
    )
    time_tasks(data)
    memory_per_conversation(data, args.conversations)


if __name__ == "__main__":
    main()
