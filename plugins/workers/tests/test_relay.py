"""The worker relay of `--workers` runs: what arrives from the workers never hides the run's cancellation."""

from __future__ import annotations

import asyncio
import queue

import pytest
from bench_workers.processes import Relay


def test_a_stop_signal_is_never_swallowed_by_a_batch_arriving_in_the_same_loop_turn() -> None:
    async def race() -> None:
        relay = Relay(queue.Queue())  # never started: the test feeds its loop-side queue directly
        getter = asyncio.create_task(relay.get(timeout=5))
        await asyncio.sleep(0)  # the getter waits for a batch
        relay.messages.put_nowait([("batch",)])  # a batch arrives...
        getter.cancel()  # ...in the same turn as the run's cancellation (what a SIGINT handler does)
        with pytest.raises(asyncio.CancelledError):
            await getter
        assert relay.messages.get_nowait() == [("batch",)]  # and the batch is not lost

    asyncio.run(race())
