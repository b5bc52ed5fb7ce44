"""Reading a third-party tau2 results file as tolerantly as tau2's own loader, naming whatever bench cannot use.

The rule: what the seed's own loader or leaderboard accepts, bench imports; what bench cannot interpret
it names (file, JSON path, why) and skips, keeping the rest. Covered here: tau2's two storage formats
(one JSON document, or `results.json` beside a `simulations/` folder), where the domain is named,
embedded tasks (AgentChangeBench's null `reward_basis`, repeated ids, unreadable tasks), simulations
(missing or repeated trials, full-duplex ticks: `ticks.py`) and messages (fields of newer tau2 versions, grouped
tool results, free-form usage). bench's own inputs (task files, run files, options) stay strict.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import (
    AssistantMessage,
    ConfigError,
    Message,
    SystemMessage,
    Task,
    TaskFileError,
    TaskVocabulary,
    ToolCall,
    ToolMessage,
    UserMessage,
    read_json,
    structure,
    structure_tasks,
)

_ROLE_TYPES: dict[str, type] = {"system": SystemMessage, "assistant": AssistantMessage, "user": UserMessage, "tool": ToolMessage}
MAX_TRIAL = 2**31 - 1
SQLITE_INT = 2**63
"""SQLite stores integers in 64 bits: a larger number in a file is an error, not an overflow."""
SIMULATIONS_DIR = "simulations"
"""tau2's directory format: results.json holds the metadata, this sibling folder one file per simulation."""


@attrs.frozen(kw_only=True)
class Skipped:
    """A simulation bench could not import: where it is and why."""

    where: str
    reason: str

    def __str__(self) -> str:
        return f"{self.where}: {self.reason}"


@attrs.frozen(kw_only=True)
class Simulation:
    """One simulation of the file, checked enough to name it in warnings."""

    source: Path
    root: str
    """Its JSON path in `source`: `$.simulations[3]`, or `$` for a file of the directory format."""
    raw: dict[str, Any]
    task_id: str
    trial: int

    @property
    def where(self) -> str:
        """How warnings name it: its file, id, task and JSON path."""
        return f"{self.source}: simulation {self.raw.get('id')!r} (task {self.task_id!r}) @ {self.root}"

    @property
    def theirs(self) -> float | None:
        """The reward the file recorded."""
        info = self.raw.get("reward_info")
        return number(info.get("reward")) if isinstance(info, dict) else None


@attrs.frozen(kw_only=True)
class ResultsFile:
    """A results file as read: its metadata, the simulations bench can use and those it skipped."""

    path: Path
    """The file the user named (results.json of a directory named instead)."""
    document: dict[str, Any]
    simulations: list[Simulation]
    skipped: list[Skipped]
    notes: list[str]
    """What bench read differently from the file's words (e.g. trial numbers it gave), for the summary."""


def read_results(path: Path) -> ResultsFile:
    """Read a results file in either of tau2's formats; a simulation bench cannot use is skipped and named."""
    path = path / "results.json" if path.is_dir() else path
    document = read_json(path)
    if not isinstance(document, dict):
        raise ConfigError(f"{path}: not a tau2 results file (no 'simulations' list @ $)")
    folder = path.parent / SIMULATIONS_DIR
    raws: list[tuple[Path, str, Any]]
    skipped: list[Skipped] = []
    if isinstance(document.get("simulations"), list) and (document["simulations"] or not folder.is_dir()):
        raws = [(path, f"$.simulations[{i}]", raw) for i, raw in enumerate(document["simulations"])]
    elif folder.is_dir():
        raws, skipped = _directory_simulations(path, document, folder)
    else:
        raise ConfigError(f"{path}: not a tau2 results file (no 'simulations' list @ $, no {SIMULATIONS_DIR}/ folder beside it)")
    simulations, more, notes = _checked_simulations(raws)
    return ResultsFile(path=path, document=document, simulations=simulations, skipped=skipped + more, notes=notes)


def _directory_simulations(path: Path, document: dict[str, Any], folder: Path) -> tuple[list[tuple[Path, str, Any]], list[Skipped]]:
    """tau2's directory format: one file per simulation, in file-name order as tau2 loads them; the index checked."""
    raws: list[tuple[Path, str, Any]] = []
    skipped: list[Skipped] = []
    for file in sorted(folder.glob("*.json")):
        try:
            raws.append((file, "$", read_json(file)))
        except ConfigError as exc:
            skipped.append(Skipped(where=f"{file}: simulation @ $", reason=str(exc).removeprefix(f"{file}: ")))
    index = document.get("simulation_index")
    if isinstance(index, list):
        on_disk = {file.stem for file in folder.glob("*.json")}
        for i, entry in enumerate(index):
            if isinstance(entry, dict) and str(entry.get("id")) not in on_disk:
                skipped.append(
                    Skipped(
                        where=f"{path}: simulation {entry.get('id')!r} (task {entry.get('task_id')!r}) @ $.simulation_index[{i}]",
                        reason=f"no file {folder / str(entry.get('id'))}.json",
                    )
                )
    return raws, skipped


def _checked_simulations(raws: list[tuple[Path, str, Any]]) -> tuple[list[Simulation], list[Skipped], list[str]]:
    """The simulations bench can store, one per task and trial; a simulation without a trial takes its task's next free one."""
    checked: list[tuple[Path, str, dict[str, Any], str, int | None]] = []
    skipped: list[Skipped] = []
    for source, root, raw in raws:
        try:
            checked.append((source, root, raw, *_task_and_trial(raw, root)))
        except ConfigError as exc:
            task = raw.get("task_id") if isinstance(raw, dict) else None
            named = f" (task {task!r})" if isinstance(task, str) and task else ""
            skipped.append(Skipped(where=f"{source}: simulation {_id(raw)!r}{named} @ {root}", reason=str(exc)))
    taken: dict[tuple[str, int], str] = {}
    given = 0
    for source, root, _raw, task_id, trial in checked:
        if trial is not None:
            taken.setdefault((task_id, trial), f"{source} @ {root}")
    simulations: list[Simulation] = []
    for source, root, raw, task_id, trial in checked:
        sim = Simulation(source=source, root=root, raw=raw, task_id=task_id, trial=0)
        if trial is None:
            trial = next(n for n in range(MAX_TRIAL) if (task_id, n) not in taken)
            taken[(task_id, trial)] = f"{source} @ {root}"
            given += 1
        elif taken[(task_id, trial)] != f"{source} @ {root}":
            skipped.append(
                Skipped(
                    where=sim.where,
                    reason=f"repeats task {task_id!r} trial {trial} of {taken[(task_id, trial)]} (bench stores one conversation per task and trial)",
                )
            )
            continue
        simulations.append(attrs.evolve(sim, trial=trial))
    notes = [f"{given} simulation(s) have no trial number: each took its task's next free trial"] if given else []
    return simulations, skipped, notes


def _id(raw: Any) -> Any:
    return raw.get("id") if isinstance(raw, dict) else None


def _task_and_trial(raw: Any, root: str) -> tuple[str, int | None]:
    if not isinstance(raw, dict):
        raise ConfigError(f"a simulation must be an object, not {type(raw).__name__}")
    task_id = raw.get("task_id")
    if not isinstance(task_id, str) or not task_id:
        raise ConfigError(f"no task_id @ {root}.task_id")
    trial = raw.get("trial")
    if trial is not None and not whole(trial, 0, MAX_TRIAL):
        raise ConfigError(f"trial must be a whole number from 0 to {MAX_TRIAL}, not {trial!r} @ {root}.trial")
    seed = raw.get("seed")
    if seed is not None and not whole(seed, -SQLITE_INT, SQLITE_INT - 1):
        raise ConfigError(f"seed must be a whole number that fits 64 bits, not {seed!r} @ {root}.seed")
    if raw.get("messages") is None and raw.get("ticks") is not None and not isinstance(raw["ticks"], list):
        raise ConfigError(f"ticks must be a list @ {root}.ticks")
    if not isinstance(raw.get("messages") or [], list):
        raise ConfigError(f"messages must be a list @ {root}.messages")
    return task_id, trial


def whole(value: Any, low: int, high: int) -> bool:
    """An int (not a bool) from low to high."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def number(value: Any) -> float | None:
    """A JSON number as a float, else None."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


# --------------------------------------------------------------------------- domain


def domain_name(results: ResultsFile, loaded: list[str]) -> str:
    """The file's domain: tau2's `info.environment_info.domain_name`, `info.domain`, the leaderboard
    submission's `trajectory_files` entry for this file, or else the only domain plugin loaded."""
    info = results.document.get("info")
    info = info if isinstance(info, dict) else {}
    environment = info.get("environment_info")
    for name in (
        (environment or {}).get("domain_name") if isinstance(environment, dict) else None,
        info.get("domain"),
        _submission_domain(results.path),
    ):
        if isinstance(name, str) and name:
            return name
    if len(loaded) == 1:
        return loaded[0]
    raise ConfigError(
        f"{results.path}: the file names no domain (@ $.info.environment_info.domain_name or $.info.domain, "
        f"nor a leaderboard submission.json beside it); load exactly one domain plugin with --plugin "
        f"(loaded: {', '.join(loaded) or 'none'})"
    )


def _submission_domain(path: Path) -> str | None:
    """A leaderboard submission (`<submission>/trajectories/<file>`) maps domains to its files in submission.json."""
    for folder in (path.parent, *path.parents[:2]):
        submission = folder / "submission.json"
        if submission.is_file():
            try:
                files = read_json(submission).get("trajectory_files")
            except (ConfigError, AttributeError):
                return None
            names = {path.name, path.parent.name}
            found = [d for d, f in files.items() if isinstance(f, str) and Path(f).name in names] if isinstance(files, dict) else []
            return found[0] if len(found) == 1 else None
    return None


# --------------------------------------------------------------------------- tasks


@attrs.frozen(kw_only=True)
class EmbeddedTasks:
    """The tasks a file embeds, those bench could not read (by id, with why), and notes for the summary."""

    tasks: dict[str, Task]
    unreadable: dict[str, str]
    notes: list[str]


def embedded_tasks(document: dict[str, Any], path: Path, vocabulary: TaskVocabulary) -> EmbeddedTasks:
    """Each embedded task read on its own, as tau2 reads them: a repeated id keeps the last, a null reward_basis is empty."""
    raw = document.get("tasks") or []
    if not isinstance(raw, list):
        raise ConfigError(f"{path}: 'tasks' must be a list of task objects @ $.tasks")
    tasks: dict[str, Task] = {}
    unreadable: dict[str, str] = {}
    first: dict[str, int] = {}
    repeated, null_basis = [], 0
    for i, item in enumerate(raw):
        root = f"$.tasks[{i}]"
        task_id = item.get("id") if isinstance(item, dict) else None
        key = task_id if isinstance(task_id, str) else root
        if key in first:
            repeated.append(f"{key!r} @ $.tasks[{first[key]}] and {root}")
        first.setdefault(key, i)
        try:
            # One task at a time, so one unreadable task costs only its own simulations.
            [task] = structure_tasks([_task_data(item, root)], vocabulary, source=str(path), root=root)
        except ConfigError as exc:
            problems = exc.problems if isinstance(exc, TaskFileError) else [str(exc)]
            unreadable[key] = "its embedded task could not be read: " + "; ".join(p.replace(f"{root}[0]", root) for p in problems)
            tasks.pop(key, None)
            continue
        null_basis += _has_null_basis(item)
        tasks[task.id] = task
        unreadable.pop(task.id, None)
    notes = [f"task id repeated in the file, the last one used (as tau2 does): {', '.join(repeated)}"] if repeated else []
    if null_basis:
        notes.append(
            f"{null_basis} task(s) have reward_basis null (AgentChangeBench: deprecated): graded with an empty "
            "basis, so the reward is 1.0 unless the conversation ended prematurely, as their evaluator does"
        )
    return EmbeddedTasks(tasks=tasks, unreadable=unreadable, notes=notes)


def _has_null_basis(item: Any) -> bool:
    criteria = item.get("evaluation_criteria") if isinstance(item, dict) else None
    return isinstance(criteria, dict) and "reward_basis" in criteria and criteria["reward_basis"] is None


def _task_data(item: Any, root: str) -> Any:
    """A task as bench reads it: fields of other tau2 versions dropped (tau2 ignores unknown fields too),
    AgentChangeBench's null reward_basis as the empty basis its evaluator uses (`reward_basis or []`)."""
    if not isinstance(item, dict):
        return item
    data = known_keys(item, Task)
    criteria = data.get("evaluation_criteria")
    if isinstance(criteria, dict) and "reward_basis" in criteria and criteria["reward_basis"] is None:
        data["evaluation_criteria"] = {**criteria, "reward_basis": []}
    state = data.get("initial_state")
    history = state.get("message_history") if isinstance(state, dict) else None
    if isinstance(state, dict) and isinstance(history, list):
        data["initial_state"] = {
            **state,
            "message_history": [message_data(m, f"{root}.initial_state.message_history[{j}]") for j, m in enumerate(history)],
        }
    return data


def known_keys(raw: dict[str, Any], cls: type) -> dict[str, Any]:
    """The keys of raw that cls has: newer tau2 versions add fields, and tau2's own loader ignores unknown ones too."""
    names = {f.name for f in attrs.fields(cls)}
    return {k: v for k, v in raw.items() if k in names}


# --------------------------------------------------------------------------- messages


def messages(raw: list[Any], root: str) -> list[Message]:
    """A simulation's messages as bench's; tau2's grouped tool results (MultiToolMessage) become one message each."""
    found: list[Message] = []
    for j, item in enumerate(raw):
        where = f"{root}.messages[{j}]"
        group = item.get("tool_messages") if isinstance(item, dict) and item.get("role") == "tool" else None
        if isinstance(group, list):
            found += [message(m, f"{where}.tool_messages[{k}]") for k, m in enumerate(group)]
        else:
            found.append(message(item, where))
    return found


def message(raw: Any, root: str) -> Message:
    """One message; fields bench does not keep (audio, display text, AgentChangeBench's meta tags) dropped."""
    data = message_data(raw, root)
    try:
        return structure(data, _ROLE_TYPES[data["role"]], source="message", root=root)
    except TaskFileError as exc:
        raise ConfigError("; ".join(exc.problems)) from exc


def message_data(raw: Any, root: str) -> dict[str, Any]:
    """A message's JSON reduced to what bench keeps; a wrong role or an out-of-range number is an error naming its path."""
    if not isinstance(raw, dict):
        raise ConfigError(f"a message must be an object @ {root}")
    cls = _ROLE_TYPES.get(raw.get("role", ""))
    if cls is None:
        raise ConfigError(f"unknown message role {raw.get('role')!r} @ {root}")
    for key in ("turn_idx", "latency_ms"):
        if raw.get(key) is not None and not whole(raw[key], -SQLITE_INT, SQLITE_INT - 1):
            raise ConfigError(f"{key} must be a whole number that fits 64 bits, not {raw[key]!r} @ {root}.{key}")
    data = known_keys(raw, cls)
    calls = data.get("tool_calls")
    if calls:
        if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
            raise ConfigError(f"tool_calls must be a list of objects @ {root}.tool_calls")
        data["tool_calls"] = [known_keys(c, ToolCall) for c in calls]
    if not isinstance(data.get("raw_data"), dict):
        data.pop("raw_data", None)
    if "usage" in data:
        # tau2 stores whatever usage its provider reported; bench keeps the token counts.
        usage = data["usage"]
        counts = {k: v for k, v in usage.items() if whole(v, 0, SQLITE_INT - 1)} if isinstance(usage, dict) else {}
        data["usage"] = counts or None
    if "cost" in data and number(data["cost"]) is None:
        data["cost"] = None
    if data.get("timestamp") is not None and not isinstance(data["timestamp"], str):
        data["timestamp"] = None
    return data


# --------------------------------------------------------------------------- NL verdicts


def _words(text: str) -> str:
    return " ".join(re.findall(r"[0-9a-z]+", text.lower()))


def pair_verdicts(assertions: list[str], verdicts: list[tuple[str, bool, str]]) -> list[tuple[bool, str, str]] | str:
    """Each assertion's recorded verdict: (met, justification, how it was paired), or why one has none.

    tau2's judge echoes each assertion back and the file stores the echo, which an LLM may tidy (spaces,
    a stray quote). Exact text first, then the same words, then, when exactly as many verdicts as
    assertions are left, in order: AgentChangeBench scores the share of verdicts met without matching texts.
    """
    left = list(range(len(verdicts)))
    found: dict[int, tuple[bool, str, str]] = {}
    for how, key in (("", lambda s: s), (" (same words)", _words)):
        for i, assertion in enumerate(assertions):
            if i in found:
                continue
            match = next((j for j in left if key(verdicts[j][0]) == key(assertion)), None)
            if match is not None:
                left.remove(match)
                found[i] = (verdicts[match][1], verdicts[match][2], how)
    missing = [i for i in range(len(assertions)) if i not in found]
    if missing and len(missing) == len(left):
        for i, j in zip(missing, left, strict=True):
            found[i] = (verdicts[j][1], verdicts[j][2], f" (in order: the file's text is {verdicts[j][0]!r})")
        missing = []
    if missing:
        return f"the results file has no verdict for: {assertions[missing[0]]!r}"
    return [found[i] for i in range(len(assertions))]
