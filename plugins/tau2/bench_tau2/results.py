"""tau2-bench results files: export one of our runs in their format, import theirs and re-score it offline."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import json
import re
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import (
    AssistantMessage,
    BenchError,
    Check,
    ConfigError,
    ConversationResult,
    DomainData,
    EventLog,
    Judge,
    JudgeRequest,
    Message,
    Metric,
    MetricInputs,
    MetricValue,
    PluginSet,
    RewardInfo,
    RunConfig,
    Store,
    SystemMessage,
    Task,
    TaskFileError,
    TaskVocabulary,
    TerminationReason,
    ToolCall,
    ToolMessage,
    UserMessage,
    canonical_json,
    collect,
    component_values,
    converter,
    evaluate,
    get_logger,
    get_plugin_manager,
    load_domain,
    read_json,
    replay_gold,
    replay_trajectory,
    score_metrics,
    structure,
    structure_tasks,
    task_vocabulary,
    unstructure,
    utc_now,
)

log = get_logger()
_ROLE_TYPES: dict[str, type] = {"system": SystemMessage, "assistant": AssistantMessage, "user": UserMessage, "tool": ToolMessage}


# --------------------------------------------------------------------------- export


def export_run(store: Store, run_id: str, plugins: PluginSet | None = None) -> dict[str, Any]:
    """One of our runs as a tau2 results document (agent arm only)."""
    run = store.run(run_id)
    assert run is not None
    config = run.config
    data = load_domain(collect(plugins or get_plugin_manager(config.get("plugins"))), _domain_config(config))
    rows = [r for r in store.conversations(run_id) if r["arm"] == "agent"]
    tasks = {t.id: t for t in data.tasks}
    return {
        "timestamp": run.created_utc,
        "info": _info(config, data),
        "tasks": [unstructure(tasks[t]) for t in dict.fromkeys(r["task_id"] for r in rows) if t in tasks],
        "simulations": [_simulation(store, r, data, tasks.get(r["task_id"]), solo=config.get("mode") == "no-user") for r in rows],
    }


def _producer() -> str:
    """What tau2's `info.git_commit` (a required string) holds in our files: the kernel's distribution and version."""
    try:
        return f"bench-kernel=={importlib.metadata.version('bench-kernel')}"
    except importlib.metadata.PackageNotFoundError:
        return "bench-kernel"


def _domain_config(config: dict[str, Any]) -> RunConfig:
    return RunConfig(domain=config.get("domain"), data_dir=config.get("data_dir"), tasks_file=config.get("tasks_file"),
                     split=config.get("split"))


def _info(config: dict[str, Any], data: DomainData) -> dict[str, Any]:
    models = config.get("models", {})
    return {
        "git_commit": _producer(), "num_trials": config.get("trials"), "max_steps": config.get("max_steps"),
        "max_errors": config.get("max_errors"), "seed": config.get("seed"),
        "user_info": {"implementation": config.get("user"), "llm": models.get("user", {}).get("model"),
                      "llm_args": models.get("user", {}).get("sampling", {}), "global_simulation_guidelines": None},
        "agent_info": {"implementation": config.get("agent"), "llm": models.get("agent", {}).get("model"),
                       "llm_args": models.get("agent", {}).get("sampling", {})},
        "environment_info": {"domain_name": data.name, "policy": data.policy, "tool_defs": None},
    }


def _simulation(store: Store, row: dict[str, Any], data: DomainData, task: Task | None, *, solo: bool) -> dict[str, Any]:
    messages = [json.loads(m["message_json"]) for m in store.messages(row["id"])]
    final = _final_state(data, task, [m["message_json"] for m in store.messages(row["id"])], solo=solo)
    for idx, message in enumerate(messages):
        message["turn_idx"] = idx
    reward_info = converter.structure(json.loads(row["reward_info_json"]), RewardInfo) if row["reward_info_json"] else None
    return {
        "id": hashlib.sha256(row["id"].encode()).hexdigest()[:32], "task_id": row["task_id"], "timestamp": row["ended_utc"],
        "start_time": row["started_utc"], "end_time": row["ended_utc"], "duration": (row["duration_ms"] or 0) / 1000,
        "termination_reason": row["termination_reason"], "agent_cost": row["agent_cost"], "user_cost": row["user_cost"],
        "reward_info": _tau2_reward_info(reward_info, task), "messages": messages, "trial": row["trial"], "seed": row["seed"],
        "final_state": final,
    }


def _final_state(data: DomainData, task: Task | None, message_json: list[str], *, solo: bool) -> dict[str, Any] | None:
    """The conversation's final databases (a bench addition to tau2's format): rebuilt by replaying its tool calls.

    Dual-control domains carry the user's side too (telecom's phone): its hash and its content.
    """
    if task is None:
        return None
    messages: list[Message] = [converter.structure(json.loads(m), Message) for m in message_json]  # type: ignore[arg-type]
    env = replay_trajectory(data, task, messages, solo=solo)
    agent_state, user_state = env.agent_tools.state, env.user_tools.state if env.user_tools is not None else None
    return {
        "db_hash": data.reference_hash(agent_state) if data.reference_hash else agent_state.content_hash(),
        "user_db_hash": (None if user_state is None else
                         data.reference_user_hash(user_state) if data.reference_user_hash else user_state.content_hash()),
        "user_db": None if user_state is None else user_state.to_dict(),
    }


def _tau2_reward_info(info: RewardInfo | None, task: Task | None) -> dict[str, Any] | None:
    """Our reward info in tau2's shape: each action and env-assertion check carries the task's own object, as tau2 does."""
    if info is None:
        return None
    by = {c.component: c for c in info.components}
    db = by.get("DB")
    actions = task.gold_actions() if task is not None else []
    assertions = (task.evaluation_criteria.env_assertions or []) if task is not None and task.evaluation_criteria else []
    return {
        "reward": info.reward,
        "db_check": {"db_match": db.score == 1.0, "db_reward": db.score} if db and db.score is not None else None,
        "env_assertions": [{"env_assertion": unstructure(a), "met": c.met, "reward": float(c.met)}
                           for a, c in _paired(assertions, _checks(by, "ENV_ASSERTION"), "env assertion")],
        "action_checks": [{"action": unstructure(a), "action_match": c.met, "action_reward": float(c.met)}
                          for a, c in _paired(actions, _checks(by, "ACTION"), "action")],
        "communicate_checks": [{"info": c.subject, "met": c.met, "justification": c.detail} for c in _checks(by, "COMMUNICATE")],
        "nl_assertions": [{"nl_assertion": c.subject, "met": c.met, "justification": c.detail} for c in _checks(by, "NL_ASSERTION")],
        "reward_basis": list(info.reward_basis),
        "reward_breakdown": {b: by[b].score for b in info.reward_basis if b in by},
        "info": {"note": info.note} if info.note else None,
    }


def _paired(objects: list[Any], checks: list[Any], what: str) -> list[tuple[Any, Any]]:
    """The evaluator checks a task's actions (and env assertions) in their order: pair each check with its object."""
    if len(objects) != len(checks):
        raise ConfigError(f"the stored {what} checks ({len(checks)}) do not match the task's {what}s ({len(objects)}): "
                          "was the run made with another version of the task?")
    return list(zip(objects, checks, strict=True))


def _checks(by: dict[str, Any], name: str) -> list[Any]:
    return list(by[name].checks) if name in by else []


# --------------------------------------------------------------------------- import


TASK_SOURCES = ("embedded", "current")
"""Which version of a task grades an import: the file's own (tau2's default) or the domain's current one."""


@attrs.frozen(kw_only=True)
class ImportSummary:
    """What an import did, and how far our rewards agree with the file's."""

    run_id: str
    domain: str
    conversations: int
    agreeing: int
    disagreeing: list[str]
    infrastructure_errors: int = 0
    """Simulations the file stores as infrastructure errors: kept as such, neither graded nor compared."""
    tasks: str = "embedded"
    differing_tasks: list[str] = attrs.field(factory=list)
    """Ids of tasks whose embedded and current versions differ."""

    @property
    def compared(self) -> int:
        """Simulations whose reward was compared with the file's."""
        return self.conversations - self.infrastructure_errors


@attrs.frozen(kw_only=True)
class _Simulation:
    """One simulation of the file, checked enough to name it in errors."""

    index: int
    raw: dict[str, Any]
    task_id: str
    trial: int

    @property
    def where(self) -> str:
        """How errors name it: its id, task and JSON path."""
        sim_id = self.raw.get("id")
        return f"simulation {sim_id!r} (task {self.task_id!r}) @ $.simulations[{self.index}]"

    @property
    def theirs(self) -> float | None:
        """The reward the file recorded."""
        info = self.raw.get("reward_info")
        reward = info.get("reward") if isinstance(info, dict) else None
        return float(reward) if isinstance(reward, int | float) and not isinstance(reward, bool) else None

    @property
    def infrastructure_error(self) -> bool:
        """Stored by its harness as an infrastructure failure: nothing to grade."""
        return self.raw.get("termination_reason") == TerminationReason.INFRASTRUCTURE_ERROR.value


def import_results(path: Path, store_path: Path | str, *, plugins: PluginSet | None = None, data_dir: str | None = None,
                   judge: str | None = None, tasks: str = "embedded", run_id: str | None = None) -> ImportSummary:
    """Load a tau2 results file, replay every conversation's tool calls on our domain and re-score it.

    `tasks` says which version of a task grades it when the file embeds one and the domain has one too:
    "embedded" (the file's, as tau2's own re-evaluation does) or "current" (the domain's).
    """
    if tasks not in TASK_SOURCES:
        raise ConfigError(f"--tasks must be one of {', '.join(TASK_SOURCES)}, not {tasks!r}")
    document = read_json(path)
    if not isinstance(document, dict) or not isinstance(document.get("simulations"), list):
        raise ConfigError(f"{path}: not a tau2 results file (no 'simulations' list @ $)")
    simulations = [_checked_simulation(raw, i, path) for i, raw in enumerate(document["simulations"])]
    registry = collect(plugins or get_plugin_manager())
    data = load_domain(registry, RunConfig(domain=_domain_name(document, path), data_dir=data_dir))
    graded, differing = _tasks(document, data, path, task_vocabulary(registry), prefer=tasks)
    judge_obj: Judge | None = registry.get("judge", judge) if judge else None
    metrics = [(registry.origin("metric", n), m) for n, m in registry.components.get("metric", {}).items()]
    config = {"imported_from": str(path), "domain": data.name, "tasks": tasks, "data_dir": data_dir,
              "agent": _implementation(document, "agent_info"), "user": _implementation(document, "user_info"),
              "trials": (document.get("info") or {}).get("num_trials"), "judge": judge_obj.name if judge_obj else None}
    run_id = run_id or "import-" + hashlib.sha256(path.read_bytes() + canonical_json(config).encode()).hexdigest()[:10]
    store = Store(store_path, registry.migrations)
    try:
        asyncio.run(_import(run_id, config, document, path, simulations, data, graded, judge_obj, store, metrics))
        return _summary(store, run_id, data.name, simulations, tasks, differing)
    finally:
        store.close()


def _checked_simulation(raw: Any, index: int, path: Path) -> _Simulation:
    where = f"$.simulations[{index}]"
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a simulation must be an object, not {type(raw).__name__} @ {where}")
    task_id = raw.get("task_id")
    if not isinstance(task_id, str) or not task_id:
        raise ConfigError(f"{path}: simulation {raw.get('id')!r} has no task_id @ {where}.task_id")
    trial = raw.get("trial") or 0
    if not _whole(trial, 0, MAX_TRIAL):
        raise ConfigError(f"{path}: simulation {raw.get('id')!r}: trial must be a whole number from 0 to {MAX_TRIAL}, "
                          f"not {trial!r} @ {where}.trial")
    seed = raw.get("seed")
    if seed is not None and not _whole(seed, -SQLITE_INT, SQLITE_INT - 1):
        raise ConfigError(f"{path}: simulation {raw.get('id')!r}: seed must be a whole number that fits 64 bits, "
                          f"not {seed!r} @ {where}.seed")
    if not isinstance(raw.get("messages") or [], list):
        raise ConfigError(f"{path}: simulation {raw.get('id')!r}: messages must be a list @ {where}.messages")
    return _Simulation(index=index, raw=raw, task_id=task_id, trial=trial)


MAX_TRIAL = 2**31 - 1
SQLITE_INT = 2**63
"""SQLite stores integers in 64 bits: a larger number in a file is an error, not an overflow."""


def _whole(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _domain_name(document: dict[str, Any], path: Path) -> str:
    info = document.get("info")
    environment = info.get("environment_info") if isinstance(info, dict) else None
    name = environment.get("domain_name") if isinstance(environment, dict) else None
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{path}: the file names no domain @ $.info.environment_info.domain_name")
    return name


def _implementation(document: dict[str, Any], key: str) -> Any:
    part = (document.get("info") or {}).get(key)
    return part.get("implementation") if isinstance(part, dict) else None


def _tasks(document: dict[str, Any], data: DomainData, path: Path, vocabulary: TaskVocabulary, *,
           prefer: str) -> tuple[dict[str, Task], list[str]]:
    """The tasks that grade the import, and the ids whose embedded and current versions differ.

    Plugin-owned fields such as goal_shifts are parsed by their plugins; a task only one side has is used as it is.
    """
    raw = document.get("tasks") or []
    if not isinstance(raw, list) or not all(isinstance(t, dict) for t in raw):
        raise ConfigError(f"{path}: 'tasks' must be a list of task objects @ $.tasks")
    embedded = {t.id: t for t in structure_tasks([_known_keys(t, Task) for t in raw], vocabulary, source=str(path), root="$.tasks")}
    current = {t.id: t for t in data.tasks}
    differing = sorted((i for i in embedded.keys() & current.keys() if embedded[i] != current[i]), key=_natural)
    first, second = (embedded, current) if prefer == "embedded" else (current, embedded)
    return {**second, **first}, differing


def _natural(task_id: str) -> list[tuple[int, int | str]]:
    """Sort key putting "2" before "12"."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in re.split(r"(\d+)", task_id) if part]


def _known_keys(raw: dict[str, Any], cls: type) -> dict[str, Any]:
    # Newer tau2 versions add fields; an import keeps ours and drops the rest (tau2's own loader does the same).
    names = {f.name for f in attrs.fields(cls)}
    return {k: v for k, v in raw.items() if k in names}


async def _import(run_id: str, config: dict[str, Any], document: dict[str, Any], path: Path, simulations: list[_Simulation],
                  data: DomainData, tasks: dict[str, Task], judge: Judge | None, store: Store,
                  metrics: list[tuple[str, Metric]]) -> None:
    store.begin_run(run_id, config, hashlib.sha256(canonical_json(config).encode()).hexdigest(), [],
                    {data.name: data.content_hash()}, _seed(document.get("info") or {}))
    done = store.finished_units(run_id)
    for sim in simulations:
        if ("agent", sim.task_id, sim.trial) in done:
            continue
        try:
            result, inputs, used = await _rescore(run_id, sim, tasks, data, judge)
            values, rows = await score_metrics(metrics, result, inputs, judge=used) if inputs else ([], [])
        except (BenchError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ConfigError(f"{path}: {sim.where}: {_reason(exc)}") from exc
        store.save_conversation(result, [*_values(result, sim.theirs), *values], plugin_rows=rows)
        done.add(("agent", sim.task_id, sim.trial))
    store.set_status(run_id, "complete")


def _reason(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, BenchError) else f"{type(exc).__name__}: {exc}"


def _summary(store: Store, run_id: str, domain: str, simulations: list[_Simulation], tasks: str,
             differing: list[str]) -> ImportSummary:
    """Agreement between the stored rewards and the file's, whether stored by this import or an earlier one."""
    ours = {(r["task_id"], r["trial"]): r["reward"] for r in store.conversations(run_id) if r["arm"] == "agent"}
    agreeing, disagreeing, infrastructure = 0, [], 0
    for sim in simulations:
        if sim.infrastructure_error:
            infrastructure += 1
            continue
        reward = ours.get((sim.task_id, sim.trial))
        if sim.theirs is not None and reward is not None and abs(sim.theirs - reward) < 1e-6:
            agreeing += 1
        else:
            disagreeing.append(f"{sim.task_id}/{sim.trial}: theirs {sim.theirs}, ours {reward}")
    return ImportSummary(run_id=run_id, domain=domain, conversations=len(simulations), agreeing=agreeing,
                         disagreeing=disagreeing, infrastructure_errors=infrastructure, tasks=tasks, differing_tasks=differing)


async def _rescore(run_id: str, sim: _Simulation, tasks: dict[str, Task], data: DomainData,
                   judge: Judge | None) -> tuple[ConversationResult, MetricInputs | None, Judge | None]:
    if sim.task_id not in tasks:
        raise ConfigError(f"the task is in neither the file nor domain {data.name!r}")
    task = tasks[sim.task_id]
    raw = sim.raw
    messages = [_message(m, f"$.simulations[{sim.index}].messages[{j}]") for j, m in enumerate(raw.get("messages") or [])]
    common: dict[str, Any] = {
        "run_id": run_id, "arm": "agent", "task_id": sim.task_id, "trial": sim.trial, "seed": _seed(raw), "agent": "imported",
        "user": "imported", "messages": messages, "started_utc": str(raw.get("start_time") or utc_now()),
        "ended_utc": str(raw.get("end_time") or utc_now()), "duration_ms": _duration_ms(raw.get("duration")),
        "agent_cost": _number(raw.get("agent_cost")), "user_cost": _number(raw.get("user_cost")),
        "attributes": {**task.attributes, **({"simulation_id": str(raw["id"])} if raw.get("id") else {})},
    }
    if sim.infrastructure_error:
        # Their harness failed, not their agent: a 0.0 here would count a failure of theirs against the agent.
        return ConversationResult(termination_reason=TerminationReason.INFRASTRUCTURE_ERROR, reward_info=None,
                                  error="imported: stored as an infrastructure error", **common), None, None
    termination = _termination(raw.get("termination_reason"))
    env = replay_trajectory(data, task, messages)
    used = judge or ImportedVerdicts.of(raw)
    gold = replay_gold(data, task)
    reward_info = await evaluate(task, messages, termination, env, gold, judge=used, seed=_seed(raw))
    result = ConversationResult(termination_reason=termination, reward_info=reward_info, **common)
    return result, MetricInputs(task=task, events=EventLog(), final_env=env, gold=gold), used


def _seed(raw: dict[str, Any]) -> int:
    seed: Any = raw.get("seed")
    return int(seed) if _whole(seed, -SQLITE_INT, SQLITE_INT - 1) else 0


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _duration_ms(value: Any) -> int:
    seconds = _number(value)
    # A duration longer than a year is no duration: kept out of the store rather than overflowing it.
    return int(1000 * seconds) if seconds is not None and 0 <= seconds < 3.2e7 else 0


@attrs.define(kw_only=True)
class ImportedVerdicts(Judge):
    """The NL-assertion verdicts a results file recorded, standing in for a judge when none is configured."""

    name: str = "imported"
    verdicts: dict[str, tuple[bool, str]] = attrs.field(factory=dict)

    @classmethod
    def of(cls, sim: dict[str, Any]) -> ImportedVerdicts | None:
        """The simulation's recorded verdicts, or None when it has none."""
        given = sim.get("reward_info")
        info: dict[str, Any] = given if isinstance(given, dict) else {}
        found = info.get("nl_assertions") or ((info.get("info") or {}).get("tsr_details") or {}).get("nl_assertion_details") or []
        verdicts = {v["nl_assertion"]: (bool(v.get("met")), str(v.get("justification") or "")) for v in found
                    if isinstance(v, dict) and "nl_assertion" in v}
        return cls(verdicts=verdicts) if verdicts else None

    async def judge(self, request: JudgeRequest) -> list[Check]:
        """The recorded verdict of each assertion, marked as imported (an assertion the file did not judge is an error)."""
        missing = [a for a in request.assertions if a not in self.verdicts]
        if missing:
            raise ConfigError(f"the results file has no verdict for: {missing[0]!r}")
        return [Check(subject=a, met=self.verdicts[a][0], detail=f"imported verdict: {self.verdicts[a][1]}") for a in request.assertions]


def _message(raw: Any, root: str) -> Message:
    if not isinstance(raw, dict):
        raise ConfigError(f"a message must be an object @ {root}")
    cls = _ROLE_TYPES.get(raw.get("role", ""))
    if cls is None:
        raise ConfigError(f"unknown message role {raw.get('role')!r} @ {root}")
    for key in ("turn_idx", "latency_ms"):
        if raw.get(key) is not None and not _whole(raw[key], -SQLITE_INT, SQLITE_INT - 1):
            raise ConfigError(f"{key} must be a whole number that fits 64 bits, not {raw[key]!r} @ {root}.{key}")
    data = _known_keys(raw, cls)
    calls = data.get("tool_calls")
    if calls:
        if not isinstance(calls, list) or not all(isinstance(c, dict) for c in calls):
            raise ConfigError(f"tool_calls must be a list of objects @ {root}.tool_calls")
        data["tool_calls"] = [_known_keys(c, ToolCall) for c in calls]
    if not isinstance(data.get("raw_data"), dict):
        data.pop("raw_data", None)
    try:
        return structure(data, cls, source="message", root=root)
    except TaskFileError as exc:
        raise ConfigError("; ".join(exc.problems)) from exc


def _termination(value: str | None) -> TerminationReason:
    try:
        return TerminationReason(value)
    except ValueError:
        # Reasons our harness does not produce (e.g. context_window_exceeded) end a conversation as an error.
        return TerminationReason.AGENT_ERROR


def _values(result: ConversationResult, theirs: float | None) -> list[MetricValue]:
    return [*component_values(result), MetricValue(metric="tau2.reward", plugin="bench-tau2", value=theirs)]
