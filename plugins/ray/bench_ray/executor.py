"""The Ray executor: actors play units with bounded work in flight; their results stream back to the driver, which stores."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from bench_kernel import (
    ConfigError,
    ConversationResult,
    DomainData,
    Executor,
    ExecutorError,
    Outbox,
    RunConfig,
    RunContext,
    Task,
    Unit,
    WorkerSpec,
    Writer,
    get_logger,
    run_unit,
    stop_spending,
    worker_context,
    worker_spec,
)

log = get_logger()
INSTALL = "pip install 'bench-ray[ray]'  (or: pip install ray)"
Message = tuple[Any, ...]


def import_ray() -> Any:
    """The ray module, or a clear error naming the install command."""
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"--executor ray needs Ray, which is not installed: {INSTALL}") from exc
    return ray


@attrs.define(kw_only=True)
class RayExecutor(Executor):
    """Ray actors (one per cluster CPU, or --workers N) play the units; the run's process alone writes SQLite."""

    name: str = "ray"
    description: str = "Ray actors on a local or remote cluster; results stream back to this process, which stores them"
    option_names: tuple[str, ...] = ("address",)

    def check(self, config: RunConfig) -> None:
        """Refuse unknown options, and a missing Ray, before the run begins."""
        super().check(config)
        import_ray()

    async def execute(self, ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None]) -> int:
        """Start (or join) the cluster, start the actors, play every unit through them and store what comes back."""
        ray = import_ray()
        started_here = not ray.is_initialized()
        if started_here:
            ray.init(address=ctx.config.executor_options.get("address"), include_dashboard=False, logging_level="warning", log_to_driver=False)
        actors: list[Any] = []
        try:
            count = actor_count(ray, ctx.config, len(units))
            spec = worker_spec(ctx, ctx.store_path, count)
            tasks = list({u.task.id: u.task for u in units}.values())
            # Shipped once through the object store: each actor gets the domain data once, never per conversation.
            data_ref, tasks_ref = ray.put(ctx.data), ray.put(tasks)
            cpus = min(1.0, float(ray.cluster_resources().get("CPU", 1.0)) / count)
            remote = ray.remote(ConversationActor).options(max_concurrency=spec.config.concurrency, num_cpus=cpus, scheduling_strategy="SPREAD")
            actors = [remote.remote(spec, data_ref, tasks_ref) for _ in range(count)]
            writer = Writer(ctx, on_finished)
            await _drain(ray, actors, iter(units), spec.config.concurrency, writer)
            return writer.finished
        finally:
            for actor in actors:
                ray.kill(actor)  # what an actor had in flight is dropped, as in one process
            if started_here:
                ray.shutdown()


def actor_count(ray: Any, config: RunConfig, units: int) -> int:
    """--workers N actors, else one per CPU of the cluster; never more than there are units or conversations in flight."""
    wanted = config.workers if config.workers is not None and config.workers > 1 else int(ray.cluster_resources().get("CPU", 1))
    return max(1, min(wanted, units, config.concurrency))


async def _drain(ray: Any, actors: list[Any], queue: Iterator[Unit], per_actor: int, writer: Writer) -> None:
    """Keep at most per_actor units in flight on each actor; store every result as it arrives."""
    flying: dict[asyncio.Future[Any], int] = {}
    stopped = False

    def submit(index: int) -> None:
        unit = next(queue, None)
        if unit is not None:
            flying[asyncio.wrap_future(actors[index].play.remote(unit).future())] = index

    for index in range(len(actors)):
        for _ in range(per_actor):
            submit(index)
    while flying:
        done, _ = await asyncio.wait(flying, return_when=asyncio.FIRST_COMPLETED)
        for future in done:
            index = flying.pop(future)
            try:
                messages = future.result()
            except Exception as exc:  # an actor that could not start or died: the run stops, resumable
                raise ExecutorError(f"ray actor {index} failed: {type(exc).__name__}: {exc}") from exc
            for message in messages:
                writer.apply(message)
            if writer.exhausted and not stopped:
                stopped = True
                ray.get([actor.stop.remote() for actor in actors])
            if not stopped:
                submit(index)


class ConversationActor:
    """A Ray actor with its own copy of the run's context: plays units, returns what the writer is to store."""

    def __init__(self, spec: WorkerSpec, data: DomainData, tasks: list[Task]) -> None:
        self.pending: dict[str, list[Message]] = {}
        self.loose: list[Message] = []
        self.outbox = Outbox(self._keep, spec.store_path, spec.config.cache)
        self.ctx = worker_context(spec, tasks, self.outbox, data)

    def _keep(self, message: Message) -> None:
        if message[0] in ("call", "done"):
            self.pending.setdefault(message[1], []).append(message)
        else:
            self.loose.append(message)

    async def play(self, unit: Unit) -> list[Message]:
        """Play one unit; its model calls and its result, in the order they happened."""
        await run_unit(self.ctx, unit)
        cid = f"{self.ctx.run_id}/{unit.arm}/{unit.task.id}/{unit.trial}"
        out, self.loose = [*self.loose, *self.pending.pop(cid, [])], []
        return out

    async def stop(self) -> None:
        """The run's cost cap was reached: refuse this actor's next model calls."""
        stop_spending(self.ctx)
