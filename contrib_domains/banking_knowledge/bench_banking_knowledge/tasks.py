"""tau2's task files read as tau2 reads them: fields its models do not know are ignored, and reported."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from bench_kernel import Description, EvaluationCriteria, InitializationData, InitialState, UserScenario

LEVELS: tuple[tuple[tuple[str, ...], type], ...] = (
    (("description",), Description),
    (("user_scenario",), UserScenario),
    (("initial_state",), InitialState),
    (("initial_state", "initialization_data"), InitializationData),
    (("evaluation_criteria",), EvaluationCriteria),
)
"""The objects inside a task whose unknown fields tau2's models drop (the task level is the kernel's: plugins own fields there)."""


def lenient_task_json(item: Any, problems: list[str], owned: Iterable[str] = ()) -> Any:
    """A copy of one task's JSON without the fields tau2 ignores (owned locations kept); each drop is a problem."""
    if not isinstance(item, dict):
        return item
    task = dict(item)
    keep = set(owned)
    for path, cls in LEVELS:
        _drop_unknown(task, path, cls, keep, problems, str(item.get("id")))
    return task


def _drop_unknown(task: dict[str, Any], path: tuple[str, ...], cls: type, keep: set[str], problems: list[str], task_id: str) -> None:
    parent: Any = task
    for key in path[:-1]:
        parent = parent.get(key) if isinstance(parent, dict) else None
    node = parent.get(path[-1]) if isinstance(parent, dict) else None
    if not isinstance(node, dict):
        return
    where = ".".join(path)
    known = {field.name for field in attrs.fields(cls)}
    unknown = sorted(k for k in node if k not in known and f"{where}.{k}" not in keep)
    if unknown:
        parent[path[-1]] = {k: v for k, v in node.items() if k not in unknown}
        problems.append(f"task {task_id}: {where} has fields tau2 ignores (so does bench): {', '.join(unknown)}")
