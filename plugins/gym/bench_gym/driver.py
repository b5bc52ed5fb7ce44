"""The driver: a bench run whose conversations are played as a policy asks for them, on bench's event loop.

`bench_kernel.run_async` prepares the run as `bench run` does (plugins, domain, tasks, gold replays, models,
profile, results database, the run's lease) and hands its conversations to this plugin's executor, which serves
episodes until the environment closes; then the run ends as any run does (status, events, store closed). The
loop runs in a thread of its own, so `reset` and `step` are plain calls that work in a notebook too; each waits
until every episode it moved waits for the policy again or has ended, while the other parties' model calls of
all those episodes overlap on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import threading
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from typing import Any, TypeVar, cast

import attrs

from bench_kernel import (
    BenchError,
    BudgetExceededError,
    ConfigError,
    ConversationResult,
    MetricValue,
    PluginSet,
    RunContext,
    RunSummary,
    Store,
    Task,
    Unit,
    get_plugin_manager,
    run_async,
    run_unit,
)

from .config import GymConfig
from .episode import CURRENT, Episode
from .observations import Outcome, ending, opening, turn
from .participants import EnvironmentParts

T = TypeVar("T")
MAX_TRIAL = 2**63 - 1
"""Trials are stored as SQLite integers."""
PLUGIN = "gym"


class EpisodeOver(BenchError):
    """A step without an episode to act in: before the first reset, or after the end was reported."""


@attrs.frozen
class Reset:
    """Start an episode in a slot: this task, this trial (the next unplayed one when None)."""

    task_id: str
    trial: int | None = None


@attrs.frozen
class Act:
    """The policy's action in a slot's episode."""

    action: Any


Order = Reset | Act


class Driver:
    """One bench run with `slots` episodes in play at a time (one per environment of a vector)."""

    def __init__(self, config: GymConfig, slots: int = 1) -> None:
        self.config = config
        self.slots: list[Episode | None] = [None] * slots
        self.ctx: RunContext | None = None
        self.tasks: dict[str, Task] = {}
        self.summary: RunSummary | None = None
        self.finished = 0
        self._trials: dict[str, int] = {}
        self._playing: set[tuple[str, int]] = set()
        """(task, trial) of the episodes in play: a trial is played by one environment at a time."""
        self._pending: set[Episode] = set()
        self._barrier: asyncio.Future[None] | None = None
        self._closed = False
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="bench-gym", daemon=True)
        self._thread.start()
        try:
            self._call(self._begin())
        except BaseException:
            self._stop_loop()
            raise

    # ------------------------------------------------------------------ the caller's side (any thread but the loop's)

    @property
    def run_id(self) -> str:
        """The run the episodes belong to."""
        assert self.ctx is not None
        return self.ctx.run_id

    def advance(self, orders: Mapping[int, Order]) -> dict[int, Outcome]:
        """Reset or act in each named slot; return each one's outcome once all of them wait for the policy or ended."""
        if self._closed:
            raise EpisodeOver("the environment is closed")
        for order in orders.values():
            if isinstance(order, Act) and not isinstance(order.action, str | Mapping):
                raise TypeError(f"an action is an assistant message (a dict or its JSON text) or plain text, not {type(order.action).__name__}")
        return self._call(self._advance(orders))

    def over(self, slot: int) -> bool:
        """True when the slot's conversation has ended (its end may not be reported yet)."""
        episode = self.slots[slot]
        return episode is not None and episode.over

    def close(self) -> RunSummary | None:
        """Drop the episodes in play (nothing of them is stored), end the run and stop the loop; the run's summary."""
        if self._closed:
            return self.summary
        self._closed = True
        try:
            self.summary = self._call(self._finish())
        finally:
            self._stop_loop()
        return self.summary

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # Ctrl-C while waiting: the loop stops waiting too (the episodes stay as they are)
            raise

    def _stop_loop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()

    # ------------------------------------------------------------------ the loop's side

    async def _begin(self) -> None:
        """Start the run; return once its executor serves episodes (or raise what refused the run)."""
        self._ready: asyncio.Future[None] = self.loop.create_future()
        self._closing = asyncio.Event()
        config = self.config.run_config(len(self.slots))
        self._run = asyncio.create_task(run_async(config, self.config.db or ":memory:", plugins=self._plugins(config.plugins)))
        await asyncio.wait([self._ready, cast("asyncio.Future[Any]", self._run)], return_when=asyncio.FIRST_COMPLETED)
        if not self._ready.done():
            self._run.result()  # raises what ended the run
            raise BenchError("the run ended before the environment could play an episode")

    def _plugins(self, selected: list[str] | None) -> PluginSet:
        parts = EnvironmentParts(driver=self, side=self.config.side, policy_name=self.config.policy_name, person=self.config.person)
        plugins = get_plugin_manager(selected, extra=[(PLUGIN, parts)])
        failed = [p for p in plugins.failures() if p.name in (*(selected or ()), PLUGIN)]
        if failed:
            raise ConfigError("; ".join(f"plugin {p.name!r} failed: {p.error}" for p in failed))
        plugins.plugins = [attrs.evolve(p, distribution="bench-gym", version=_version()) if p.name == PLUGIN else p for p in plugins.plugins]
        return plugins

    async def serve(self, ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None]) -> int:
        """The executor's body: episodes as the policy asks for them (and the baseline units) until the driver closes."""
        self.ctx, self._on_finished = ctx, on_finished
        wanted = set(ctx.config.task_ids or ())
        self.tasks = {t.id: t for t in ctx.data.tasks if not wanted or t.id in wanted}
        for arm, task_id, trial in ctx.store.finished_units(ctx.run_id):
            if arm == "agent":
                self._trials[task_id] = max(self._trials.get(task_id, 0), trial + 1)
        kept = ctx.store
        if self.config.db is None:
            ctx.store, ctx.models.store = cast(Store, _Discard()), None
        baseline = [asyncio.create_task(self._play(u)) for u in units if u.arm == "baseline"]
        self._ready.set_result(None)
        try:
            await self._closing.wait()
        finally:
            await self._drop_episodes()
            await asyncio.gather(*baseline, return_exceptions=True)
            ctx.store = kept
        return self.finished

    async def _play(self, unit: Unit) -> ConversationResult:
        result = await run_unit(self._context(), unit)
        self.finished += 1
        self._on_finished(result)
        return result

    def _context(self) -> RunContext:
        assert self.ctx is not None
        return self.ctx

    async def _finish(self) -> RunSummary:
        self._closing.set()
        return await self._run

    async def _drop_episodes(self) -> None:
        runners = [ep.runner for ep in self.slots if ep is not None and ep.runner is not None and not ep.runner.done()]
        for runner in runners:
            runner.cancel()
        await asyncio.gather(*runners, return_exceptions=True)

    async def _advance(self, orders: Mapping[int, Order]) -> dict[int, Outcome]:
        self._check(orders)
        for slot, order in orders.items():
            episode = self._start(slot, order) if isinstance(order, Reset) else self._act(slot, order)
            if not episode.over:
                self._pending.add(episode)
        if self._pending:
            self._barrier = self.loop.create_future()
            await self._barrier
        return {slot: self._outcome(slot, order) for slot, order in orders.items()}

    def _check(self, orders: Mapping[int, Order]) -> None:
        """Refuse a batch, before any of it happens, that names an unknown task, a trial in play or a finished episode."""
        resets = {slot: order for slot, order in orders.items() if isinstance(order, Reset)}
        if resets and self._context().models.exhausted:
            raise BudgetExceededError(f"the run's cost cap of {self.config.max_cost} USD is reached: no episode can start")
        named = [(order.task_id, order.trial) for order in resets.values() if order.trial is not None]
        kept = {(ep.task.id, ep.trial) for slot, ep in enumerate(self.slots) if named and ep is not None and not ep.over and slot not in resets}
        for slot, order in orders.items():
            if isinstance(order, Reset):
                self._check_reset(order, kept, named)
            else:
                self._check_act(slot)

    def _check_reset(self, order: Reset, kept: set[tuple[str, int]], named: Sequence[tuple[str, int | None]]) -> None:
        if order.task_id not in self.tasks:
            raise ConfigError(f"no task {order.task_id!r} among this environment's {len(self.tasks)} tasks")
        if order.trial is None:
            return
        if not 0 <= order.trial <= MAX_TRIAL:
            raise ValueError(f"a trial (the seed given to reset) is an integer from 0 to 2**63 - 1, not {order.trial}")
        if (order.task_id, order.trial) in kept or named.count((order.task_id, order.trial)) > 1:
            raise ValueError(f"trial {order.trial} of task {order.task_id!r} is in play in another environment of this vector")

    def _check_act(self, slot: int) -> None:
        episode = self.slots[slot]
        if episode is None:
            raise EpisodeOver("no episode in play: call reset() first")
        if episode.reported:
            raise EpisodeOver("the episode has ended: call reset() to start the next")

    def _start(self, slot: int, order: Reset) -> Episode:
        self._abandon(slot)
        task = self.tasks[order.task_id]
        episode = Episode(task=task, trial=self._trial(task.id, order.trial), side=self.config.side, arrived=self._arrived)
        context = contextvars.copy_context()
        context.run(CURRENT.set, episode)
        episode.runner = self.loop.create_task(run_unit(self._context(), Unit("agent", task, episode.trial)), context=context)
        episode.runner.add_done_callback(episode.ended)
        episode.runner.add_done_callback(self._count)
        episode.runner.add_done_callback(lambda _: self._playing.discard((task.id, episode.trial)))
        self.slots[slot] = episode
        return episode

    def _act(self, slot: int, order: Act) -> Episode:
        episode = self.slots[slot]
        assert episode is not None
        if episode.waiting:
            episode.act(order.action)
        return episode

    def _abandon(self, slot: int) -> None:
        """A reset in the middle of an episode drops it: cancelled, never stored (as an interrupted run drops it)."""
        episode = self.slots[slot]
        if episode is not None and episode.runner is not None and not episode.runner.done():
            self._pending.discard(episode)
            self._playing.discard((episode.task.id, episode.trial))
            episode.runner.cancel()

    def _trial(self, task_id: str, trial: int | None) -> int:
        """The trial asked for (checked), else the task's next one that was neither stored nor played here."""
        if trial is None:
            trial = self._trials.get(task_id, 0)
            while (task_id, trial) in self._playing:
                trial += 1
        self._trials[task_id] = max(self._trials.get(task_id, 0), trial + 1)
        self._playing.add((task_id, trial))
        return trial

    def _arrived(self, episode: Episode) -> None:
        self._pending.discard(episode)
        if not self._pending and self._barrier is not None and not self._barrier.done():
            self._barrier.set_result(None)

    def _outcome(self, slot: int, order: Order) -> Outcome:
        episode = self.slots[slot]
        assert episode is not None
        if episode.failure is not None:
            raise episode.failure
        if isinstance(order, Reset):
            return self._opened(episode)
        if not episode.over:
            return self._shaped(turn(episode, self.run_id))
        episode.reported = True
        outcome = ending(episode, self.run_id)
        return self._shaped(attrs.evolve(outcome, info={**outcome.info, "stored": self.config.db is not None}))

    def _opened(self, episode: Episode) -> Outcome:
        outcome = opening(episode, self.run_id)
        if episode.over and episode.result is not None:  # ended before the policy's turn: the next step reports the end
            episode.cursor = len(episode.result.messages)
        return outcome

    def _shaped(self, outcome: Outcome) -> Outcome:
        if self.config.shaping is None:
            return outcome
        bonus = float(self.config.shaping(outcome.messages, outcome.info))
        return attrs.evolve(outcome, reward=outcome.reward + bonus, info={**outcome.info, "shaping": bonus})

    def _count(self, runner: asyncio.Task[ConversationResult]) -> None:
        """Count a finished episode with the run (its `on_finished`)."""
        if not runner.cancelled() and runner.exception() is None:
            self.finished += 1
            self._on_finished(runner.result())


class _Discard:
    """Stands in for the store while the environment stores nothing: episodes are played and scored, then dropped."""

    def save_conversation(self, result: ConversationResult, metrics: Iterable[MetricValue], plugin_rows: Sequence[Any] = ()) -> list[MetricValue]:
        """Nothing is written."""
        return list(metrics)


def _version() -> str | None:
    with contextlib.suppress(Exception):
        from importlib.metadata import version

        return version("bench-gym")
    return None
