"""banking_knowledge: gold replay + evaluation CPU per task, and search latency per query.

    python benchmarks/banking_knowledge_replay.py [--data-dir DIR | --own-suite] [--queries 40]

Uses tau2's banking_knowledge data when it is found (--data-dir, $BENCH_TAU2_DATA_DIR, or ../shared/reference/tau2
next to the repository), otherwise the plugin's own suite. Figures are printed, never asserted.

1. Per task: CPU time to replay the gold actions (the gold state), to run them as a conversation would (both sides'
   calls, the predicted state) and to evaluate it; then the time of tau2's DB hash that `bench check` adds.
2. Search: wall time per query of `KB_search` (bm25) and `grep` (grep_only) over the documents, the index built
   first (its time printed apart); the queries are the first lines of the tasks' scenarios.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import time
from pathlib import Path

from bench_banking_knowledge import BankingKnowledgeDomain

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
    """The tau2 banking_knowledge directory to use, or None for the packaged suite."""
    for candidate in (given, os.environ.get("BENCH_TAU2_DATA_DIR"), REPO / ".." / "shared" / "reference" / "tau2"):
        if candidate is None:
            continue
        for path in (Path(candidate), Path(candidate) / "banking_knowledge"):
            if (path / "db.json").is_file() and (path / "documents").is_dir():
                return path.resolve()
    return None


def play(data: DomainData, task: Task) -> tuple[Environment, list[Message]]:
    """Run a task's gold actions (each by its requestor) as a conversation would: the final env and the messages."""
    env = build_environment(data, task)
    messages: list[Message] = []
    for i, action in enumerate(task.gold_actions()):
        call = ToolCall(id=f"c{i}", name=action.name, arguments=dict(action.arguments), requestor=action.requestor)
        messages += [AssistantMessage(tool_calls=[call]), env.execute(call)]
    messages.append(AssistantMessage(content="Done."))
    return env, messages


def time_tasks(data: DomainData) -> None:
    """CPU time per task, gold replay + evaluation, and tau2's hash on top."""
    rows = []
    for task in data.tasks:
        start = time.process_time()
        gold = replay_gold(data, task)
        env, messages = play(data, task)
        info = asyncio.run(evaluate(task, messages, TerminationReason.USER_STOP, env, gold))
        middle = time.process_time()
        data.reference_hash(env.agent_tools.state)  # type: ignore[misc]
        end = time.process_time()
        rows.append((task.id, len(task.gold_actions()), (middle - start) * 1000, (end - middle) * 1000, info.reward))
    print(f"{'task':>24} {'actions':>7} {'replay+eval ms':>14} {'tau2 hash ms':>12} {'reward':>6}")
    for task_id, actions, replay_ms, hash_ms, reward in rows:
        print(f"{task_id[:24]:>24} {actions:>7} {replay_ms:>14.2f} {hash_ms:>12.2f} {reward if reward is not None else '-':>6}")
    replay, hashes = [r[2] for r in rows], [r[3] for r in rows]
    print(
        f"replay+eval per task: mean {statistics.mean(replay):.2f} ms, median {statistics.median(replay):.2f} ms, "
        f"max {max(replay):.2f} ms; total {sum(replay) / 1000:.3f} s for {len(rows)} tasks"
    )
    print(f"tau2 hash per task: mean {statistics.mean(hashes):.2f} ms (median {statistics.median(hashes):.2f} ms)")
    print("(an NL assertion is left unjudged here: such tasks show no reward)")


def queries(data: DomainData, count: int) -> list[str]:
    """Search queries: the first sentence of each task's scenario, words only."""
    found = []
    for task in data.tasks:
        text = task.user_scenario.instructions
        text = text if isinstance(text, str) else text.reason_for_call
        words = re.findall(r"[A-Za-z][A-Za-z'-]+", text.split(".")[0])
        if words:
            found.append(" ".join(words[:12]))
    return found[:count]


def time_search(data_dir: Path | None, variant: str, tool: str, texts: list[str]) -> None:
    """Wall time per query of one search tool (index or first-use cost printed apart)."""
    data = BankingKnowledgeDomain().load(DomainOptions(data_dir=data_dir, retrieval=variant))
    env = build_environment(data, data.tasks[0])
    argument = "query" if tool == "KB_search" else "pattern"
    start = time.perf_counter()
    env.execute(ToolCall(id="warm", name=tool, arguments={argument: texts[0]}))
    first = (time.perf_counter() - start) * 1000
    times = []
    for i, text in enumerate(texts):
        pattern = text if tool == "KB_search" else text.split()[0]
        start = time.perf_counter()
        env.execute(ToolCall(id=f"q{i}", name=tool, arguments={argument: pattern}))
        times.append((time.perf_counter() - start) * 1000)
    print(
        f"{tool} ({variant}): first call {first:.1f} ms (index built); per query mean {statistics.mean(times):.2f} ms, "
        f"median {statistics.median(times):.2f} ms, max {max(times):.2f} ms over {len(times)} queries"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--own-suite", action="store_true", help="use the plugin's own suite even if tau2 data is found")
    parser.add_argument("--queries", type=int, default=40)
    args = parser.parse_args()
    data_dir = None if args.own_suite else find_data_dir(args.data_dir)
    start = time.process_time()
    data = BankingKnowledgeDomain().load(DomainOptions(data_dir=data_dir, retrieval="no_knowledge"))
    print(
        f"data: {data.source} ({'tau2 reference' if data_dir else 'our suite'}), {len(data.tasks)} tasks, "
        f"loaded in {(time.process_time() - start) * 1000:.0f} ms CPU"
    )
    time_tasks(data)
    texts = queries(data, args.queries)
    time_search(data_dir, "bm25", "KB_search", texts)
    time_search(data_dir, "grep_only", "grep", texts)


if __name__ == "__main__":
    main()
