"""Knowledge retrieval: search latency per query over a knowledge base (tau2's 698 banking documents when found).

    python benchmarks/knowledge_search.py [--documents DIR] [--repeat 20] [--dimensions 3072]

Documents from --documents, else ../shared/reference/tau2/banking_knowledge/documents beside the repository.
Figures are printed, never asserted:

1. Loading the documents and building the BM25 index (once per process).
2. KB_search (BM25, top 10, result text included) and grep per query, over the queries and patterns recorded from
   tau2 (plugins/knowledge/tests/data/knowledge_tau2_rankings.json): mean, median, 95th percentile.
3. Dense search: the cosine ranking alone over vectors of --dimensions (pure Python, as bench does it), and a whole
   KB_search_dense call against the local OpenAI-protocol server (query embedding cached after the first call).
4. The shell tool: one command in a fresh bubblewrap sandbox (skipped when no sandbox works here).
"""

from __future__ import annotations

import argparse
import array
import asyncio
import inspect
import json
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_knowledge import KnowledgeBase, knowledge_toolkit, refusal, resolve_variant

from bench_kernel import (
    ConversationModels,
    ModelConfig,
    ModelHub,
    State,
    ToolContext,
    Toolkit,
    collect,
    get_plugin_manager,
    installed_entry_points,
)
from bench_kernel.testing import FakeOpenAIServer

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DOCUMENTS = REPO / ".." / "shared" / "reference" / "tau2" / "banking_knowledge" / "documents"
RECORDED = REPO / "plugins" / "knowledge" / "tests" / "data" / "knowledge_tau2_rankings.json"


def figures(label: str, seconds: list[float]) -> None:
    ms = sorted(s * 1000 for s in seconds)
    p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))]
    print(f"  {label:<34} mean {statistics.fmean(ms):8.3f} ms   median {statistics.median(ms):8.3f} ms   p95 {p95:8.3f} ms   ({len(ms)} calls)")


def timed(call: Callable[[], Any], repeat: int) -> list[float]:
    found = []
    for _ in range(repeat):
        started = time.perf_counter()
        call()
        found.append(time.perf_counter() - started)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=Path, default=DEFAULT_DOCUMENTS)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--dimensions", type=int, default=3072)
    args = parser.parse_args()
    if not args.documents.is_dir():
        raise SystemExit(f"no documents at {args.documents} (give --documents DIR)")
    recorded = json.loads(RECORDED.read_text(encoding="utf-8"))
    queries = list(dict.fromkeys(case["query"] for case in recorded["bm25"]))
    patterns = list(dict.fromkeys(case["pattern"] for case in recorded["grep"]))

    started = time.perf_counter()
    kb = KnowledgeBase.from_directory(args.documents)
    loaded = time.perf_counter()
    tools = knowledge_toolkit(Toolkit, kb, resolve_variant("bm25_grep"))(State.from_records({}))
    tools.call_tool("KB_search", {"query": "warm"})
    indexed = time.perf_counter()
    print(f"{len(kb)} documents, {sum(len(d.content) for d in kb.documents):,} characters")
    print(f"  load {1000 * (loaded - started):.1f} ms, BM25 index {1000 * (indexed - loaded):.1f} ms (once per process)")

    print("per query:")
    figures(
        "KB_search (BM25, text included)", [t for q in queries for t in timed(lambda q=q: tools.call_tool("KB_search", {"query": q}), args.repeat)]
    )
    figures("grep (Python re)", [t for p in patterns for t in timed(lambda p=p: tools.call_tool("grep", {"pattern": p}), max(1, args.repeat // 4))])

    rng = random.Random(0)
    vectors = [[rng.gauss(0, 1) for _ in range(args.dimensions)] for _ in range(len(kb))]
    from bench_knowledge.dense import cosine_ranking, normalized

    unit = [array.array("d", normalized(v)) for v in vectors]  # stored as bench stores document vectors
    query = [rng.gauss(0, 1) for _ in range(args.dimensions)]
    figures(f"cosine ranking ({args.dimensions} dims)", timed(lambda: cosine_ranking(query, unit, 10), max(3, args.repeat // 4)))
    dense_search(kb, queries, args.repeat)
    shell_commands(kb, args.repeat)


def dense_search(kb: KnowledgeBase, queries: list[str], repeat: int) -> None:
    if "openai" not in installed_entry_points():
        print("  KB_search_dense: skipped (bench-openai is not installed)")
        return
    backend = collect(get_plugin_manager(["openai"])).get("model", "openai")
    with FakeOpenAIServer() as server:
        hub = ModelHub(configs={"embeddings": ModelConfig(model="m", base_url=server.base_url)}, backends={"openai": backend})
        models = ConversationModels(hub=hub)
        tools = knowledge_toolkit(Toolkit, kb, resolve_variant("alltools"))(State.from_records({}), context=ToolContext(models=models))

        async def go() -> tuple[float, list[float]]:
            started = time.perf_counter()
            await tools.call_tool("KB_search_dense", {"query": "warm"})
            first = time.perf_counter() - started
            found = []
            for _ in range(max(1, repeat // 4)):
                for q in [q for q in queries if q.strip()]:
                    started = time.perf_counter()
                    await tools.call_tool("KB_search_dense", {"query": q})
                    found.append(time.perf_counter() - started)
            await hub.aclose()
            return first, found

        first, found = asyncio.run(go())
    print(f"  KB_search_dense first call (embeds {len(kb)} documents, 64-dim test vectors): {1000 * first:.0f} ms")
    figures("KB_search_dense (64-dim, local server)", found)


def shell_commands(kb: KnowledgeBase, repeat: int) -> None:
    reason = refusal(resolve_variant("terminal_use"))
    if reason is not None:
        print(f"  shell: skipped ({reason})")
        return
    tools = knowledge_toolkit(Toolkit, kb, resolve_variant("terminal_use"))(State.from_records({}))

    def run(command: str) -> None:
        result = tools.call_tool("shell", {"command": command})
        asyncio.run(result) if inspect.isawaitable(result) else None

    run("true")  # the one-time export of the documents as files
    for command in ("cat INDEX.md | head -5", "grep -ril 'annual fee' . | wc -l", "rg -c overdraft | sort | tail -3"):
        figures(f"shell: {command}"[:34], timed(lambda c=command: run(c), max(3, repeat // 2)))


if __name__ == "__main__":
    main()
