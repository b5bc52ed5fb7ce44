"""Task transforms: plugins that change a run's tasks before it plays them, driven by run settings they own."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from bench_kernel.errors import ConfigError, did_you_mean
from bench_kernel.registry import Registry
from bench_kernel.run.config import PLUGIN_SETTINGS, RunConfig
from bench_kernel.schema.tasks import Task
from bench_kernel.tasks.domain import DomainData


@attrs.define(kw_only=True)
class TaskTransform:
    """Changes the domain data or the selected tasks of every run that loads it (bench-changebench: personas, goal shifts).

    Each method gets the values of its `settings` the run sets (none set: an empty mapping) and the run's registry,
    and is called before anything is stored; it raises `ConfigError` for a setting it cannot use.
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
        raise ConfigError(
            f"run setting {key!r} (--{key.replace('_', '-')}) needs the plugin bench-{owner}, which is not loaded "
            f"(pip install bench-{owner}; when it is installed, add --plugin {owner})"
        )
