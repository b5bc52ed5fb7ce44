"""Task files: loading and structuring tasks, plugin-owned fields handed to the task extensions that own them."""

from __future__ import annotations

import functools
import re
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel.errors import TaskFileError, closest_match, did_you_mean
from bench_kernel.schema.tasks import Task
from bench_kernel.serialization import MAX_PROBLEMS, read_json, structure
from bench_kernel.tasks.extensions import PARENT_PATHS, TaskVocabulary, extract


def load_tasks(path: Path, vocabulary: TaskVocabulary | None = None) -> list[Task]:
    """Load a task file: a JSON array of tasks, or an object with a 'tasks' array; plugin fields go to extensions."""
    data = read_json(path)
    root = "$"
    if isinstance(data, dict) and "tasks" in data:
        data, root = data["tasks"], "$.tasks"
    if not isinstance(data, list):
        raise TaskFileError(str(path), [f"expected a list of tasks @ {root}"])
    if not data:
        raise TaskFileError(str(path), [f"no tasks: the list is empty @ {root}"])
    return structure_tasks(data, vocabulary, source=str(path), root=root)


def structure_tasks(
    data: list[Any], vocabulary: TaskVocabulary | None = None, *, source: str, root: str = "$", sources: Sequence[str] | None = None
) -> list[Task]:
    """Structure parsed task objects, plugin-owned fields to the vocabulary's extensions; `sources`: each item's file."""
    vocabulary = vocabulary or TaskVocabulary()
    tasks: list[Task] = []
    problems: list[str] = []
    for i, item in enumerate(data):
        at = root if sources is not None else f"{root}[{i}]"
        try:
            task = _structure_task(item, vocabulary, source=source, root=at)
        except TaskFileError as exc:
            problems += [_explained(p, vocabulary, at) for p in exc.problems]
        else:
            problems += _unknown_names(task, vocabulary, at)
            tasks.append(task)
        if problems and sources is not None:
            raise TaskFileError(sources[i], problems)
        if len(problems) >= MAX_PROBLEMS and i + 1 < len(data):
            problems = [*problems[:MAX_PROBLEMS], f"stopped after {MAX_PROBLEMS} problems ({len(data) - i - 1} more tasks not checked)"]
            break
    if problems:
        raise TaskFileError(source, problems)
    _reject_duplicate_ids(tasks, source, root)
    return tasks


def _structure_task(item: Any, vocabulary: TaskVocabulary, *, source: str, root: str) -> Task:
    rest, found = extract(item, vocabulary.extensions)
    task = structure(rest, Task, source=source, root=root)
    if not found:
        return task
    data = dict(task.extensions)
    for name, (ext, value) in found.items():
        if value is not None:  # an explicit null says the task has none (as if the field were absent)
            data[name] = ext.load(value, source=source, root=f"{root}.{ext.location}")
    return attrs.evolve(task, extensions=data)


_EXTRA = re.compile(r"extra fields found \((?P<fields>[^)]*)\) @ (?P<path>\S+)$")


def _explained(problem: str, vocabulary: TaskVocabulary, root: str) -> str:
    """An unknown-field problem with, per field, the plugin that owns it or the field most likely meant."""
    match = _EXTRA.search(problem)
    if match is None or not match.group("path").startswith(root):
        return problem
    names = re.findall(r"\.(\w+)", match.group("path")[len(root) :])  # the object's fields path, list indexes left out
    fields = [f.strip() for f in match.group("fields").split(",")]
    known = _known_fields(names, vocabulary)
    hints = [vocabulary.owner_hint(".".join([*names, field])) or _meant(field, known, several=len(fields) > 1) for field in fields]
    return problem + "".join(hints)


def _meant(field: str, known: set[str], *, several: bool) -> str:
    if several:  # which of the fields each hint is for
        meant = closest_match(field, known)
        return f" (did you mean {meant!r} for {field!r}?)" if meant else ""
    return did_you_mean(field, known)


def _known_fields(names: list[str], vocabulary: TaskVocabulary) -> set[str]:
    """The fields a task file may write in the object at a path of field names: the task schema's and loaded extensions'."""
    classes: list[type] = [Task]
    for depth, name in enumerate(names):
        owned = [ext.type for ext in vocabulary.extensions if ext.location == ".".join(names[: depth + 1])]
        classes = _attrs_classes(owned[0]) if owned else [c for cls in classes for c in _attrs_classes(_hints(cls).get(name))]
    here = ".".join(names)
    extensions = {ext.field for ext in vocabulary.extensions if ".".join(PARENT_PATHS[ext.parent]) == here}
    return {field.name for cls in classes for field in attrs.fields(cls)} | extensions


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - a hint that cannot be resolved only costs the suggestion
        return {}


def _attrs_classes(hint: Any) -> list[type]:
    """The attrs classes a type hint admits, through unions, optionals and lists."""
    if isinstance(hint, type) and attrs.has(hint):
        return [hint]
    return [cls for arg in typing.get_args(hint) for cls in _attrs_classes(arg)]


def _unknown_names(task: Task, vocabulary: TaskVocabulary, root: str) -> list[str]:
    """Reward components and rules that no loaded plugin registers, with their JSON paths."""
    criteria = task.evaluation_criteria
    if criteria is None:
        return []
    where = f"{root}.evaluation_criteria"
    problems = [
        f"unknown reward component {name!r} @ {where}.reward_basis[{j}]{did_you_mean(name, vocabulary.reward_components)} "
        f"(registered: {', '.join(sorted(vocabulary.reward_components))})"
        for j, name in enumerate(criteria.reward_basis)
        if name not in vocabulary.reward_components
    ]
    if criteria.reward_rule is not None and criteria.reward_rule.name not in vocabulary.reward_rules:
        rule = criteria.reward_rule.name
        problems.append(
            f"unknown reward rule {rule!r} @ {where}.reward_rule{did_you_mean(rule, vocabulary.reward_rules)} "
            f"(registered: {', '.join(sorted(vocabulary.reward_rules))})"
        )
    return problems


def _reject_duplicate_ids(tasks: list[Task], path: str, root: str) -> None:
    seen: dict[str, int] = {}
    for i, task in enumerate(tasks):
        if task.id in seen:
            raise TaskFileError(path, [f"duplicate task id {task.id!r} @ {root}[{i}] (first at {root}[{seen[task.id]}])"])
        seen[task.id] = i
