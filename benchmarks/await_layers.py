"""CPU of one layer of `await` on a request's path: a chain of coroutines down to a future the loop resolves.

    python benchmarks/await_layers.py [--conversations 2000] [--requests 6] [--suspensions 3] [--depths 1,5,10,15]

Each conversation makes `requests` requests; each request is a chain of `depth` coroutines whose innermost one waits
`suspensions` times (aiohttp's request waits about three times: connection, headers, body). Prints the CPU per
conversation at each depth (best of 5) and the cost of one layer per conversation (docs/throughput.md, "The run's end,
and await layers"). Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import time


async def leaf(loop: asyncio.AbstractEventLoop, suspensions: int) -> int:
    """The innermost coroutine: waits for `suspensions` futures the loop resolves on its next turn."""
    for _ in range(suspensions):
        future = loop.create_future()
        loop.call_soon(future.set_result, None)
        await future
    return 1


async def layer(depth: int, loop: asyncio.AbstractEventLoop, suspensions: int) -> int:
    """`depth` coroutines awaiting one another down to the leaf."""
    if depth == 0:
        return await leaf(loop, suspensions)
    return await layer(depth - 1, loop, suspensions)


async def conversation(depth: int, requests: int, suspensions: int) -> None:
    """One conversation's requests, one after another."""
    loop = asyncio.get_running_loop()
    for _ in range(requests):
        await layer(depth, loop, suspensions)


async def play(args: argparse.Namespace, depth: int) -> None:
    """Every conversation at once, as a run's concurrency would have them."""
    await asyncio.gather(*(conversation(depth, args.requests, args.suspensions) for _ in range(args.conversations)))


def main() -> None:
    """Time every depth and print the cost per layer."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=6)
    parser.add_argument("--suspensions", type=int, default=3)
    parser.add_argument("--depths", default="1,5,10,15")
    args = parser.parse_args()
    depths = [int(d) for d in args.depths.split(",")]
    found = {}
    for depth in depths:
        best = float("inf")
        for _ in range(5):
            started = time.process_time()
            asyncio.run(play(args, depth))
            best = min(best, time.process_time() - started)
        found[depth] = best / args.conversations
        print(f"depth {depth:3d}: {found[depth] * 1e6:7.1f} µs CPU per conversation")
    low, high = min(depths), max(depths)
    print(f"one layer: {(found[high] - found[low]) / (high - low) * 1e6:.2f} µs per conversation")


if __name__ == "__main__":
    main()
