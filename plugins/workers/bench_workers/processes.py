"""Worker processes: forked after loading (or spawned), each plays a shard of the units; the run's process alone writes.

The run's process also builds its own copy of the domain's deferred data and replays the gold actions on it while the
workers play; its writer holds what they send until that check passed (docs/executors.md, "--workers N").
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import signal
import threading
from collections.abc import Callable
from typing import Any

import attrs

from bench_kernel import (
    ConversationResult,
    DeferredDataError,
    ExecutorError,
    LocalExecutor,
    Outbox,
    RunContext,
    Unit,
    WorkerSpec,
    Writer,
    configure_logging,
    preload_run_data,
    stop_spending,
    worker_context,
    worker_spec,
)

STOP_POLL_S = 0.05
BATCH_S = 0.005
"""A worker sends what it has every few milliseconds: the ledger stays as good as live, the pipe and the writer's
loop are woken once per batch rather than once per message."""
RELAY_BATCH = 1024
WORKER_PRELOAD_AFTER_S = 0.05
"""How long a worker's conversations have to send their first requests before it builds its deferred data (one process:
5 ms): they open their connections first (one process reuses its model check's), and a build holding the GIL meanwhile
held them back by 0.1-0.2 s on a loaded machine."""

Message = tuple[Any, ...]
"""What a worker sends the writer (`bench_kernel.Writer`'s messages, and ("exit", worker index, error or None) when
it ends), in batches (lists)."""


@attrs.define
class HoldingWriter(Writer):
    """The run's writer, which can hold back what the workers send until the run's own gold check passed."""

    held: list[Message] | None = None
    """Messages kept back until `release` (None: each is stored as it comes)."""

    def write(self, message: Message) -> None:
        """Store one message, or hold it back (its spend is counted either way: `Writer.apply`)."""
        if self.held is not None:
            self.held.append(message)
        else:
            super().write(message)

    def release(self) -> None:
        """Store what was held back, in the order it came, and every later message as it comes."""
        held, self.held = self.held or [], None
        for message in held:
            super().write(message)


# --------------------------------------------------------------------------- the worker side


def run_worker_process(spec: WorkerSpec, units: list[Unit], index: int, outbox: Any, stop: Any, loaded: Any = None) -> None:
    """A worker process's body: play a shard of the units, send everything to the parent (`loaded`: forked, its data)."""
    # Ctrl-C reaches the whole process group: the parent decides, and ends its workers itself. A forked worker
    # inherits the parent loop's handlers, whose wake-up descriptor would hand its signals to the parent's loop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.set_wakeup_fd(-1)
    configure_logging(os.environ.get("BENCH_LOG_LEVEL", "warning"))
    error = None
    try:
        asyncio.run(_play_shard(spec, units, outbox.put, stop, loaded))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which fails the run with it
        error = f"{type(exc).__name__}: {exc}"
    outbox.put([("exit", index, error)])


async def _play_shard(spec: WorkerSpec, units: list[Unit], put: Callable[[list[Message]], None], stop: Any, loaded: Any) -> None:
    batch: list[Message] = []
    outbox = Outbox(batch.append, spec.store_path, spec.config.cache or spec.config.speech_cache)
    registry, data = loaded or (None, None)
    for source in data.pending_loads() if data is not None else ():
        source.drop_checks()  # forked before the run's process built its copy: that one runs the gold check, not this
    # Everything with a descriptor or a loop (model clients, the store) is this worker's own, built here.
    ctx = worker_context(spec, [u.task for u in units], outbox, data, registry)

    def flush() -> None:
        if batch:
            put(batch[:])  # one pickle and one pipe write for every message of the last few milliseconds
            batch.clear()

    async def flusher() -> None:
        while True:
            await asyncio.sleep(BATCH_S)
            flush()

    parent = os.getppid()

    async def watch() -> None:
        while not stop.is_set():
            if os.getppid() != parent:  # the run's process was killed: nobody would store what this one plays
                os._exit(1)
            await asyncio.sleep(STOP_POLL_S)
        stop_spending(ctx)

    tasks = [asyncio.create_task(watch()), asyncio.create_task(flusher())]
    try:
        await LocalExecutor(preload_after_s=WORKER_PRELOAD_AFTER_S).execute(ctx, units)
    finally:
        for task in tasks:
            task.cancel()
        await ctx.models.aclose()
        outbox.close()
        flush()


# --------------------------------------------------------------------------- the run's process


async def run_in_processes(ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None], workers: int, method: str) -> int:
    """Play disjoint shards of the units in `workers` processes (`method` "fork": forked from the loaded run, else
    spawned: fresh interpreters that load it again); this process alone writes what they send."""
    import multiprocessing

    mp: Any = multiprocessing.get_context(method)
    inbox: Any = mp.Queue()
    stop = mp.Event()
    spec = worker_spec(ctx, ctx.store_path, workers)
    shards = [units[i::workers] for i in range(workers)]
    loaded = (ctx.registry, ctx.data) if method == "fork" else None
    procs = [
        mp.Process(target=run_worker_process, args=(spec, shard, i, inbox, stop, loaded), daemon=True, name=f"bench-worker-{i}")
        for i, shard in enumerate(shards)
    ]
    writer = HoldingWriter(ctx, on_finished)
    relay = Relay(inbox)
    try:
        for proc in procs:
            proc.start()
        relay.start()
        await _drain(relay, writer, procs, stop)
    finally:
        relay.close()
        _end(procs)
    return writer.finished


def _check_gold(writer: HoldingWriter, relay: Relay) -> asyncio.Future[None] | None:
    """Build the run's own copy of its deferred data and check the gold replays on it while the workers play (None:
    nothing deferred); the writer holds what they send until the check passed."""
    checking = preload_run_data(writer.ctx)
    if checking is not None:
        writer.held = []
        checking.add_done_callback(lambda _: relay.messages.put_nowait([]))  # wakes `_drain` (an empty batch)
    return checking


async def _settle(checking: asyncio.Future[None] | None, writer: HoldingWriter, wait: bool = False) -> asyncio.Future[None] | None:
    """Once the gold check is done (waited for with `wait`): store what was held, or raise the check's error, the one
    one process gives (nothing stored); None from then on."""
    if checking is None or not (wait or checking.done()):
        return checking
    await asyncio.wait({checking})  # (a cancelled run leaves the loading thread to end unawaited)
    try:
        checking.result()
    except DeferredDataError as exc:
        raise exc.error from None
    writer.release()
    return None


async def _drain(relay: Relay, writer: HoldingWriter, procs: list[Any], stop: Any) -> None:
    running = set(range(len(procs)))
    checking, started = None, False
    while running:
        messages = await relay.get(timeout=1.0)
        if messages and not started:
            # Once a worker has sent something, its first requests are out: the run's own copy is built from then on,
            # not while the workers start (nor before they fork, so none inherits a half-built copy or its lock).
            checking, started = _check_gold(writer, relay), True
        checking = await _settle(checking, writer)
        if messages is None:
            dead = [i for i in running if not procs[i].is_alive()]
            if dead and not await relay.pending():
                await _settle(checking, writer, wait=True)  # a broken data file fails every worker: its error first
                raise ExecutorError(f"worker process {dead[0]} died (exit code {procs[dead[0]].exitcode}) before it finished")
            continue
        for message in messages:
            if message[0] == "exit":
                _, index, error = message
                if error is not None:
                    await _settle(checking, writer, wait=True)
                    raise ExecutorError(f"worker process {index} failed: {error}")
                running.discard(index)
                continue
            writer.apply(message)
        if writer.exhausted and not stop.is_set():
            stop.set()
    await _settle(checking, writer, wait=True)


class Relay:
    """Hands batches of messages from a multiprocessing queue to the event loop (a thread blocks on the queue, not the loop)."""

    def __init__(self, source: Any) -> None:
        self.source = source
        self.loop = asyncio.get_running_loop()
        self.messages: asyncio.Queue[list[Message]] = asyncio.Queue()
        self.closed = threading.Event()
        self.thread = threading.Thread(target=self._pump, name="bench-relay", daemon=True)

    def start(self) -> None:
        """Start pumping."""
        self.thread.start()

    def _pump(self) -> None:
        while not self.closed.is_set():
            try:
                batch = self.source.get(timeout=0.2)
                with contextlib.suppress(queue.Empty):  # what else has arrived: one wake-up of the loop for all of it
                    while len(batch) < RELAY_BATCH:
                        batch += self.source.get_nowait()
            except queue.Empty:
                continue
            except (EOFError, OSError):
                return
            with contextlib.suppress(RuntimeError):  # the loop closed under an interrupted run
                self.loop.call_soon_threadsafe(self.messages.put_nowait, batch)

    async def get(self, timeout: float) -> list[Message] | None:
        """The next batch of messages, or None after `timeout` seconds without one."""
        # asyncio.timeout, not wait_for: on Python 3.11 wait_for returns the result when a batch arrives in the same
        # loop turn as the run's cancellation (a stop signal), swallowing it, and the run played on to its end.
        try:
            async with asyncio.timeout(timeout):
                return await self.messages.get()
        except TimeoutError:
            return None

    async def pending(self) -> bool:
        """Whether messages may still be on their way (a dead worker's last ones): waits a moment for them."""
        await asyncio.sleep(0.5)
        return not self.messages.empty() or not self.source.empty()

    def close(self) -> None:
        """Stop pumping."""
        self.closed.set()
        self.thread.join(timeout=2)


def _end(procs: list[Any]) -> None:
    for proc in procs:
        if proc.is_alive():
            proc.kill()  # what a worker had in flight is dropped, as in one process
    for proc in procs:
        if proc.pid is not None:
            proc.join(timeout=5)
