"""Executors: where a run's conversations are played; workers send messages, the run's process alone stores them (docs/executors.md)."""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import attrs
import click

from bench_kernel.errors import ConfigError
from bench_kernel.plugins import collect, get_plugin_manager, load_profile, missing_plugin
from bench_kernel.profiles.profile import Profile
from bench_kernel.registry import Registry
from bench_kernel.run.context import Executor, RunContext, Unit
from bench_kernel.run.runner import RunConfig, execute, load_domain, resolve_components, run_models
from bench_kernel.schema.results import ConversationResult
from bench_kernel.store.store import MetricValue, PluginRows, Store, open_store_for_reading
from bench_kernel.tasks.domain import DomainData

EXECUTOR_OPTIONS_META = "bench.executor_options"
"""Where options that executor plugins add to `bench run` leave their values (click context meta)."""

Message = tuple[Any, ...]
"""What a worker sends the writer: ("call", ...), ("cache", ...), ("done", ...) (docs/executors.md) or an executor's own."""


@attrs.define(kw_only=True)
class LocalExecutor(Executor):
    """This machine, in the run's own process: one event loop plays every unit (bench-workers adds processes)."""

    name: str = "local"
    description: str = "this machine, in the run's own process (bench-workers adds --workers N processes)"
    preload_after_s: float | None = None
    """How long conversations run before the deferred data is built (`preload`; None: the kernel's default)."""

    def check(self, config: RunConfig) -> None:
        """Refuse `--workers N` (N > 1): worker processes come from bench-workers, whose executor replaces this one."""
        super().check(config)
        if (config.workers or 1) > 1:
            raise ConfigError(
                f"--workers {config.workers} plays in worker processes, which come from the plugin bench-workers (without it "
                f"a run plays in this process); it is {missing_plugin('workers', config.plugins)} @ $.run.workers"
            )

    async def execute(self, ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None] | None = None) -> int:
        """Play every unit in this process's event loop."""
        return await execute(ctx, units, on_finished, self.preload_after_s)

    def plays_in_this_process(self, config: RunConfig) -> bool:
        """True."""
        return True


@attrs.define
class Writer:
    """The run's single writer: applies what workers send to the store, counts spend and finished conversations."""

    ctx: RunContext
    on_finished: Callable[[ConversationResult], None] | None = None
    finished: int = 0

    def apply(self, message: Message) -> None:
        """Count a model call's spend at once (the cost cap stops the workers whatever is written when), then `write`."""
        if message[0] == "call":
            self.ctx.models.spent += message[3].cost or 0.0
        self.write(message)

    def write(self, message: Message) -> None:
        """Store one message (its spend already counted); kinds the writer does not know are the executor's business."""
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
    data = data if data is not None else load_domain(registry, spec.config)
    parts = resolve_components(registry, spec.config, data, list(tasks))
    store = cast(Store, outbox)  # the outbox has the store methods a conversation uses
    profile = spec.profile or load_profile(spec.config.profile)
    models = run_models(parts.config, profile, registry, store=store, spent=spec.spent)
    return RunContext(
        **attrs.asdict(parts, recurse=False), run_id=spec.run_id, data=data, registry=registry, store=store, models=models, profile=profile
    )


def stop_spending(ctx: RunContext) -> None:
    """The run's cost cap was reached elsewhere: this worker's next model calls are refused, as in one process."""
    if ctx.models.max_cost is not None:
        ctx.models.spent = max(ctx.models.spent, ctx.models.max_cost)


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
