"""Throughput of whole `bench run` processes on the airline domain (tau2's data) against a scripted OpenAI server.

    python benchmarks/airline_throughput.py [--data-dir DIR] [--latency-s 0.2] [--levels 32,256,1024]
        [--conversations 32=200,256=1300,1024=5150] [--variants process,workers2,default] [--repeat 1] [--startups 5]
        [--bench PATH]    # measure another installation, e.g. a fresh clone's .venv/bin/bench
        [--bench A --bench B]   # two installations, alternated run by run (variants named default@1, default@2)
        [--domain telecom [--num-tasks 50]]   # another tau2 domain (its first N tasks)
    python benchmarks/airline_throughput.py --serve   # only the scripted server: prints its URL (profile a run by hand)

Variants: `process` is one process (`--workers 1`), `workers2` is `--workers 2`, `default` gives no `--workers` (what
a user gets: `auto` since it became the default; one process before). The table at the end has one row per level and
variant, then the variants side by side.

The airline variant of `throughput.py`: the same launcher, the same measures, and a scripted server that makes
airline conversations. The server (bench's test server, in this process) answers every chat completion after
`latency_s`: the simulated customer states the task's reason for calling, the agent replays the task's gold actions
one tool call per request and then says what the task wants communicated, and the customer says thanks and stops.
A task with k gold actions makes k + 3 requests (tau2's 50 airline tasks: 5.84 on average, 3 to 22). Each
measurement is one `bench run` process (`llm-fc` agent, `llm-user`, bench-openai, every task of the suite, as many
trials as make the level's conversations), so start-up, CPU and peak memory are the process's own.

Figures, one row per level and variant, in one table at the end (and one JSON line per measurement as it ends):
    ideal      the wall time of the same schedule with a harness that costs nothing: C slots take the conversations in
               bench's order (trial-major), each lasting its own requests x latency (= waves x requests x latency when
               every conversation has the same length)
    eff        ideal / (process end - first request): the harness's own delay once requests flow
    eff+start  ideal / (process end - process start): start-up included, as an outside driver measures it
    CPU ms/conv   user + system CPU of the whole process (start-up included) per conversation
    start-up   process start to the server's first chat completion
The start-up line measures a small run (`--startups` times, one conversation each) with the bytecode as the
installation has it (nothing compiled here, unlike throughput.py): what a user gets from a shell after set-up.
Data: `--data-dir` or $BENCH_TAU2_DATA_DIR (tau2's airline directory, or its parent); without either, the airline
plugin's own generated suite. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import json
import math
import os
import select
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from throughput import Launcher, bench_command

from bench_kernel import DomainOptions, Store
from bench_kernel.tasks.domain import data_dir_for, packaged_or_external, read_tasks
from bench_kernel.testing import FakeOpenAIServer

MARKER = "booking reference case "
"""How the scripted customer names its task in its first words, so the scripted agent knows which gold actions to replay."""


class AirlineScript:
    """The scripted server's answers: a customer who asks and then stops, an agent that replays the gold actions."""

    def __init__(self, tasks: list[Any]) -> None:
        self.tasks = {task.id: task for task in tasks}
        # The customer's system prompt holds its task's scenario as tau2 renders it.
        self.scenarios = [(task.user_scenario.render(), task) for task in tasks]

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        """The assistant message for one chat-completion request body."""
        # The customer's system prompt holds its scenario (telecom's customer has tools of its own, too).
        system = body["messages"][0].get("content") or ""
        task = next((task for scenario, task in self.scenarios if scenario in system), None)
        if task is None:
            return self.agent(body["messages"])
        return self.customer(body["messages"], task)

    def customer(self, messages: list[dict[str, Any]], task: Any) -> dict[str, Any]:
        """First the task's reason for calling (with its case marker), then a stop."""
        if any(m["role"] == "assistant" for m in messages):
            return {"role": "assistant", "content": "Thank you, that is all. ###STOP###"}
        reason = task.user_scenario.instructions
        said = getattr(reason, "reason_for_call", str(reason)).strip().splitlines()[0]
        return {"role": "assistant", "content": f"Hello. {said} ({MARKER}{task.id})"}

    def agent(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        """The next gold action as a tool call; when all are done, what the task wants said."""
        opening = next(m["content"] for m in messages if m["role"] == "user" and MARKER in (m.get("content") or ""))
        task = self.tasks[opening.rsplit(MARKER, 1)[1].rstrip(")")]
        done = sum(m["role"] == "tool" for m in messages)
        actions = [a for a in task.gold_actions() if a.requestor == "assistant"]  # the customer's own it leaves undone
        if done < len(actions):
            action = actions[done]
            call = {"id": f"call_{done}", "type": "function", "function": {"name": action.name, "arguments": json.dumps(action.arguments)}}
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        criteria = task.evaluation_criteria
        facts = "; ".join(criteria.communicate_info or []) if criteria else ""
        return {"role": "assistant", "content": f"All done. {facts}".strip()}


def load_tasks(data_dir: Path | None, domain: str = "airline", num_tasks: int | None = None) -> tuple[list[Any], Path | None]:
    """The domain's tasks as a run selects them (tau2's when a data directory is given) and the directory they came from."""
    options = DomainOptions(data_dir=data_dir)
    if domain == "airline" and num_tasks is None:
        found = data_dir_for(options, domain) if data_dir else None
        return read_tasks(packaged_or_external("bench_airline", options, "airline") / "tasks.json", options), found
    found = data_dir  # the domain's loader finds its files there (telecom's are spread over several)
    from bench_kernel import RunConfig, collect, get_plugin_manager
    from bench_kernel.run.planning import load_domain, select_tasks

    config = RunConfig(domain=domain, data_dir=str(found) if found else None, num_tasks=num_tasks)
    return select_tasks(load_domain(collect(get_plugin_manager([domain])), config), config), found


BENCH: list[str] = []
"""The `bench` executable measured (`--bench`; default: the one beside this interpreter)."""
DOMAIN: list[str] = []
"""The domain measured and its task selection (`--domain`, `--num-tasks`): `bench run` options."""
VARIANT_OPTIONS = {"process": ["--workers", "1"], "workers2": ["--workers", "2"], "default": []}


def command(base_url: str, concurrency: int, trials: int, db: Path, variant: str, data_dir: Path | None) -> list[str]:
    """The `bench run` command line of one measurement."""
    settings = [("backend", "openai"), ("model", "fake-model"), ("base_url", base_url), ("timeout_s", "120")]
    roles = [f"--model-option={role}.{key}={value}" for role in ("agent", "user") for key, value in settings]
    data = ["--data-dir", str(data_dir)] if data_dir else []
    return [
        *(BENCH or bench_command()),
        "run",
        *DOMAIN,
        "--plugin",
        "openai",
        "--plugin",
        "llm",
        *data,
        "--agent",
        "llm-fc",
        "--user",
        "llm-user",
        "--trials",
        str(trials),
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
        *VARIANT_OPTIONS[variant],
    ]


def ideal_wall(lengths: list[int], concurrency: int, latency_s: float) -> float:
    """The makespan of C slots taking conversations in order, each lasting its requests x latency."""
    slots = [0.0] * min(concurrency, len(lengths))
    for n in lengths:
        heapq.heappush(slots, heapq.heappop(slots) + n * latency_s)
    return max(slots, default=0.0)


def stored(db: Path, tasks: list[Any]) -> tuple[int, list[int], float]:
    """(conversations, requests per conversation in bench's order, mean reward) of the run in `db`."""
    order = {task.id: i for i, task in enumerate(tasks)}
    store = Store(db)
    try:
        rows = store.db.execute(
            "select c.task_id, c.trial, c.reward, (select count(*) from llm_calls l where l.conversation_id = c.id) from conversations c"
        ).fetchall()
    finally:
        store.close()
    rows.sort(key=lambda r: (r[1], order.get(r[0], 0)))
    rewards = [r[2] for r in rows if r[2] is not None]
    return len(rows), [r[3] for r in rows], (sum(rewards) / len(rewards) if rewards else math.nan)


def measure(
    launcher: Launcher,
    server: FakeOpenAIServer,
    args: argparse.Namespace,
    tasks: list[Any],
    concurrency: int,
    conversations: int,
    variant: str,
    workdir: Path,
) -> dict[str, Any]:
    """One level of one variant."""
    trials = max(1, math.ceil(conversations / len(tasks)))
    db = workdir / f"{variant}-c{concurrency}-{len(os.listdir(workdir))}.db"
    seen = len(server.requests)
    started, ended, usage, status = launcher.run(command(server.base_url, concurrency, trials, db, variant, args.data_dir))
    first = next((r.received_at for r in server.requests[seen:] if r.path.endswith("/chat/completions")), ended)
    done, lengths, reward = stored(db, tasks)
    ideal = ideal_wall(lengths, concurrency, args.latency_s)
    cpu = usage.ru_utime + usage.ru_stime
    return {
        "variant": variant,
        "concurrency": concurrency,
        "conversations": done,
        "exit": status,
        "requests_per_conversation": round(sum(lengths) / done, 2) if done else 0,
        "mean_reward": round(reward, 3),
        "startup_s": round(first - started, 3),
        "wall_s": round(ended - started, 2),
        "ideal_s": round(ideal, 2),
        "efficiency": round(ideal / max(ended - first, 1e-9), 3),
        "efficiency_with_startup": round(ideal / max(ended - started, 1e-9), 3),
        "conversations_per_hour": round(done / (ended - started) * 3600),
        "cpu_ms_per_conversation": round(1000 * cpu / done, 2) if done else None,
        "peak_rss_kib": usage.ru_maxrss,
    }


def startups(launcher: Launcher, server: FakeOpenAIServer, args: argparse.Namespace, tasks: list[Any], workdir: Path) -> list[tuple[float, float]]:
    """(process start to first request, CPU of the whole process) of a one-conversation run, `--startups` times.

    The CPU is robust to a loaded machine where the wall time is not: it is start-up's plus one conversation's (a few ms).
    """
    found = []
    for i in range(args.startups):
        seen = len(server.requests)
        argv = command(server.base_url, 1, 1, workdir / f"startup-{i}.db", "process", args.data_dir)
        argv += ["--task-id", tasks[0].id]
        started, ended, usage, _ = launcher.run(argv)
        first = next((r.received_at for r in server.requests[seen:] if r.path.endswith("/chat/completions")), ended)
        found.append((first - started, usage.ru_utime + usage.ru_stime))
    return found


def table(rows: list[dict[str, Any]], starts: list[tuple[float, float]]) -> str:
    """Every figure in one markdown table."""
    head = (
        "| variant | C | conv | req/conv | reward | ideal s | wall s | eff | eff+start | CPU ms/conv | conv/h "
        "| start-up s | peak RSS MiB |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        lines.append(
            f"| {r['variant']} | {r['concurrency']} | {r['conversations']} | {r['requests_per_conversation']} "
            f"| {r['mean_reward']} | {r['ideal_s']} | {r['wall_s']} | {r['efficiency']} "
            f"| {r['efficiency_with_startup']} | {r['cpu_ms_per_conversation']} | {r['conversations_per_hour']:,} "
            f"| {r['startup_s']} | {round(r['peak_rss_kib'] / 1024)} |"
        )
    if starts:
        walls, cpus = [w for w, _ in starts], [c for _, c in starts]
        lines.append(
            f"\nstart-up, one-conversation run from a shell ({len(starts)} runs): median "
            f"{statistics.median(walls):.3f} s, min {min(walls):.3f} s, max {max(walls):.3f} s; "
            f"CPU of the whole run: median {statistics.median(cpus):.3f} s, min {min(cpus):.3f} s"
        )
    return "\n".join(lines)


def side_by_side(rows: list[dict[str, Any]]) -> str:
    """Per level, each variant's eff+start, CPU ms per conversation and start-up (ranges over repeats)."""
    variants = list(dict.fromkeys(r["variant"] for r in rows))
    head = "| C | " + " | ".join(f"{v} eff+start | {v} CPU ms/conv | {v} start-up s" for v in variants) + " |"
    lines = [head, "|---" * (1 + 3 * len(variants)) + "|"]
    for level in sorted({r["concurrency"] for r in rows}):
        cells = []
        for variant in variants:
            found = [r for r in rows if r["variant"] == variant and r["concurrency"] == level]
            for key in ("efficiency_with_startup", "cpu_ms_per_conversation", "startup_s"):
                values = sorted(r[key] for r in found if r[key] is not None)
                cells.append("" if not values else f"{values[0]}" if values[0] == values[-1] else f"{values[0]}-{values[-1]}")
        lines.append(f"| {level} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def level_counts(text: str) -> dict[int, int]:
    """`32=200,256=1300` as {32: 200, 256: 1300}."""
    return {int(k): int(v) for k, v in (item.split("=") for item in text.split(",") if item)}


def main() -> None:
    """Measure every level of every variant, print one JSON line each, then the table."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, default=os.environ.get("BENCH_TAU2_DATA_DIR") or None)
    parser.add_argument("--latency-s", type=float, default=0.2)
    parser.add_argument("--levels", default="32,256,1024", help="Concurrency levels (empty: start-up only).")
    parser.add_argument(
        "--conversations",
        default="1=50,32=200,256=1300,1024=5150",
        help="Conversations per level (rounded up to whole trials of the suite); default 5 waves.",
    )
    parser.add_argument("--variants", default="process,workers2,default", help="Of process, workers2, default.")
    parser.add_argument("--domain", default="airline", help="The tau2 domain measured (airline, retail, telecom).")
    parser.add_argument("--num-tasks", type=int, help="Only the domain's first N tasks (`bench run --num-tasks`).")
    parser.add_argument("--repeat", type=int, default=1, help="Measure every level this many times.")
    parser.add_argument("--startups", type=int, default=5, help="One-conversation runs timed for start-up (0: none).")
    parser.add_argument(
        "--bench",
        action="append",
        default=[],
        help="The bench executable to measure, e.g. a fresh clone's .venv/bin/bench (default: this venv's); given more "
        "than once, every measurement runs once per executable in turn, its variant named VARIANT@N (N: 1 for the first).",
    )
    parser.add_argument(
        "--serve", action="store_true", help="Only serve: print the server's base URL and answer until stdin closes (to profile a bench run by hand)."
    )
    args = parser.parse_args()
    tasks, args.data_dir = load_tasks(args.data_dir, args.domain, args.num_tasks)
    benches: list[list[str]] = [[bench] for bench in args.bench] or [[]]
    BENCH[:] = benches[0]
    DOMAIN[:] = ["--plugin", args.domain, *(["--num-tasks", str(args.num_tasks)] if args.num_tasks else [])]
    if args.serve:
        with FakeOpenAIServer(AirlineScript(tasks), latency_s=args.latency_s, record=False) as server:
            print(server.base_url, flush=True)
            # It keeps every request it read: frozen out of its collector now and then, or its full passes (0.3 s by the
            # tenth run of 1,300 conversations) stall the replies of whatever it serves.
            while select.select([sys.stdin], [], [], 1.0)[0] == [] or sys.stdin.read(1):
                gc.freeze()
        return
    counts = level_counts(args.conversations)
    rows: list[dict[str, Any]] = []
    launcher = Launcher(compile_bytecode=False)
    with FakeOpenAIServer(AirlineScript(tasks), latency_s=args.latency_s, record=False) as server, tempfile.TemporaryDirectory() as tmp:
        starts = {}
        for n, bench in enumerate(benches, 1):
            BENCH[:] = bench
            starts[n] = startups(launcher, server, args, tasks, Path(tmp))
        for variant in filter(None, args.variants.split(",")):
            for level in (int(x) for x in args.levels.split(",") if x):
                for _ in range(args.repeat):
                    # Installations alternate run by run: this machine's speed drifts, so only neighbours compare.
                    for n, bench in enumerate(benches, 1):
                        BENCH[:] = bench
                        found = measure(launcher, server, args, tasks, level, counts.get(level, 5 * level), variant, Path(tmp))
                        found["variant"] += f"@{n}" if len(benches) > 1 else ""
                        rows.append(found)
                        print(json.dumps(found), flush=True)
    launcher.close()
    print(f"\n{args.domain} ({args.data_dir or 'packaged suite'}), {len(tasks)} tasks, server latency {args.latency_s} s\n")
    for n, bench in enumerate(benches, 1):
        label = f"{bench[0] if bench else 'this venv'}" + (f" (@{n})" if len(benches) > 1 else "")
        print(f"{label}:\n{table([r for r in rows if len(benches) == 1 or r['variant'].endswith(f'@{n}')], starts[n])}\n")
    print(side_by_side(rows))


if __name__ == "__main__":
    main()
