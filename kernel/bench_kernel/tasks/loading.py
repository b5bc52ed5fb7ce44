"""Task files: loading and structuring tasks, plugin-owned fields handed to the task extensions that own them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel.errors import TaskFileError
from bench_kernel.serialization import MAX_PROBLEMS, read_json, structure
from bench_kernel.tasks.extensions import TaskVocabulary, extract
from bench_kernel.tasks.schema import Task


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


def structure_tasks(data: list[Any], vocabulary: TaskVocabulary | None = None, *, source: str, root: str = "$",
                    sources: Sequence[str] | None = None) -> list[Task]:
    """Structure task objects (already parsed JSON), handing plugin-owned fields to the vocabulary's extensions.

    `sources` names the file of each item when every task has a file of its own (tau2's `tasks/task_*.json`):
    a problem then names that file, with the JSON path inside it.
    """
    path = source
    vocabulary = vocabulary or TaskVocabulary()
    tasks: list[Task] = []
    problems: list[str] = []
    for i, item in enumerate(data):
        at = root if sources is not None else f"{root}[{i}]"
        try:
            task = _structure_task(item, vocabulary, source=path, root=at)
        except TaskFileError as exc:
            problems += [_with_owner(p, vocabulary) for p in exc.problems]
        else:
            problems += _unknown_names(task, vocabulary, at)
            tasks.append(task)
        if problems and sources is not None:
            raise TaskFileError(sources[i], problems)
        if len(problems) >= MAX_PROBLEMS and i + 1 < len(data):
            problems = [*problems[:MAX_PROBLEMS], f"stopped after {MAX_PROBLEMS} problems ({len(data) - i - 1} more tasks not checked)"]
            break
    if problems:
        raise TaskFileError(str(path), problems)
    _reject_duplicate_ids(tasks, path, root)
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


_EXTRA = re.compile(r"extra fields found \((?P<fields>[^)]*)\) @ \$(?:\.tasks)?\[\d+\](?P<where>\S*)")


def _unknown_names(task: Task, vocabulary: TaskVocabulary, root: str) -> list[str]:
    """Reward components and rules that no loaded plugin registers, with their JSON paths."""
    criteria = task.evaluation_criteria
    if criteria is None:
        return []
    where = f"{root}.evaluation_criteria"
    problems = [f"unknown reward component {name!r} @ {where}.reward_basis[{j}] "
                f"(registered: {', '.join(sorted(vocabulary.reward_components))})"
                for j, name in enumerate(criteria.reward_basis) if name not in vocabulary.reward_components]
    if criteria.reward_rule is not None and criteria.reward_rule.name not in vocabulary.reward_rules:
        problems.append(f"unknown reward rule {criteria.reward_rule.name!r} @ {where}.reward_rule "
                        f"(registered: {', '.join(sorted(vocabulary.reward_rules))})")
    return problems


def _with_owner(problem: str, extensions: TaskVocabulary) -> str:
    match = _EXTRA.search(problem)
    if match is None:
        return problem
    where = match.group("where").lstrip(".")
    hints = [extensions.owner_hint(f"{where}.{f.strip()}" if where else f.strip()) for f in match.group("fields").split(",")]
    return problem + "".join(h for h in hints if h)


def _reject_duplicate_ids(tasks: list[Task], path: str, root: str) -> None:
    seen: dict[str, int] = {}
    for i, task in enumerate(tasks):
        if task.id in seen:
            raise TaskFileError(str(path), [f"duplicate task id {task.id!r} @ {root}[{i}] (first at {root}[{seen[task.id]}])"])
        seen[task.id] = i
