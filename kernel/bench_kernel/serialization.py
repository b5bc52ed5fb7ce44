"""The one kernel converter, and loading of task files with errors that name file and JSON path."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, TypeVar

import cattrs
from cattrs.preconf.json import make_converter

from bench_kernel.errors import TaskFileError
from bench_kernel.conversation.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from bench_kernel.tasks.schema import StructuredUserInstructions, Task

T = TypeVar("T")

_MESSAGE_TYPES: dict[str, type] = {
    "system": SystemMessage,
    "assistant": AssistantMessage,
    "user": UserMessage,
    "tool": ToolMessage,
}


def make_kernel_converter() -> cattrs.Converter:
    """Build the converter every kernel and plugin type goes through."""
    conv = make_converter(forbid_extra_keys=True, omit_if_default=False)

    def structure_message(obj: Any, _: Any) -> Message:
        if not isinstance(obj, dict) or obj.get("role") not in _MESSAGE_TYPES:
            raise ValueError(f"a message needs a role in {sorted(_MESSAGE_TYPES)}, got {obj!r:.80}")
        return conv.structure(obj, _MESSAGE_TYPES[obj["role"]])

    def structure_instructions(obj: Any, _: Any) -> StructuredUserInstructions | str:
        if isinstance(obj, str):
            return obj
        return conv.structure(obj, StructuredUserInstructions)

    conv.register_structure_hook(Message, structure_message)
    conv.register_structure_hook(StructuredUserInstructions | str, structure_instructions)
    conv.register_unstructure_hook(Message, lambda m: conv.unstructure(m, type(m)))
    return conv


converter = make_kernel_converter()


def structure(data: Any, cls: type[T], *, source: str, root: str = "$") -> T:
    """Structure data into cls, turning failures into a TaskFileError naming source and JSON path."""
    try:
        return converter.structure(data, cls)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError) as exc:
        raise TaskFileError(source, _problems(exc, root)) from exc


def _problems(exc: Exception, root: str) -> list[str]:
    if isinstance(exc, cattrs.BaseValidationError):
        return cattrs.transform_error(exc, path=root)
    return [f"{exc} @ {root}"]


def unstructure(obj: Any) -> Any:
    """Turn an attrs object into JSON-ready data."""
    return converter.unstructure(obj)


def read_json(path: Path) -> Any:
    """Read a JSON file, naming the file and position when it is not JSON."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise TaskFileError(str(path), ["file not found"]) from exc
    except json.JSONDecodeError as exc:
        raise TaskFileError(str(path), [f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) from exc


def load_tasks(path: Path) -> list[Task]:
    """Load a task file: a JSON array of tasks, or an object with a 'tasks' array."""
    data = read_json(path)
    root = "$"
    if isinstance(data, dict) and "tasks" in data:
        data, root = data["tasks"], "$.tasks"
    if not isinstance(data, list):
        raise TaskFileError(str(path), [f"expected a list of tasks @ {root}"])
    tasks: list[Task] = []
    problems: list[str] = []
    for i, item in enumerate(data):
        try:
            tasks.append(structure(item, Task, source=str(path), root=f"{root}[{i}]"))
        except TaskFileError as exc:
            problems += exc.problems
    if problems:
        raise TaskFileError(str(path), problems)
    _reject_duplicate_ids(tasks, path, root)
    return tasks


def _reject_duplicate_ids(tasks: list[Task], path: Path, root: str) -> None:
    seen: dict[str, int] = {}
    for i, task in enumerate(tasks):
        if task.id in seen:
            raise TaskFileError(str(path), [f"duplicate task id {task.id!r} @ {root}[{i}] (first at {root}[{seen[task.id]}])"])
        seen[task.id] = i


def canonical_json(obj: Any) -> str:
    """Deterministic compact JSON: sorted keys, ints and floats kept apart."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(obj: Any) -> str:
    """sha256 of the canonical JSON of obj (attrs objects are unstructured first)."""
    return hashlib.sha256(canonical_json(unstructure(obj)).encode()).hexdigest()
