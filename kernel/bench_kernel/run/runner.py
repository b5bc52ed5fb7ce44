"""Runs a configured suite: plans (task, trial) units, runs them concurrently, stores each as it ends."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import signal
import sqlite3
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from bench_kernel.errors import BenchError, ConfigError, DeferredDataError, UnusableSessionError
from bench_kernel.evaluation.evaluator import Replayed
from bench_kernel.evaluation.sections import GOLD_FAILURES_EVENT
from bench_kernel.logs import bind_context, get_logger
from bench_kernel.modelhub.hub import ModelHub
from bench_kernel.modelhub.prices import DEFAULT_PRICES
from bench_kernel.plugins import PluginSet, collect, get_plugin_manager, load_profile, with_backend_plugins
from bench_kernel.profiles.profile import Profile
from bench_kernel.registry import Registry
from bench_kernel.run.config import RunConfig
from bench_kernel.run.context import RunContext, Unit, run_executor
from bench_kernel.run.methodology import METHODOLOGY_EVENT, profile_methodology
from bench_kernel.run.planning import (
    agent_fingerprint,
    checked_gold,
    code_fingerprints,
    fingerprint_owners,
    load_domain,
    plan_stored,
    profile_fits,
    record_code_changes,
    resolve_components,
    select_tasks,
    with_loop_settings,
)
from bench_kernel.run.playing import run_unit
from bench_kernel.run.scoring import metric_failure
from bench_kernel.run.transforms import content_settings, finish_transforms, prepared_tasks, refuse_unowned_settings, transformed_tasks
from bench_kernel.schema.messages import TerminationReason
from bench_kernel.schema.results import ConversationResult
from bench_kernel.serialization import shorten, unstructure
from bench_kernel.store.lease import HEARTBEAT_S
from bench_kernel.store.store import GROUP_COMMIT_S, Store, open_store

if TYPE_CHECKING:
    from bench_kernel.run.context import Executor
    from bench_kernel.schema.tasks import Task
    from bench_kernel.tasks.domain import DomainData


log = get_logger()
YOUNG_COLLECTION_THRESHOLD = 100_000
"""Allocations (net of frees) between young collections while conversations run (Python's default is 700)."""


@attrs.frozen(kw_only=True)
class RunSummary:
    """How a run (or a resumed part of it) went."""

    run_id: str
    resumed: bool
    planned: int
    skipped: int
    finished: int
    status: str
    wall_s: float
    infrastructure_errors: int = 0
    """Conversations of the run stored as infrastructure errors (excluded from scores, re-run on resume)."""
    signal: int | None = None
    """The signal (SIGINT, SIGTERM) that interrupted the run, if one did."""
    all_failed: str | None = None
    """Why the run measured nothing (`participant_failure`, `metric_failure`), if it did not."""


class RunInterrupted(BenchError):
    """A signal arrived before the run began: nothing was stored."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name} before the run began; nothing was stored")
        self.signum = signum


async def prepare(config: RunConfig, store_path: Path | str, plugins: PluginSet | None = None) -> tuple[RunContext, list[Unit], int, bool]:
    """Load plugins, domain and tasks, check model credentials, open the store, begin or resume the run, plan it."""
    plugins = plugins or get_plugin_manager(with_backend_plugins(config.plugins, config.implied_plugins()))
    registry = collect(plugins)
    refuse_unowned_settings(registry, config)
    data = load_domain(registry, config)
    if data.retrieval is not None and config.retrieval != data.retrieval:
        config = attrs.evolve(config, retrieval=data.retrieval)  # the variant in effect is part of the run's identity
    tasks = transformed_tasks(data, select_tasks(data, config), config, registry)
    # e.g. bench-trust's --exclude-flagged (docs/audit.md), before anything is stored
    tasks, config, transform_events = await prepared_tasks(data, tasks, config, registry, str(store_path))
    parts = resolve_components(registry, with_loop_settings(config, registry, tasks), data, tasks)
    config = parts.config
    fingerprint = agent_fingerprint(parts.agent, config.agent_options, registry.origin("agent", config.agent))
    fingerprints = code_fingerprints(registry, parts)
    executor = run_executor(registry, config.executor)
    executor.check(config)
    profile = load_profile(config.profile)
    profile_fits(profile, data, tasks, config.mode)
    judged = any(t.evaluation_criteria is not None and t.evaluation_criteria.nl_assertions_to_judge() for t in tasks)
    methodology = await profile_methodology(parts.agent, parts.user, config, profile, parts.judge if judged else None)
    domain_plugin = registry.origin("domain", data.name)
    replays: dict[str, Replayed] = {}  # the gold check's replays, which the tasks' first scores reuse
    later = _gold_check_after_loading(data, tasks, config, executor, domain_plugin, replays)
    failures = [] if later is not None else checked_gold(data, tasks, config, domain_plugin, replays)
    models = run_models(config, profile, registry)
    for limit in models.throttled():
        log.warning(
            "model.in_flight_below_concurrency",
            endpoint=limit.endpoint,
            roles=limit.roles,
            max_in_flight=limit.limit,
            concurrency=config.concurrency,
            source=limit.source,
        )
    async with contextlib.AsyncExitStack() as undo:  # what a failure before the run is planned closes again
        undo.push_async_callback(models.aclose)
        await models.check()
        store = open_store(store_path, registry.migrations)
        undo.callback(store.close)
        models.store = store
        task_sets = {data.name: data.content_hash()}
        config_hash = config.config_hash(task_sets, profile, fingerprint, fingerprints, by_content=content_settings(registry))
        run_id = config.run_id or f"{data.name}-{config.agent}-{config_hash[:8]}"
        loaded = [unstructure(p) for p in plugins.plugins if p.error is None]
        if config.retry_attributed and store.run(run_id, missing_ok=True) is None:
            raise ConfigError(
                f"--retry-attributed retries a stored run, and these options name none (run {run_id} is not in "
                f"{store_path}): give the run's own options, or --run-id (`bench runs` lists them)"
            )
        recorded = config.recorded_identity(profile, fingerprint, fingerprints)
        new = store.begin_run(run_id, recorded, config_hash, loaded, task_sets, config.seed)
        undo.callback(store.set_status, run_id, "interrupted")  # gives the lease back
        models.spent = store.run_spend(run_id)  # the cost cap covers every resume of the run
        if failures:  # what the report lists: tasks whose rewards are not meaningful, or scored as the reference does
            store.add_event(run_id, GOLD_FAILURES_EVENT, {"tasks": failures})
        store.add_event(run_id, METHODOLOGY_EVENT, methodology)
        if new:  # a run new only because a component's code changed says since which run (docs/plugins.md)
            record_code_changes(store, run_id, recorded, task_sets, fingerprint_owners(registry))
        for kind, payload in transform_events.items():  # e.g. what --exclude-flagged left out (docs/audit.md)
            store.add_event(run_id, kind, payload)
        ctx = RunContext(
            **attrs.asdict(parts, recurse=False),
            run_id=run_id,
            data=data,
            registry=registry,
            store=store,
            models=models,
            executor=executor,
            store_path=str(store_path),
            # the `--plugin` names a worker loads again (built-ins always load)
            plugins=[p.name for p in plugins.plugins if not p.builtin and p.error is None],
            profile=profile,
            later_gold_failures=later,
            replays=replays,
            tasks=list(tasks),
        )
        units, skipped = plan_stored(store, run_id, tasks, config)
        undo.pop_all()  # the run owns them now
    return ctx, units, skipped, not new


def run_models(config: RunConfig, profile: Profile, registry: Registry, **extra: Any) -> ModelHub:
    """The run's model hub (`extra`: a worker's store and spend)."""
    return ModelHub(
        configs=profile.with_sampling(config.models),
        backends=registry.components.get("model", {}),
        use_cache=config.cache,
        max_cost=config.max_cost,
        prices={**DEFAULT_PRICES, **config.prices},
        concurrency=config.concurrency,
        max_in_flight=config.max_in_flight,
        speech_cache=config.speech_cache,
        **extra,
    )


def _gold_check_after_loading(
    data: DomainData, tasks: Sequence[Task], config: RunConfig, executor: Executor, plugin: str | None, replays: dict[str, Replayed]
) -> list[dict[str, Any]] | None:
    """The list the gold check fills once deferred data is loaded (None: nothing deferred, or it was loaded now)."""
    # A refused task set then stops the run before any conversation is stored, as it would have before it began.
    pending = data.pending_loads()
    if not pending:
        return None
    if not executor.builds_data_after_starting(config):
        # E.g. a cluster's workers, which load their own copy: this process loads it now and checks as usual.
        for source in pending:
            source.load()
        return None
    found: list[dict[str, Any]] = []
    # After the last loader: the replays may read every deferred table.
    pending[-1].add_check(lambda: found.extend(checked_gold(data, tasks, config, plugin, replays)))
    return found


async def execute(
    ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None] | None = None, preload_after_s: float | None = None
) -> int:
    """Run units with at most config.concurrency in flight; return how many finished (`preload_after_s`: see `preload`)."""
    queue: Iterator[Unit] = iter(units)
    finished = 0

    async def worker() -> None:
        nonlocal finished
        for unit in queue:
            if ctx.models.exhausted:
                return
            result = await run_unit(ctx, unit)
            finished += 1
            if on_finished is not None:
                on_finished(result)
            # A conversation that never waits (offline participants) would otherwise hold the loop for the whole
            # run: yielding once per conversation lets signals and the heartbeat in.
            await asyncio.sleep(0)

    tasks = [asyncio.ensure_future(worker()) for _ in range(max(1, min(ctx.config.concurrency, len(units))))]
    loading = preload_run_data(ctx, preload_after_s) if units else None
    try:
        async with _collector_for_conversations():
            await asyncio.gather(*tasks, *([loading] if loading is not None else []))
    except (DeferredDataError, UnusableSessionError) as exc:  # no conversation met it as its own error: none is stored
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise (exc.error if isinstance(exc, DeferredDataError) else exc) from None
    return finished


PRELOAD_AFTER_S = 0.005
"""How long a run's first conversations have to send their first requests before deferred data is built (at the earliest)."""
QUIET_LATE_S = 0.002
"""A timer this late or less finds the loop quiet: it waits for replies, with nothing to run (epoll wakes to the ms)."""
QUIET_AT_LATEST_S = 0.5
"""A loop that never waits (offline participants) gets its deferred data built from then on all the same."""


def preload_run_data(ctx: RunContext, after_s: float | None = None) -> asyncio.Future[None] | None:
    """`preload` the run's deferred data; once built (and its gold replays checked), record what the check found."""

    def record() -> None:
        if ctx.later_gold_failures:
            ctx.store.add_event(ctx.run_id, GOLD_FAILURES_EVENT, {"tasks": ctx.later_gold_failures})

    return preload(ctx.data, on_loaded=record, after_s=after_s)


def preload(data: DomainData, on_loaded: Callable[[], None] | None = None, after_s: float | None = None) -> asyncio.Future[None] | None:
    """Build a domain's deferred tables in a thread `after_s` from now (None if nothing is deferred); fails as the loader does."""
    # Meanwhile the conversations wait for their first replies; one that needs a record sooner builds it itself (the
    # loader runs once, behind a lock).
    pending = data.pending_loads()
    if not pending:
        return None
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()

    def settle(error: DeferredDataError | None) -> None:
        if done.done():
            return
        if error is not None:
            done.set_exception(error)
            return
        try:
            if on_loaded is not None:
                on_loaded()
        except Exception as exc:  # noqa: BLE001 - (a store that cannot record the event) fails the run, never hangs it
            done.set_exception(exc)
            return
        if gc.get_freeze_count():  # the run froze what set-up built out of every collection: these records too
            gc.freeze()
        done.set_result(None)

    def build() -> None:
        error = None
        try:
            for source in pending:
                source.load()
            # The shared records' digests, where every state hash starts: here rather than in the loop at a first score
            # (what fails here fails again where a score needs it, and is named there).
            with contextlib.suppress(Exception):
                for state in (data.agent_state, data.user_state):
                    if state is not None:
                        state.content_hash()
        except DeferredDataError as exc:
            error = exc
        with contextlib.suppress(RuntimeError):  # the loop is closed: the run ended (a signal) before the data was built
            loop.call_soon_threadsafe(settle, error)

    start = threading.Thread(target=build, name="bench-preload", daemon=True).start
    # Not while the loop sets up the first conversations: a thread holding the GIL then gets it back at every socket call
    # the loop makes, for a switch interval each (the first requests of a 256-conversation run went out 0.3 s late).
    call_when_quiet(loop, start, PRELOAD_AFTER_S if after_s is None else after_s)
    return done


def call_when_quiet(loop: asyncio.AbstractEventLoop, callback: Callable[[], None], after_s: float) -> None:
    """Call `callback` once the loop runs a timer on time, `after_s` from now at the earliest (QUIET_AT_LATEST_S at the latest)."""
    # An on-time timer means the loop had nothing else to run: what the callback starts delays no conversation's step.
    latest = loop.time() + QUIET_AT_LATEST_S

    def probe(due: float) -> None:
        now = loop.time()
        if now - due <= QUIET_LATE_S or now >= latest:
            callback()
        else:
            loop.call_at(now + QUIET_LATE_S, probe, now + QUIET_LATE_S)

    due = loop.time() + after_s
    loop.call_at(due, probe, due)


def run(config: RunConfig, store_path: Path | str, **options: Any) -> RunSummary:
    """Run (or resume) a suite and store every conversation as it ends (`run_async`'s keyword options)."""
    return asyncio.run(run_async(config, store_path, **options))


async def run_async(
    config: RunConfig,
    store_path: Path | str,
    *,
    plugins: PluginSet | None = None,
    on_start: Callable[[RunContext, int, int], None] | None = None,
    on_finished: Callable[[ConversationResult], None] | None = None,
    handle_signals: bool = False,
) -> RunSummary:
    """`run`, inside a running event loop; with handle_signals, SIGINT and SIGTERM stop the run cleanly (docs/store.md)."""
    # Model clients live on the loop that created them.
    started = time.perf_counter()
    with _cancel_on_signals(handle_signals) as interrupts:
        try:
            ctx, units, skipped, resumed = await prepare(config, store_path, plugins)
        except DeferredDataError as exc:  # a domain's deferred data, loaded early (e.g. for worker processes)
            raise exc.error from None
        except asyncio.CancelledError:
            if (signum := interrupts.uncancel()) is None:
                raise
            raise RunInterrupted(signum) from None
        bind_context(run_id=ctx.run_id)
        finished, status, counts, failed = await _run_prepared(ctx, units, skipped, resumed, on_start, on_finished, interrupts)
    return RunSummary(
        run_id=ctx.run_id,
        resumed=resumed,
        planned=len(units) + skipped,
        skipped=skipped,
        finished=finished,
        status=status,
        wall_s=time.perf_counter() - started,
        infrastructure_errors=counts["infrastructure_errors"],
        signal=interrupts.signum,
        all_failed=failed,
    )


async def _run_prepared(
    ctx: RunContext,
    units: list[Unit],
    skipped: int,
    resumed: bool,
    on_start: Callable[[RunContext, int, int], None] | None,
    on_finished: Callable[[ConversationResult], None] | None,
    interrupts: _Interrupts,
) -> tuple[int, str, dict[str, int], str | None]:
    """Execute a begun run, record how it ended and give back its lease, whatever happens."""
    finished = 0

    def counted(result: ConversationResult) -> None:
        nonlocal finished
        finished += 1
        if on_finished is not None:
            on_finished(result)

    beat = asyncio.create_task(_heartbeat(ctx.store, ctx.run_id))
    try:
        if on_start is not None:
            on_start(ctx, len(units), skipped)
        # A resume lets each component score stored conversations again (bench-judging: those whose judge failed).
        rescored = [await c.resume(ctx) for c in ctx.evaluation.components.values()] if resumed else []
        in_flight = [unstructure(limit) for limit in ctx.models.in_flight_limits()]  # the effective limits, kept with the run
        started = {"to_run": len(units), "stored": skipped, "concurrency": ctx.config.concurrency, "in_flight": in_flight}
        ctx.store.add_event(ctx.run_id, "run.resumed" if resumed else "run.started", started | {k: v for done in rescored for k, v in done.items()})
        stopped_early = False
        ctx.store.window_s = GROUP_COMMIT_S
        try:
            stopped_early = await _execute_with_deadline(ctx, units, counted)
        except asyncio.CancelledError:
            if interrupts.uncancel() is None:
                raise
        interrupts.armed = False  # from here on the run ends by itself: what it stored is recorded whatever comes
        ctx.store.flush()  # the last commit window's writes: a failed commit stops the run here, before a handler hides it
        if interrupts.signum is None and not stopped_early:  # e.g. bench-trust's static audit flags (docs/audit.md)
            finish_transforms(ctx)
        counts = ctx.store.unit_counts(ctx.run_id)
        failed = participant_failure(ctx) or metric_failure(ctx.store, ctx.run_id, ctx.metrics)
        signum = interrupts.signum
        status = "interrupted" if signum else run_status(counts, planned=len(units) + skipped, stopped_early=stopped_early)
        ctx.store.set_status(ctx.run_id, status)
        ctx.store.add_event(
            ctx.run_id, f"run.{status}", {"finished": finished, **counts, **({"signal": signal.Signals(signum).name} if signum else {})}
        )
    except BaseException:
        with contextlib.suppress(Exception):  # the original failure matters more than this bookkeeping
            ctx.store.set_status(ctx.run_id, "interrupted")
        raise
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
        ctx.store.close()
    return finished, status, counts, failed


def participant_failure(ctx: RunContext) -> str | None:
    """Why the run measured nothing when every evaluated conversation (infrastructure errors aside) ended in one party's error."""
    endings = ctx.store.evaluated_endings(ctx.run_id)
    endings.pop(TerminationReason.INFRASTRUCTURE_ERROR.value, None)
    parties = {
        TerminationReason.AGENT_ERROR.value: f"agent {ctx.agent.name!r}",
        TerminationReason.USER_ERROR.value: f"user simulator {ctx.user.name if ctx.user else None!r}",
    }
    if len(endings) != 1 or next(iter(endings)) not in parties:
        return None
    [(reason, (count, error))] = endings.items()
    return (
        f"every one of the {count} conversations of run {ctx.run_id} ended in an error of the {parties[reason]} "
        f"({reason}), so the run measured nothing; one of the errors: {shorten(error or 'none stored', 300)}"
    )


async def _heartbeat(store: Store, run_id: str) -> None:
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        try:
            store.heartbeat(run_id)
        except sqlite3.Error as exc:  # a missed beat is retried; only a long silence gives the run away
            log.warning("run.heartbeat_failed", error=repr(exc))


@attrs.define
class _Interrupts:
    """SIGINT and SIGTERM while installed: the first one is recorded and, while armed, cancels the run's task."""

    task: asyncio.Task[Any] | None = None
    armed: bool = True
    signum: int | None = None
    """The signal that cancelled the task (None if none did)."""
    installed: list[int] = attrs.field(factory=list)

    def handle(self, signum: int) -> None:
        """Stop the run on the first signal; a second one acts as usual (the handlers are gone)."""
        self.uninstall()
        if self.armed and self.task is not None:
            self.signum = signum
            self.task.cancel()

    def uncancel(self) -> int | None:
        """The signal that cancelled the task, if one did: the task then goes on (uncancelled) to end the run cleanly."""
        if self.signum is not None and self.task is not None:
            self.task.uncancel()
        return self.signum

    def uninstall(self) -> None:
        """Give the signals back to their default handlers."""
        loop = asyncio.get_running_loop()
        while self.installed:
            loop.remove_signal_handler(self.installed.pop())


@contextlib.contextmanager
def _cancel_on_signals(enabled: bool) -> Iterator[_Interrupts]:
    interrupts = _Interrupts(task=asyncio.current_task(), armed=enabled)
    if enabled:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, interrupts.handle, sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
                continue
            interrupts.installed.append(sig)
    try:
        yield interrupts
    finally:
        interrupts.uninstall()


def run_status(counts: dict[str, int], *, planned: int, stopped_early: bool) -> str:
    """complete when every planned unit finished, failed when every one was an infrastructure error, else incomplete."""
    infra, stored = counts["infrastructure_errors"], counts["stored"]
    if stored and infra == stored and not stopped_early:
        return "failed"
    return "incomplete" if stopped_early or infra or stored < planned else "complete"


async def _execute_with_deadline(ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None]) -> bool:
    """Execute the units; True when the deadline or the cost cap stopped them early."""
    try:
        async with asyncio.timeout(ctx.config.run_timeout_s):
            await (ctx.executor.execute(ctx, units, on_finished) if ctx.executor else execute(ctx, units, on_finished))
    except TimeoutError:
        log.warning("run.timeout", planned=len(units))
        return True
    finally:
        await ctx.models.aclose()
    if ctx.models.exhausted:
        log.warning("run.budget_reached", spent=ctx.models.spent)
        return True
    return False


@contextlib.asynccontextmanager
async def _collector_for_conversations() -> AsyncIterator[None]:
    """Cyclic GC tuned for many conversations in flight, as it was afterwards."""
    # What set-up built is frozen out of every collection. Python collects young objects when allocations outnumber frees
    # by its threshold; conversations free about as much as they allocate, so young objects pile up between passes and
    # each pass stops every conversation in flight (10-40 ms over 15-35k objects at a threshold of 7,000). Nearly all of
    # their garbage goes by reference counting: a pass every 100,000 net allocations is rare, and bounds the cyclic rest.
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], YOUNG_COLLECTION_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()
