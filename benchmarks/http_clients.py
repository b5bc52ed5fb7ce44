"""CPU per chat-completion request of HTTP client stacks at a given concurrency, against the fake OpenAI server.

    python benchmarks/http_clients.py [--concurrency 256] [--requests 5120] [--latency-s 0.2]

The fake server runs in a child process (so its CPU is not counted); this process sends `requests` chat
completions with `concurrency` in flight through each client and prints, per client, CPU ms per request
(user + system of this process while the requests ran), wall seconds and the efficiency against the latency
bound (ideal = requests / concurrency x latency). Clients:
    openai-client        bench-openai's OpenAIClient as a run uses it (on http://, its own plain stack)
    openai-client-aiohttp  the same client on aiohttp (its stack for https:// or through a proxy)
    openai-client-httpx  the same client on its httpx stack (pools of 8 connections, one slot queue)
    aiohttp              one bare aiohttp.ClientSession (C http parser) with `concurrency` connections
    httpx-1pool          one bare httpx.AsyncClient with `concurrency` connections (slow: about 100 s at C=256)
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

BODY = {
    "model": "fake-model",
    "messages": [{"role": "system", "content": "You are a helpful agent. " * 40}, {"role": "user", "content": "Hi, please move me to Fiber 1000."}],
}
SERVER = """
import sys, time
sys.path.insert(0, {benchmarks!r})
from model_concurrency import world
from bench_kernel.testing import FakeOpenAIServer
with FakeOpenAIServer(world, latency_s={latency}, record=False) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()
"""


def cpu_s() -> float:
    """User + system CPU seconds of this process so far."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def drive(send: Callable[[], Awaitable[Any]], concurrency: int, requests: int) -> None:
    """Send `requests` requests with `concurrency` in flight."""
    left = iter(range(requests))

    async def worker() -> None:
        for _ in left:
            await send()

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def openai_client(base_url: str, concurrency: int, requests: int, http: str = "") -> None:
    """bench-openai's client, as a run builds it."""
    from bench_openai.client import OpenAIClient

    from bench_kernel import ChatRequest, ModelConfig

    request = ChatRequest(messages=BODY["messages"])
    config = ModelConfig(model="fake-model", base_url=base_url, max_concurrency=concurrency, options={"http": http} if http else {})
    async with OpenAIClient(config) as client:
        await drive(lambda: client.complete(request), concurrency, requests)


async def openai_client_aiohttp(base_url: str, concurrency: int, requests: int) -> None:
    """bench-openai's client on aiohttp."""
    await openai_client(base_url, concurrency, requests, http="aiohttp")


async def openai_client_httpx(base_url: str, concurrency: int, requests: int) -> None:
    """bench-openai's client on its httpx stack (pools of 8 connections)."""
    await openai_client(base_url, concurrency, requests, http="httpx")


async def httpx_one_pool(base_url: str, concurrency: int, requests: int) -> None:
    """One httpx client holding every connection."""
    import httpx

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    content = json.dumps(BODY).encode()
    async with httpx.AsyncClient(base_url=base_url, limits=limits, timeout=60) as client:

        async def send() -> None:
            response = await client.post("/chat/completions", content=content, headers={"Content-Type": "application/json"})
            json.loads(response.content)

        await drive(send, concurrency, requests)


async def aiohttp_session(base_url: str, concurrency: int, requests: int) -> None:
    """One aiohttp session holding every connection."""
    import aiohttp

    content = json.dumps(BODY).encode()
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=60)) as session:
        url = base_url + "/chat/completions"

        async def send() -> None:
            async with session.post(url, data=content, headers={"Content-Type": "application/json"}) as response:
                json.loads(await response.read())

        await drive(send, concurrency, requests)


CLIENTS: dict[str, Callable[[str, int, int], Awaitable[None]]] = {
    "openai-client": openai_client,
    "openai-client-aiohttp": openai_client_aiohttp,
    "openai-client-httpx": openai_client_httpx,
    "aiohttp": aiohttp_session,
    "httpx-1pool": httpx_one_pool,
}


def main() -> None:
    """Measure each client and print one JSON line each."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--concurrency", type=int, default=256)
    parser.add_argument("--requests", type=int, default=5120)
    parser.add_argument("--latency-s", type=float, default=0.2)
    parser.add_argument("--clients", default=",".join(CLIENTS))
    args = parser.parse_args()
    code = SERVER.format(benchmarks=str(Path(__file__).parent), latency=args.latency_s)
    server = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        base_url = server.stdout.readline().strip()
        for name in args.clients.split(","):
            try:
                __import__({"aiohttp": "aiohttp"}.get(name, "httpx"))
            except ImportError:
                print(json.dumps({"client": name, "unavailable": "not installed"}), flush=True)
                continue
            cpu, wall = cpu_s(), time.perf_counter()
            asyncio.run(CLIENTS[name](base_url, args.concurrency, args.requests))
            cpu, wall = cpu_s() - cpu, time.perf_counter() - wall
            ideal = -(-args.requests // args.concurrency) * args.latency_s
            print(
                json.dumps(
                    {
                        "client": name,
                        "concurrency": args.concurrency,
                        "requests": args.requests,
                        "cpu_ms_per_request": round(1000 * cpu / args.requests, 3),
                        "wall_s": round(wall, 2),
                        "efficiency": round(ideal / wall, 3),
                    }
                ),
                flush=True,
            )
    finally:
        server.communicate("")


if __name__ == "__main__":
    main()
