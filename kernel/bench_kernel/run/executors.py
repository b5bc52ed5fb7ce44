"""Executors: how a run's conversations are played (here, in worker processes, on a cluster); the run's process alone stores.

An executor plays units somewhere and hands every finished conversation, and every model call as it is made,
back to the run's own process as a message; a `Writer` there applies them to the store. Resume, the cost cap,
signals and the report therefore work as with one process: one process holds the run's lease and writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import queue
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import attrs
import click

from bench_kernel.errors import DeferredDataError
from bench_kernel.logs import get_logger
from bench_kernel.modelhub.hub import ModelHub
from bench_kernel.modelhub.prices import DEFAULT_PRICES
from bench_kernel.plugins import collect, get_plugin_manager, load_profile
from bench_kernel.profiles.profile import Profile
from bench_kernel.registry import Registry
from bench_kernel.run.context import Executor, ExecutorError, RunContext, Unit
from bench_kernel.run.runner import RunConfig, execute, load_domain, preload_run_data, resolve_components, with_component_defaults
from bench_kernel.schema.results import ConversationResult
from bench_kernel.store.store import MetricValue, PluginRows, Store, open_store_for_reading
from bench_kernel.tasks.domain import DomainData

log = get_logger()
EXECUTOR_OPTIONS_META = "bench.executor_options"
"""Where options that executor plugins add to `bench run` leave their values (click context meta)."""
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
"""What a worker sends the writer: ("call", conversation id, arm, ledger entry), ("cache", key, response json),
("done", conversation id, result, metric values, plugin rows) or ("exit", worker index, error or None); worker
processes send them in batches (lists)."""


@attrs.define(kw_only=True)
class LocalExecutor(Executor):
    """This machine: one event loop in the run's process, or `--workers N` processes with one loop each."""

    name: str = "local"
    description: str = "this machine: the run's own process, or --workers N processes streaming results to it"

    async def execute(self, ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None]) -> int:
        """Play in this process, or in worker processes when the run asks for (or `auto` chooses) more than one."""
        workers, _ = self.workers(ctx.config, len(units))
        if workers <= 1:  # (plays_in_this_process says this before the units are known)
            return await execute(ctx, units, on_finished)
        return await run_in_processes(ctx, units, on_finished, workers)

    def plays_in_this_process(self, config: RunConfig) -> bool:
        """True for one worker (or one conversation in flight)."""
        return self.workers(config)[0] <= 1

    def builds_data_after_starting(self, config: RunConfig) -> bool:
        """True: with workers too (each builds its own copy, the run's process one for the gold check: `_check_gold`)."""
        return True

    def workers(self, config: RunConfig, units: int | None = None) -> tuple[int, str]:
        """How many processes play the run, and why (never more for fewer units: plays_in_this_process relies on it)."""
        # More workers than conversations in flight would put more in flight than --concurrency allows.
        in_flight = config.concurrency if units is None else min(config.concurrency, units)
        if config.workers is not None:
            return max(1, min(config.workers, in_flight)), "as configured"
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
        return auto_workers(in_flight, cpus, start_method() == "fork")

    def workers_line(self, config: RunConfig, units: int) -> str | None:
        """The run header's line: how many processes play, started how, and why."""
        count, why = self.workers(config, units)
        started = "forked after loading" if start_method() == "fork" else "spawned"
        return f"  workers: {'this process' if count <= 1 else f'{count} processes ({started})'}, {why}"


PER_WORKER = 256
"""Conversations in flight per process under `--workers auto`: past it, one loop's bursts cost efficiency (docs/decisions.md)."""
START_METHOD_ENV = "BENCH_WORKER_START"
"""`spawn` spawns workers even where they could be forked (on Linux)."""


def auto_workers(in_flight: int, cpus: int, can_fork: bool) -> tuple[int, str]:
    """`--workers auto`: a process per PER_WORKER conversations in flight, one CPU kept for the run's process (the
    writer); one process where workers cannot be forked or the machine has fewer than 3 CPUs."""
    wanted = min(math.ceil(in_flight / PER_WORKER), cpus - 1) if can_fork else 1
    if wanted > 1:
        return wanted, f"auto: {in_flight} conversations in flight, up to {PER_WORKER} per process, {cpus} CPUs (one for the writer)"
    fits = in_flight <= PER_WORKER
    why = f"{in_flight} conversations in flight fit one process" if fits else f"{cpus} CPUs: workers would share them with the writer"
    return 1, "auto: " + ("workers would be spawned, a start-up each" if not can_fork else why)


def start_method() -> str:
    """`fork` on Linux (workers start from the loaded run), else `spawn` (macOS's libraries are not fork-safe)."""
    forced = os.environ.get(START_METHOD_ENV, "").strip().lower()
    return "fork" if forced != "spawn" and sys.platform.startswith("linux") else "spawn"


# --------------------------------------------------------------------------- the writer (the run's process)


@attrs.define
class Writer:
    """The run's single writer: applies what workers send to the store, counts spend and finished conversations."""

    ctx: RunContext
    on_finished: Callable[[ConversationResult], None] | None = None
    finished: int = 0
    held: list[Message] | None = None
    """Messages kept back until `release` (None: each is stored as it comes)."""

    def apply(self, message: Message) -> None:
        """Store one message from a worker, or hold it back (exit messages are the executor's business)."""
        if message[0] == "call":  # spend counts at once: the cost cap stops the workers even while results are held
            self.ctx.models.spent += message[3].cost or 0.0
        if self.held is not None:
            self.held.append(message)
        else:
            self._store(message)

    def release(self) -> None:
        """Store what was held back, in the order it came, and every later message as it comes."""
        held, self.held = self.held or [], None
        for message in held:
            self._store(message)

    def _store(self, message: Message) -> None:
        kind = message[0]
        if kind == "call":
            _, conversation_id, arm, entry = message
            self.ctx.store.record_llm_call(self.ctx.run_id, conversation_id, arm, entry)
        elif kind == "cache":
            self.ctx.store.cache_put(message[1], message[2])
        elif kind == "done":
            _, _, result, metrics, rows = message
            self.ctx.store.save_conversation(result, metrics, plugin_rows=rows)
            self.finished += 1
            if self.on_finished is not None:
                self.on_finished(result)

    @property
    def exhausted(self) -> bool:
        """True once the run's model spend (every worker's) reached the cost cap."""
        return self.ctx.models.exhausted


# --------------------------------------------------------------------------- the worker side


@attrs.frozen(kw_only=True)
class WorkerSpec:
    """What a worker (process or actor) needs to rebuild a run's context: picklable, no open resources."""

    config: RunConfig
    """The run's configuration with this worker's share of the in-flight limits."""
    run_id: str
    store_path: str
    """The results database, read only (the model cache) by workers."""
    spent: float
    plugins: list[str] | None
    profile: Profile | None = None
    """The run's profile as the driver read it (shipped, so a worker never reads another version of its files)."""


def worker_spec(ctx: RunContext, store_path: str, workers: int) -> WorkerSpec:
    """The spec of one of `workers` workers: conversations and every endpoint's requests in flight split between them."""
    config = ctx.config
    models = {
        role: attrs.evolve(m, max_concurrency=_share(m.max_concurrency, workers)) if isinstance(m.max_concurrency, int) else m
        for role, m in config.models.items()
    }
    in_flight = None if config.max_in_flight is None else _share(config.max_in_flight, workers)
    shared = attrs.evolve(config, concurrency=_share(config.concurrency, workers), models=models, max_in_flight=in_flight)
    return WorkerSpec(
        config=shared, run_id=ctx.run_id, store_path=os.path.abspath(store_path), spent=ctx.models.spent, plugins=ctx.plugins, profile=ctx.profile
    )


def _share(total: int, workers: int) -> int:
    return max(1, math.ceil(total / workers))


class Outbox:
    """Stands in for the store in a worker: what would be written is sent to the writer instead; cache reads are local."""

    def __init__(self, send: Callable[[Message], None], store_path: str | None, cache: bool) -> None:
        self.send = send
        self.cache_path = store_path if cache else None
        self.reader: Store | None = None
        """Opened at the first cache read: a run that never reads the cache (no --cache, no speech) opens nothing."""

    def record_llm_call(self, run_id: str, conversation_id: str | None, arm: str, call: Any) -> None:
        """Send a model call to the writer as soon as it is made."""
        self.send(("call", conversation_id, arm, call))

    def save_conversation(self, result: ConversationResult, metrics: Iterable[MetricValue], plugin_rows: Sequence[PluginRows] = ()) -> None:
        """Send a finished conversation to the writer."""
        self.send(("done", result.conversation_id, result, list(metrics), list(plugin_rows)))

    def cache_get(self, key: str) -> str | None:
        """A cached response (or speech) from the results database (read only)."""
        if self.cache_path is None:
            return None
        if self.reader is None:
            self.reader = open_store_for_reading(self.cache_path)
        return self.reader.cache_get(key)

    def cache_put(self, key: str, response_json: str) -> None:
        """Send a response to cache to the writer."""
        self.send(("cache", key, response_json))

    def close(self) -> None:
        """Close the cache reader."""
        if self.reader is not None:
            self.reader.close()


def worker_context(
    spec: WorkerSpec, tasks: Sequence[Any], outbox: Outbox, data: DomainData | None = None, registry: Registry | None = None
) -> RunContext:
    """A worker's own copy of the run's context, from installed plugins (or the run's registry and domain data when given)."""
    registry = registry or collect(get_plugin_manager(spec.plugins))
    config = spec.config
    data = data if data is not None else load_domain(registry, config)
    config = with_component_defaults(config, registry.get("channel", config.channel), registry.get("agent", config.agent))
    parts = resolve_components(registry, config, data, list(tasks))
    store = cast(Store, outbox)  # the outbox has the store methods a conversation uses
    profile = spec.profile or load_profile(config.profile)
    models = ModelHub(
        configs=profile.with_sampling(config.models),
        backends=registry.components.get("model", {}),
        store=store,
        use_cache=config.cache,
        max_cost=config.max_cost,
        prices={**DEFAULT_PRICES, **config.prices},
        spent=spec.spent,
        concurrency=config.concurrency,
        max_in_flight=config.max_in_flight,
        speech_cache=config.speech_cache,
    )
    return RunContext(
        run_id=spec.run_id,
        config=config,
        data=data,
        agent=parts.agent,
        user=parts.user,
        baseline_agent=parts.baseline_agent,
        baseline_user=parts.baseline_user,
        judge=parts.judge,
        metrics=parts.metrics,
        registry=registry,
        store=store,
        models=models,
        channel=parts.channel,
        evaluation=parts.evaluation,
        profile=profile,
    )


def stop_spending(ctx: RunContext) -> None:
    """The run's cost cap was reached elsewhere: this worker's next model calls are refused, as in one process."""
    if ctx.models.max_cost is not None:
        ctx.models.spent = max(ctx.models.spent, ctx.models.max_cost)


# --------------------------------------------------------------------------- worker processes


def run_worker_process(spec: WorkerSpec, units: list[Unit], index: int, outbox: Any, stop: Any, loaded: Any = None) -> None:
    """A worker process's body: play a shard of the units, send everything to the parent (`loaded`: forked, its data)."""
    # Ctrl-C reaches the whole process group: the parent decides, and ends its workers itself. A forked worker
    # inherits the parent loop's handlers, whose wake-up descriptor would hand its signals to the parent's loop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.set_wakeup_fd(-1)
    from bench_kernel.logs import configure_logging

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
        await execute(ctx, units, preload_after_s=WORKER_PRELOAD_AFTER_S)
    finally:
        for task in tasks:
            task.cancel()
        await ctx.models.aclose()
        outbox.close()
        flush()


async def run_in_processes(ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None], workers: int) -> int:
    """Play disjoint shards of the units in `workers` processes (forked from the loaded run where the platform can, else
    spawned: fresh interpreters that load it again); this process alone writes what they send."""
    import multiprocessing

    method = start_method()
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
    writer = Writer(ctx, on_finished)
    relay = _Relay(inbox)
    try:
        for proc in procs:
            proc.start()
        relay.start()
        await _drain(relay, writer, procs, stop)
    finally:
        relay.close()
        _end(procs)
    return writer.finished


def _check_gold(writer: Writer, relay: _Relay) -> asyncio.Future[None] | None:
    """Build the run's own copy of its deferred data and check the gold replays on it while the workers play (None:
    nothing deferred); the writer holds what they send until the check passed."""
    checking = preload_run_data(writer.ctx)
    if checking is not None:
        writer.held = []
        checking.add_done_callback(lambda _: relay.messages.put_nowait([]))  # wakes `_drain` (an empty batch)
    return checking


async def _settle(checking: asyncio.Future[None] | None, writer: Writer, wait: bool = False) -> asyncio.Future[None] | None:
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


async def _drain(relay: _Relay, writer: Writer, procs: list[Any], stop: Any) -> None:
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


class _Relay:
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


# --------------------------------------------------------------------------- options


def executor_option(command: click.Command, flag: str, key: str, help_text: str, envvar: str | None = None) -> None:
    """Add an option to `bench run` that sets one executor option (e.g. bench-ray's --ray-address -> address)."""
    if any(flag in p.opts for p in command.params):
        return

    def remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
        if value is not None:
            ctx.meta.setdefault(EXECUTOR_OPTIONS_META, {})[key] = value
        return value

    command.params.append(click.Option([flag], envvar=envvar, expose_value=False, callback=remember, help=help_text))


def option_values(meta: Mapping[str, Any]) -> dict[str, Any]:
    """The executor options that plugin-added options left in a click context's meta."""
    return dict(meta.get(EXECUTOR_OPTIONS_META, {}))
