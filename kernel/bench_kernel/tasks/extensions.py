"""Task extensions: plugin-owned task data, declared by the plugin that reads it (docs/plugins.md)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import attrs

from bench_kernel.serialization import structure

Parent = Literal["task", "user_scenario", "evaluation_criteria"]
PARENT_PATHS: dict[str, tuple[str, ...]] = {"task": (), "user_scenario": ("user_scenario",), "evaluation_criteria": ("evaluation_criteria",)}


@attrs.define(kw_only=True)
class TaskExtension:
    """Base class of registered task extensions: one field of a task file, owned by one plugin."""

    name: str
    """Key in `task.extensions` (unique across plugins)."""
    field: str
    """The field's name in the task JSON."""
    parent: Parent = "task"
    """The object of the task JSON that holds the field."""
    type: Any = Any
    """What the field structures into (an attrs class, list[...] of one, or plain JSON with Any)."""
    description: str = ""

    def attributes(self, value: Any) -> Mapping[str, str]:
        """Task attributes this data implies, for report breakdowns (e.g. {'shifts': '2'})."""
        return {}

    def load(self, raw: Any, *, source: str, root: str) -> Any:
        """The field's value from its JSON (default: structured into `type`; errors name source and path)."""
        return structure(raw, self.type, source=source, root=root)

    def problems(self, value: Any) -> list[str]:
        """What is inconsistent in this data (the task still loads and runs; `bench tasks` lists them)."""
        return []

    @property
    def location(self) -> str:
        """Where the field sits in a task, e.g. 'user_scenario.goal_shifts'."""
        return ".".join((*PARENT_PATHS[self.parent], self.field))


BUILTIN_COMPONENTS = frozenset({"DB", "ENV_ASSERTION", "NL_ASSERTION", "ACTION", "COMMUNICATE"})
PLUGIN_FIELDS = {"goals": "bench-atod", "user_scenario.goal_shifts": "bench-changebench", "evaluation_criteria.action_sets": "bench-changebench"}
"""Task fields first-party distributions own: a task file with one that no installed plugin owns names the distribution."""
PLUGIN_COMPONENTS = {"NL_ASSERTION": "bench-judging"}
"""Reward components first-party distributions register: task files may name them unloaded; a run resting on one is refused."""


@attrs.frozen
class TaskVocabulary:
    """What the loaded plugins let a task file say: extension fields, reward components and combination rules."""

    extensions: Sequence[TaskExtension] = ()
    reward_components: frozenset[str] = BUILTIN_COMPONENTS
    reward_rules: frozenset[str] = frozenset({"product"})
    owners: Callable[[], Mapping[str, str]] | None = None
    """Lazily: field location -> plugin name, over every installed plugin (only consulted on errors)."""

    def owner_hint(self, location: str) -> str:
        """A hint naming the installed plugin or first-party distribution (`PLUGIN_FIELDS`) that owns a field, else ''."""
        try:
            plugin = self.owners().get(location) if self.owners is not None else None
        except Exception:  # noqa: BLE001 - a hint must never hide the real error
            plugin = None
        if plugin:
            return f" (owned by plugin {plugin!r}: add --plugin {plugin})"
        dist = PLUGIN_FIELDS.get(location)
        return f" (owned by the distribution {dist}: pip install {dist}, then add --plugin {dist.removeprefix('bench-')})" if dist else ""


def extract(raw: Any, extensions: Sequence[TaskExtension]) -> tuple[Any, dict[str, tuple[TaskExtension, Any]]]:
    """Take the extension fields out of one raw task object; return the rest and {name: (extension, raw value)}."""
    if not isinstance(raw, dict) or not extensions:
        return raw, {}
    raw = dict(raw)
    found: dict[str, tuple[TaskExtension, Any]] = {}
    for ext in extensions:
        holder = _holder(raw, ext)
        if holder is not None and ext.field in holder:
            found[ext.name] = (ext, holder.pop(ext.field))
    return raw, found


def _holder(raw: dict[str, Any], ext: TaskExtension) -> dict[str, Any] | None:
    """The (copied, so the caller's data is untouched) object that holds the extension's field."""
    if ext.parent == "task":
        return raw
    inner = raw.get(ext.parent)
    if not isinstance(inner, dict):
        return None
    raw[ext.parent] = inner = dict(inner)
    return inner


def task_attributes(domain: str, task: Any, extensions: Sequence[TaskExtension]) -> dict[str, str]:
    """What a report can break a task's figures down by: its domain, extension-derived and own attributes."""
    found = {"domain": domain}
    for ext in extensions:
        value = task.extensions.get(ext.name)
        if value is not None:
            found.update({str(k): str(v) for k, v in ext.attributes(value).items()})
    found.update(task.attributes)
    return found


def task_problems(tasks: Sequence[Any], extensions: Sequence[TaskExtension]) -> tuple[str, ...]:
    """'task <id>: <problem>' for every inconsistency the extensions find in the tasks' data."""
    found = []
    for task in tasks:
        for ext in extensions:
            value = task.extensions.get(ext.name)
            if value is not None:
                found += [f"task {task.id!r}: {ext.location}: {problem}" for problem in ext.problems(value)]
    return tuple(found)
