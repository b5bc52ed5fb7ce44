"""The single writer's ceiling: how many conversations per second the run's process can store for its workers.

    python benchmarks/single_writer.py [--conversations 2000] [--sample 40] [--per-turn 20]

Whatever executor plays a run (`--workers N`, `--executor ray`), one process writes SQLite: per conversation it
receives the model calls (ledgered as they arrive) and the finished conversation (conversation, messages, tool
calls, events, metric values); the store commits once per turn of the event loop, so the rate depends on how many
conversations arrive per turn: measured with one per turn (a commit per conversation, the worst case) and with
`--per-turn` (workers send batches every 5 ms). This script captures what workers
send for `sample` real conversations (llm-fc and llm-user of bench-llm on the mock domain's upgrade task against
the test suite's fake OpenAI server: 5 model calls, 10 messages each), then replays `conversations` of them
(renumbered trials) through `bench_kernel.Writer` into a fresh database, and prints the rate:
    store only          Writer.apply on messages already in memory
    with unpickling     plus pickle.loads of each message, what a worker's message costs to receive
The store's rate is the ceiling of a run's throughput with any number of workers or nodes.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pickle
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

sys.path.insert(0, str(Path(__file__).parent))
from model_concurrency import TASK, world

from bench_kernel import ModelConfig, Outbox, RunConfig, Writer, worker_context, worker_spec
from bench_kernel.run.runner import execute, prepare
from bench_kernel.testing import FakeOpenAIServer


def config(base_url: str, trials: int) -> RunConfig:
    """The sampled run: bench-llm's participants on the upgrade task."""
    models = {role: ModelConfig(backend="openai", model="fake-model", base_url=base_url) for role in ("agent", "user")}
    return RunConfig(
        domain="mock",
        plugins=["mock", "openai", "llm"],
        agent="llm-fc",
        user="llm-user",
        task_ids=[TASK],
        trials=trials,
        baseline=False,
        models=models,
        concurrency=8,
    )


async def capture(base_url: str, sample: int, db: Path) -> list[tuple[Any, ...]]:
    """What workers would send for `sample` conversations, in order."""
    ctx, units, _, _ = await prepare(config(base_url, sample), db)
    sent: list[tuple[Any, ...]] = []
    spec = worker_spec(ctx, str(db), 1)
    worker = worker_context(spec, [u.task for u in units], Outbox(sent.append, None, False))
    await execute(worker, units)
    await worker.models.aclose()
    ctx.store.close()
    await ctx.models.aclose()
    return sent


def renumbered(messages: list[tuple[Any, ...]], offset: int) -> list[tuple[Any, ...]]:
    """The messages as another copy of the sample: trials shifted by offset, so conversation ids are new."""
    out = []
    for message in messages:
        if message[0] == "call":
            run_id, arm, task, trial = message[1].rsplit("/", 3)
            out.append(("call", f"{run_id}/{arm}/{task}/{int(trial) + offset}", *message[2:]))
        elif message[0] == "done":
            result = attrs.evolve(message[2], trial=message[2].trial + offset)
            out.append(("done", result.conversation_id, result, *message[3:]))
    return out


async def replay(base_url: str, batches: list[list[tuple[Any, ...]]], db: Path, unpickle: bool, per_turn: int) -> tuple[float, int]:
    """Seconds to store every batch through a Writer into a fresh run, and how many conversations were stored.

    The loop turns after every `per_turn` finished conversations: the store commits once per turn.
    """
    ctx, _, _, _ = await prepare(config(base_url, 10_000), db)
    writer = Writer(ctx)
    encoded = [[pickle.dumps(m) for m in batch] for batch in batches] if unpickle else batches
    started = time.perf_counter()
    for batch in encoded:
        for message in batch:
            finished = writer.finished
            writer.apply(pickle.loads(message) if unpickle else message)
            if writer.finished > finished and writer.finished % per_turn == 0:
                await asyncio.sleep(0)
    elapsed = time.perf_counter() - started
    ctx.store.close()
    await ctx.models.aclose()
    return elapsed, writer.finished


def main() -> None:
    """Capture a sample, replay it twice and print the rates."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--sample", type=int, default=40)
    parser.add_argument(
        "--per-turn", type=int, default=20, help="Finished conversations per turn of the loop in the second measurement (one commit each turn)."
    )
    args = parser.parse_args()
    with FakeOpenAIServer(world, record=False) as server, tempfile.TemporaryDirectory() as tmp:
        sample = asyncio.run(capture(server.base_url, args.sample, Path(tmp) / "sample.db"))
        calls = sum(m[0] == "call" for m in sample)
        copies = max(1, args.conversations // args.sample)
        batches = [renumbered(sample, args.sample * (k + 1)) for k in range(copies)]
        for unpickle, per_turn in [(False, 1), (False, args.per_turn), (True, 1), (True, args.per_turn)]:
            db = Path(tmp) / f"replay-{unpickle}-{per_turn}.db"
            elapsed, stored = asyncio.run(replay(server.base_url, batches, db, unpickle, per_turn))
            print(
                json.dumps(
                    {
                        "mode": "with unpickling" if unpickle else "store only",
                        "conversations_per_turn": per_turn,
                        "conversations": stored,
                        "calls_per_conversation": round(calls / args.sample, 2),
                        "seconds": round(elapsed, 2),
                        "conversations_per_s": round(stored / elapsed),
                        "conversations_per_hour": round(stored / elapsed * 3600),
                        "ms_per_conversation": round(1000 * elapsed / stored, 3),
                    }
                ),
                flush=True,
            )


if __name__ == "__main__":
    main()
