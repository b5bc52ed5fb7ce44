"""The one kernel converter, and loading of task files with errors that name file and JSON path."""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn
from cattrs.preconf.json import make_converter
from cattrs.v import format_exception

from bench_kernel.conversation.messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from bench_kernel.errors import TaskFileError
from bench_kernel.tasks.extensions import TaskVocabulary, extract
from bench_kernel.tasks.schema import RewardRule, StructuredUserInstructions, Task

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

    rule_from_dict = make_dict_structure_fn(RewardRule, conv, _cattrs_forbid_extra_keys=True)

    def structure_rule(obj: Any, _: Any) -> RewardRule:
        return RewardRule(name=obj) if isinstance(obj, str) else rule_from_dict(obj, RewardRule)

    conv.register_structure_hook(RewardRule, structure_rule)
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
        return cattrs.transform_error(exc, path=root, format_exception=_say_why)
    return [f"{exc} @ {root}"]


def _say_why(exc: BaseException, type_: Any) -> str:
    # cattrs says only "invalid value" for a validator's refusal; its reason is what the user needs.
    text = format_exception(exc, type_)
    if text == "invalid value" and str(exc):
        return f"invalid value: {exc}"
    return text


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


def load_tasks(path: Path, vocabulary: TaskVocabulary | None = None) -> list[Task]:
    """Load a task file: a JSON array of tasks, or an object with a 'tasks' array; plugin fields go to extensions."""
    data = read_json(path)
    root = "$"
    if isinstance(data, dict) and "tasks" in data:
        data, root = data["tasks"], "$.tasks"
    if not isinstance(data, list):
        raise TaskFileError(str(path), [f"expected a list of tasks @ {root}"])
    return structure_tasks(data, vocabulary, source=str(path), root=root)


def structure_tasks(data: list[Any], vocabulary: TaskVocabulary | None = None, *, source: str, root: str = "$") -> list[Task]:
    """Structure task objects (already parsed JSON), handing plugin-owned fields to the vocabulary's extensions."""
    path = source
    vocabulary = vocabulary or TaskVocabulary()
    tasks: list[Task] = []
    problems: list[str] = []
    for i, item in enumerate(data):
        try:
            task = _structure_task(item, vocabulary, source=path, root=f"{root}[{i}]")
        except TaskFileError as exc:
            problems += [_with_owner(p, vocabulary) for p in exc.problems]
            continue
        problems += _unknown_names(task, vocabulary, f"{root}[{i}]")
        tasks.append(task)
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


# One encoder for every call: json.dumps would build a new one each time (the store calls this per message).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def canonical_json(obj: Any) -> str:
    """Deterministic compact JSON: sorted keys, ints and floats kept apart."""
    return _CANONICAL.encode(obj)


def content_hash(obj: Any) -> str:
    """sha256 of the canonical JSON of obj (attrs objects are unstructured first)."""
    return hashlib.sha256(canonical_json(unstructure(obj)).encode()).hexdigest()


class _MillisecondClock:
    """ISO-8601 UTC text of the current millisecond, formatted once per millisecond (every message is stamped)."""

    def __init__(self) -> None:
        self.ms = -1
        self.text = ""

    def now(self) -> str:
        ms = time.time_ns() // 1_000_000
        if ms != self.ms:
            seconds, millis = divmod(ms, 1000)
            self.ms, self.text = ms, f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.gmtime(seconds))}.{millis:03d}+00:00"
        return self.text


_CLOCK = _MillisecondClock()


def utc_now() -> str:
    """The current UTC time, ISO-8601 with milliseconds (as datetime's isoformat writes it)."""
    return _CLOCK.now()
