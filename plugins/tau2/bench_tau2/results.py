"""tau2-bench results files: export one of our runs in their format, import theirs and re-score it offline."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import json
from pathlib import Path
from typing import Any

import attrs
import structlog

from bench_kernel import (
    AssistantMessage,
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
    TaskVocabulary,
    TerminationReason,
    ToolCall,
    ToolMessage,
    UserMessage,
    collect,
    component_values,
    converter,
    evaluate,
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

log = structlog.get_logger()
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


@attrs.frozen(kw_only=True)
class ImportSummary:
    """What an import did, and how far our rewards agree with the file's."""

    run_id: str
    domain: str
    conversations: int
    agreeing: int
    disagreeing: list[str]


def import_results(path: Path, store_path: Path | str, *, plugins: PluginSet | None = None, data_dir: str | None = None,
                   judge: str | None = None) -> ImportSummary:
    """Load a tau2 results file, replay every conversation's tool calls on our domain and re-score it."""
    document = read_json(path)
    if not isinstance(document, dict) or "simulations" not in document:
        raise ConfigError(f"{path}: not a tau2 results file (no 'simulations' @ $)")
    registry = collect(plugins or get_plugin_manager())
    domain_name = (document.get("info") or {}).get("environment_info", {}).get("domain_name")
    data = load_domain(registry, RunConfig(domain=domain_name, data_dir=data_dir))
    tasks = _tasks(document, data, path, task_vocabulary(registry))
    judge_obj: Judge | None = registry.get("judge", judge) if judge else None
    metrics = [(registry.origin("metric", n), m) for n, m in registry.components.get("metric", {}).items()]
    store = Store(store_path, registry.migrations)
    try:
        return asyncio.run(_import(document, path, data, tasks, judge_obj, store, metrics))
    finally:
        store.close()


def _tasks(document: dict[str, Any], data: DomainData, path: Path, vocabulary: TaskVocabulary) -> dict[str, Task]:
    """The domain's tasks, plus the file's own (plugin-owned fields such as goal_shifts parsed by their plugins)."""
    tasks = {t.id: t for t in data.tasks}
    for i, raw in enumerate(document.get("tasks") or []):
        [task] = structure_tasks([_known_keys(raw, Task)], vocabulary, source=str(path), root=f"$.tasks[{i}]")
        tasks.setdefault(task.id, task)
    return tasks


def _known_keys(raw: dict[str, Any], cls: type) -> dict[str, Any]:
    # Newer tau2 versions add fields; an import keeps ours and drops the rest (tau2's own loader does the same).
    names = {f.name for f in attrs.fields(cls)}
    return {k: v for k, v in raw.items() if k in names}


async def _import(document: dict[str, Any], path: Path, data: DomainData, tasks: dict[str, Task], judge: Judge | None,
                  store: Store, metrics: list[tuple[str, Metric]]) -> ImportSummary:
    run_id = "import-" + hashlib.sha256(path.read_bytes()).hexdigest()[:10]
    info = document.get("info") or {}
    config = {"imported_from": str(path), "domain": data.name, "agent": (info.get("agent_info") or {}).get("implementation"),
              "user": (info.get("user_info") or {}).get("implementation"), "trials": info.get("num_trials"), "judge": judge.name if judge else None}
    store.begin_run(run_id, config, hashlib.sha256(json.dumps(config, sort_keys=True).encode()).hexdigest(), [],
                    {data.name: data.content_hash()}, int(info.get("seed") or 0))
    agreeing, disagreeing = 0, []
    done = store.finished_units(run_id)
    for i, sim in enumerate(document["simulations"]):
        if ("agent", sim["task_id"], int(sim.get("trial") or 0)) in done:
            continue
        result, theirs, inputs, used = await _rescore(run_id, sim, tasks, data, judge, path, i)
        values, rows = await score_metrics(metrics, result, inputs, judge=used)
        store.save_conversation(result, [*_values(result, theirs), *values], plugin_rows=rows)
        same = theirs is not None and result.reward is not None and abs(theirs - result.reward) < 1e-6
        agreeing += same
        if not same:
            disagreeing.append(f"{sim['task_id']}/{sim.get('trial', 0)}: theirs {theirs}, ours {result.reward}")
    store.set_status(run_id, "complete")
    return ImportSummary(run_id=run_id, domain=data.name, conversations=len(document["simulations"]), agreeing=agreeing,
                         disagreeing=disagreeing)


async def _rescore(run_id: str, sim: dict[str, Any], tasks: dict[str, Task], data: DomainData, judge: Judge | None,
                   path: Path, index: int) -> tuple[ConversationResult, float | None, MetricInputs, Judge | None]:
    task_id = sim["task_id"]
    if task_id not in tasks:
        raise ConfigError(f"{path}: task {task_id!r} @ $.simulations[{index}] is in neither the file nor domain {data.name!r}")
    task = tasks[task_id]
    messages = [_message(m, path, f"$.simulations[{index}].messages[{j}]") for j, m in enumerate(sim.get("messages") or [])]
    termination = _termination(sim.get("termination_reason"))
    env = replay_trajectory(data, task, messages)
    used = judge or ImportedVerdicts.of(sim)
    gold = replay_gold(data, task)
    reward_info = await evaluate(task, messages, termination, env, gold, judge=used, seed=int(sim.get("seed") or 0))
    theirs = (sim.get("reward_info") or {}).get("reward")
    result = ConversationResult(
        run_id=run_id, arm="agent", task_id=task_id, trial=int(sim.get("trial") or 0), seed=int(sim.get("seed") or 0),
        agent="imported", user="imported", termination_reason=termination, messages=messages, reward_info=reward_info,
        started_utc=str(sim.get("start_time") or utc_now()), ended_utc=str(sim.get("end_time") or utc_now()),
        duration_ms=int(1000 * float(sim.get("duration") or 0)), agent_cost=sim.get("agent_cost"), user_cost=sim.get("user_cost"),
        attributes={**task.attributes, **({"simulation_id": str(sim["id"])} if sim.get("id") else {})},
    )
    return result, theirs, MetricInputs(task=task, events=EventLog(), final_env=env, gold=gold), used


@attrs.define(kw_only=True)
class ImportedVerdicts(Judge):
    """The NL-assertion verdicts a results file recorded, standing in for a judge when none is configured."""

    name: str = "imported"
    verdicts: dict[str, tuple[bool, str]] = attrs.field(factory=dict)

    @classmethod
    def of(cls, sim: dict[str, Any]) -> ImportedVerdicts | None:
        """The simulation's recorded verdicts, or None when it has none."""
        info = sim.get("reward_info") or {}
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


def _message(raw: dict[str, Any], path: Path, root: str) -> Message:
    cls = _ROLE_TYPES.get(raw.get("role", ""))
    if cls is None:
        raise ConfigError(f"{path}: unknown message role {raw.get('role')!r} @ {root}")
    data = _known_keys(raw, cls)
    if data.get("tool_calls"):
        data["tool_calls"] = [_known_keys(c, ToolCall) for c in data["tool_calls"]]
    if not isinstance(data.get("raw_data"), dict):
        data.pop("raw_data", None)
    return structure(data, cls, source=str(path), root=root)


def _termination(value: str | None) -> TerminationReason:
    try:
        return TerminationReason(value)
    except ValueError:
        # Reasons our harness does not produce (e.g. context_window_exceeded) end a conversation as an error.
        return TerminationReason.AGENT_ERROR


def _values(result: ConversationResult, theirs: float | None) -> list[MetricValue]:
    return [*component_values(result), MetricValue(metric="tau2.reward", plugin="bench-kernel", value=theirs)]
