"""What the domain benchmarks share: play a task's gold actions as a conversation, time replay + evaluation, memory, figures."""

from __future__ import annotations

import asyncio
import gc
import statistics
import time
import tracemalloc

from bench_kernel import (
    AssistantMessage,
    DomainData,
    Environment,
    GoldReplay,
    Message,
    Task,
    TerminationReason,
    build_environment,
    evaluate,
    replay_gold,
)


def play_gold(data: DomainData, task: Task) -> tuple[Environment, list[Message]]:
    """A conversation that makes the gold calls: the environment it leaves and its messages."""
    env = build_environment(data, task)
    messages: list[Message] = []
    for action in task.gold_actions():
        call = action.as_tool_call()
        messages.append(AssistantMessage(tool_calls=[call]))
        messages.append(env.execute(call))
    return env, messages


def cpu_per_task(data: DomainData) -> list[tuple[str, float, float]]:
    """(task id, gold replay CPU seconds, conversation replay + evaluation CPU seconds) per task."""
    results = []
    for task in data.tasks:
        start = time.process_time()
        gold: GoldReplay = replay_gold(data, task)
        replayed = time.process_time()
        env, messages = play_gold(data, task)
        asyncio.run(evaluate(task, messages, TerminationReason.AGENT_STOP, env, gold))
        results.append((task.id, replayed - start, time.process_time() - replayed))
    return results


def memory_per_conversation(data: DomainData, count: int) -> tuple[int, float]:
    """Bytes added per held environment (after its gold actions), over count different tasks."""
    tasks = [data.tasks[i % len(data.tasks)] for i in range(count)]
    play_gold(data, tasks[0])  # warm caches (schemas, base digests) outside the measurement
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    held = [play_gold(data, task)[0] for task in tasks]
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert len(held) == count
    return count, (after - before) / count


def describe(label: str, values: list[float]) -> str:
    """mean / median / p95 / max in milliseconds."""
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return (
        f"{label:<44} mean {1000 * statistics.fmean(values):7.3f} ms   median {1000 * statistics.median(values):7.3f} ms"
        f"   p95 {1000 * p95:7.3f} ms   max {1000 * ordered[-1]:7.3f} ms"
    )
