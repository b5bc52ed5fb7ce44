"""Task transforms: plugins that change a run's tasks before it plays them, driven by run settings they own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import attrs

from bench_kernel.errors import ConfigError, did_you_mean
from bench_kernel.logs import get_logger
from bench_kernel.registry import Registry
from bench_kernel.run.config import PLUGIN_SETTINGS, RunConfig
from bench_kernel.schema.tasks import Task
from bench_kernel.tasks.domain import DomainData

if TYPE_CHECKING:
    from bench_kernel.run.context import RunContext

log = get_logger()


@attrs.frozen(kw_only=True)
class Prepared:
    """What a transform's `prepare` gives the run: its tasks, its settings as the run records them, events to keep."""

    tasks: list[Task]
    settings: dict[str, Any] = attrs.field(factory=dict)
    """Its settings as they count in the run's identity (e.g. in one order whatever the command line's)."""
    events: dict[str, Any] = attrs.field(factory=dict)
    """Run events (kind -> payload) the run stores once it has begun, e.g. what the transform left out."""


@attrs.define(kw_only=True)
class TaskTransform:
    """Changes the domain data or the selected tasks of every run that loads it (bench-changebench: personas, goal
    shifts; bench-trust: `--exclude-flagged`).

    `domain`, `tasks` and `prepare` get the values of its `settings` the run sets (none set: an empty mapping) and the
    run's registry, and are called before anything is stored; they raise `ConfigError` for a setting they cannot use.
    `header` and `finished` get the begun run.
    """

    name: str
    settings: tuple[str, ...] = ()
    """The run settings it owns (`[run]` keys of a run file): part of the run's identity and hash when set."""
    by_content: tuple[str, ...] = ()
    """Those of its settings naming a file whose content `domain` puts into the tasks: hashed by content, not path."""
    description: str = ""

    def domain(self, data: DomainData, settings: Mapping[str, Any], registry: Registry) -> DomainData:
        """The domain's data as the run sees it, before its content is hashed (e.g. persona keys replaced by texts)."""
        return data

    def tasks(self, data: DomainData, tasks: list[Task], settings: Mapping[str, Any], registry: Registry) -> list[Task]:
        """The selected tasks as the run plays them (e.g. chained into goal shifts)."""
        return tasks

    async def prepare(self, data: DomainData, tasks: list[Task], settings: Mapping[str, Any], registry: Registry, store_path: str) -> Prepared:
        """After `tasks`, for work that awaits or reads the results database (bench-trust's `--exclude-flagged` audits)."""
        return Prepared(tasks=tasks, settings=dict(settings))

    def header(self, ctx: RunContext) -> str | None:
        """The line the run's header shows once the run has begun (None: none)."""
        return None

    def finished(self, ctx: RunContext) -> None:
        """Keep what the run's report needs once the run has played its conversations (off its start-up and loop)."""


def _transforms(registry: Registry) -> list[TaskTransform]:
    return list(registry.components.get("task transform", {}).values())


def _own(transform: TaskTransform, config: RunConfig) -> dict[str, Any]:
    return {key: config.plugin_settings[key] for key in transform.settings if config.plugin_settings.get(key) is not None}


def transformed_domain(registry: Registry, config: RunConfig, data: DomainData) -> DomainData:
    """The domain's data as every loaded task transform changes it."""
    for transform in _transforms(registry):
        data = transform.domain(data, _own(transform, config), registry)
    return data


def transformed_tasks(data: DomainData, tasks: list[Task], config: RunConfig, registry: Registry) -> list[Task]:
    """The run's selected tasks as every loaded task transform changes them: the tasks it plays."""
    for transform in _transforms(registry):
        tasks = transform.tasks(data, tasks, _own(transform, config), registry)
    return tasks


async def prepared_tasks(
    data: DomainData, tasks: list[Task], config: RunConfig, registry: Registry, store_path: str
) -> tuple[list[Task], RunConfig, dict[str, Any]]:
    """Every loaded transform's `prepare`: the tasks the run plays, its configuration and the events to keep."""
    events: dict[str, Any] = {}
    for transform in _transforms(registry):
        found = await transform.prepare(data, tasks, _own(transform, config), registry, store_path)
        tasks, events = found.tasks, {**events, **found.events}
        config = attrs.evolve(config, plugin_settings={**config.plugin_settings, **found.settings})
    return tasks, config, events


def header_lines(ctx: RunContext) -> list[str]:
    """The lines the loaded transforms add to the run's header."""
    return [line for transform in _transforms(ctx.registry) if (line := transform.header(ctx))]


def finish_transforms(ctx: RunContext) -> None:
    """Every loaded transform's `finished(ctx)`, each on its own: one that fails is logged and leaves the run as it is."""
    for transform in _transforms(ctx.registry):
        try:
            transform.finished(ctx)
        except Exception as exc:  # noqa: BLE001 - what a report lacks is not worth the run
            log.warning("run.transform_not_finished", transform=transform.name, error=f"{type(exc).__name__}: {exc}")


def content_settings(registry: Registry) -> list[str]:
    """The settings the loaded task transforms hash by the content of the file they name."""
    return [key for transform in _transforms(registry) for key in transform.by_content]


def unowned_settings(registry: Registry, config: RunConfig) -> list[str]:
    """The run's plugin settings that no loaded task transform owns."""
    owned = {key for transform in _transforms(registry) for key in transform.settings}
    return [key for key in config.plugin_settings if key not in owned]


def refuse_unowned_settings(registry: Registry, config: RunConfig) -> None:
    """Refuse a run setting no field or loaded task transform takes, naming the plugin that would (or the field meant)."""
    for key in unowned_settings(registry, config):
        owner = PLUGIN_SETTINGS.get(key)
        if owner is None:
            known = [f.name for f in attrs.fields(RunConfig)] + [k for t in _transforms(registry) for k in t.settings]
            raise ConfigError(f"unknown run setting {key!r}{did_you_mean(key, known)} @ $.run.{key}")
        setting = f"run setting {key!r} (--{key.replace('_', '-')})"
        if f"no:{owner}" in (config.plugins or ()):  # blocked on purpose: installing or naming it is not the advice
            raise ConfigError(f"{setting} comes from bench-{owner}, which this run blocks (--plugin no:{owner})")
        raise ConfigError(
            f"{setting} needs the plugin bench-{owner}, which is not loaded (pip install bench-{owner}; when it is installed, add --plugin {owner})"
        )
