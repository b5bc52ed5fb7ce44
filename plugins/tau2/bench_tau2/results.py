"""tau2-bench results files: export one of our runs in their format, import theirs and re-score it offline."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.metadata
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from bench_duplex import Timeline

from bench_kernel import (
    Attributor,
    BenchError,
    Check,
    ConfigError,
    ConversationResult,
    DomainData,
    Environment,
    Evaluation,
    Event,
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
    Task,
    TerminationReason,
    attributed,
    build_environment,
    canonical_json,
    collect,
    component_values,
    converter,
    evaluate,
    get_logger,
    get_plugin_manager,
    load_domain,
    load_run_domain,
    replay_gold,
    replay_history,
    require_components,
    score_metrics,
    task_id_key,
    task_vocabulary,
    unstructure,
    utc_now,
)
from bench_tau2.reading import (
    SIMULATIONS_DIR,
    SQLITE_INT,
    ResultsFile,
    Simulation,
    Skipped,
    domain_name,
    embedded_tasks,
    messages,
    number,
    pair_verdicts,
    read_results,
    whole,
)
from bench_tau2.ticks import LEVELS, MODE, export_duplex, import_duplex, speech_events, timeline_of

log = get_logger()


# --------------------------------------------------------------------------- export


def export_run(store: Store, run_id: str, plugins: PluginSet | None = None) -> dict[str, Any]:
    """One of our runs as a tau2 results document (agent arm only)."""
    run = store.run(run_id)
    assert run is not None
    config = run.config
    data = load_run_domain(run, collect(plugins or get_plugin_manager(config.get("plugins"))))
    rows = [r for r in store.conversations(run_id) if r["arm"] == "agent"]
    tasks = {t.id: t for t in data.tasks}
    info = _info(config, data)
    duplex = config.get("duplex")
    if config.get("mode") == "full-duplex" and isinstance(duplex, dict) and duplex.get("speech_complexity") in LEVELS:
        info["speech_complexity"] = duplex["speech_complexity"]
    return {
        "timestamp": run.created_utc,
        "info": info,
        "tasks": [unstructure(tasks[t]) for t in dict.fromkeys(r["task_id"] for r in rows) if t in tasks],
        "simulations": [_simulation(store, r, data, tasks.get(r["task_id"]), solo=config.get("mode") == "no-user") for r in rows],
    }


def _producer() -> str:
    """What tau2's `info.git_commit` (a required string) holds in our files: the kernel's distribution and version."""
    try:
        return f"bench-kernel=={importlib.metadata.version('bench-kernel')}"
    except importlib.metadata.PackageNotFoundError:
        return "bench-kernel"


def _info(config: dict[str, Any], data: DomainData) -> dict[str, Any]:
    models = config.get("models", {})
    recorded = config.get("profile")
    profile: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    info = {
        "git_commit": _producer(),
        "num_trials": config.get("trials"),
        "max_steps": config.get("max_steps"),
        "max_errors": config.get("max_errors"),
        "seed": config.get("seed"),
        "user_info": {
            "implementation": config.get("user"),
            "llm": models.get("user", {}).get("model"),
            "llm_args": _sent_sampling(models, profile, "user"),
            "global_simulation_guidelines": None,
        },
        "agent_info": {
            "implementation": config.get("agent"),
            "llm": models.get("agent", {}).get("model"),
            "llm_args": _sent_sampling(models, profile, "agent"),
        },
        "environment_info": {"domain_name": data.name, "policy": data.policy, "tool_defs": None},
    }
    if profile:  # tau2's loader ignores fields it does not know; readers of our files learn what the models saw
        info["bench_profile"] = {"name": profile.get("name"), "sha256": profile.get("sha256")}
    return info


def _sent_sampling(models: dict[str, Any], profile: dict[str, Any], role: str) -> dict[str, Any]:
    """The sampling a role's requests carried: the profile's defaults under the role's own settings."""
    if role not in models:
        return {}
    return {**(profile.get("sampling") or {}).get(role, {}), **models[role].get("sampling", {})}


def _simulation(store: Store, row: dict[str, Any], data: DomainData, task: Task | None, *, solo: bool) -> dict[str, Any]:
    messages = [json.loads(m["message_json"]) for m in store.messages(row["id"])]
    final = _final_state(data, task, [m["message_json"] for m in store.messages(row["id"])], solo=solo)
    for idx, message in enumerate(messages):
        message["turn_idx"] = idx
    reward_info = converter.structure(json.loads(row["reward_info_json"]), RewardInfo) if row["reward_info_json"] else None
    timeline = next((json.loads(e["data_json"]) for e in store.conversation_events(row["id"]) if e["kind"] == Timeline.kind), None)
    # A full-duplex conversation is stored as tau2 stores its voice simulations: ticks, no messages (derived on demand).
    duplex = {} if timeline is None else export_duplex(messages, timeline_of(timeline), row["started_utc"] or "", row["termination_reason"])
    return {
        "id": hashlib.sha256(row["id"].encode()).hexdigest()[:32],
        "task_id": row["task_id"],
        "timestamp": row["ended_utc"],
        "start_time": row["started_utc"],
        "end_time": row["ended_utc"],
        "duration": (row["duration_ms"] or 0) / 1000,
        "termination_reason": row["termination_reason"],
        "agent_cost": row["agent_cost"],
        "user_cost": row["user_cost"],
        "reward_info": _tau2_reward_info(reward_info, task),
        "messages": messages,
        "trial": row["trial"],
        "seed": row["seed"],
        "final_state": final,
        **duplex,
    }


def write_results(document: dict[str, Any], path: Path, layout: str) -> list[Path]:
    """Write a results document as tau2 does: one JSON file, or its "dir" format (results.json + simulations/<id>.json).

    The dir format is what tau2 writes for voice runs; its loader (`Results.load`) reads both and checks the index.
    """
    if layout == "json":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
        return [path]
    meta = path if path.suffix == ".json" else path / "results.json"
    folder = meta.parent / SIMULATIONS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    simulations = document["simulations"]
    index = [
        {
            "id": s["id"],
            "task_id": s["task_id"],
            "trial": s["trial"],
            "reward": (s.get("reward_info") or {}).get("reward"),
            "termination_reason": s["termination_reason"],
            "agent_cost": s["agent_cost"],
            "duration": s["duration"],
        }
        for s in simulations
    ]
    meta.write_text(
        json.dumps({**{k: v for k, v in document.items() if k != "simulations"}, "simulation_index": index}, indent=2) + "\n", encoding="utf-8"
    )
    written = [meta]
    for sim in simulations:
        written.append(folder / f"{sim['id']}.json")
        written[-1].write_text(json.dumps(sim, indent=2) + "\n", encoding="utf-8")
    return written


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
        "user_db_hash": (
            None if user_state is None else data.reference_user_hash(user_state) if data.reference_user_hash else user_state.content_hash()
        ),
        "user_db": None if user_state is None else user_state.to_dict(),
    }


def replay_trajectory(data: DomainData, task: Task, messages: Sequence[Message], *, solo: bool = False) -> Environment:
    """Rebuild an exported or imported conversation's final state: the task's initial state (without its message
    history, which the messages hold), then the messages' state-changing tool calls replayed."""
    initial = None if task.initial_state is None else attrs.evolve(task.initial_state, message_history=None)
    env = build_environment(data, attrs.evolve(task, initial_state=initial), solo=solo)
    replay_history(env, messages, strict=False)
    return env


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
        "env_assertions": [
            {"env_assertion": unstructure(a), "met": c.met, "reward": float(c.met)}
            for a, c in _paired(assertions, _checks(by, "ENV_ASSERTION"), "env assertion")
        ],
        "action_checks": [
            {"action": unstructure(a), "action_match": c.met, "action_reward": float(c.met)}
            for a, c in _paired(actions, _checks(by, "ACTION"), "action")
        ],
        "communicate_checks": [{"info": c.subject, "met": c.met, "justification": c.detail} for c in _checks(by, "COMMUNICATE")],
        "nl_assertions": [{"nl_assertion": c.subject, "met": c.met, "justification": c.detail} for c in _checks(by, "NL_ASSERTION")],
        "reward_basis": list(info.reward_basis),
        "reward_breakdown": {b: by[b].score for b in info.reward_basis if b in by},
        "info": {"note": info.note} if info.note else None,
    }


def _paired(objects: list[Any], checks: list[Any], what: str) -> list[tuple[Any, Any]]:
    """The evaluator checks a task's actions (and env assertions) in their order: pair each check with its object."""
    if len(objects) != len(checks):
        raise ConfigError(
            f"the stored {what} checks ({len(checks)}) do not match the task's {what}s ({len(objects)}): "
            "was the run made with another version of the task?"
        )
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
    """Simulations stored (by this import or an earlier one of the same file)."""
    agreeing: int
    disagreeing: list[str]
    infrastructure_errors: int = 0
    """Simulations the file stores as infrastructure errors: kept as such, neither graded nor compared."""
    tasks: str = "embedded"
    differing_tasks: list[str] = attrs.field(factory=list)
    """Ids of tasks whose embedded and current versions differ (in fields other than those bench derives)."""
    differing_fields: list[str] = attrs.field(factory=list)
    """The task fields in which they differ, e.g. evaluation_criteria."""
    skipped: list[str] = attrs.field(factory=list)
    """Simulations bench could not import, each named (file, id, task, JSON path) with the reason."""
    unrewarded: int = 0
    """Stored simulations for which the file records no reward: graded, not compared."""
    notes: list[str] = attrs.field(factory=list)
    """Where bench read the file other than word for word (e.g. trial numbers it gave), one line each."""

    @property
    def compared(self) -> int:
        """Simulations whose reward was compared with the file's."""
        return self.conversations - self.infrastructure_errors - self.unrewarded


def _infrastructure_error(sim: Simulation) -> bool:
    """Stored by its harness as an infrastructure failure: nothing to grade."""
    return sim.raw.get("termination_reason") == TerminationReason.INFRASTRUCTURE_ERROR.value


def import_results(
    path: Path,
    store_path: Path | str,
    *,
    plugins: PluginSet | None = None,
    data_dir: str | None = None,
    judge: str | None = None,
    tasks: str = "embedded",
    run_id: str | None = None,
) -> ImportSummary:
    """Load a tau2 results file, replay every conversation's tool calls on our domain and re-score it.

    `path` is a results JSON file, or a directory in tau2's directory format. `tasks` says which version
    of a task grades it when the file embeds one and the domain has one too: "embedded" (the file's, as
    tau2's own re-evaluation does) or "current" (the domain's). A simulation bench cannot interpret is
    skipped and named in the summary; the others are imported.
    """
    if tasks not in TASK_SOURCES:
        raise ConfigError(f"--tasks must be one of {', '.join(TASK_SOURCES)}, not {tasks!r}")
    results = read_results(path)
    registry = collect(plugins or get_plugin_manager())
    data = load_domain(registry, RunConfig(domain=domain_name(results, registry.names("domain")), data_dir=data_dir))
    embedded = embedded_tasks(results.document, results.path, task_vocabulary(registry))
    graded, differing = _tasks(embedded.tasks, data, prefer=tasks)
    if tasks == "embedded":  # the file's version is the one asked for: never swapped silently for the domain's
        graded = {i: t for i, t in graded.items() if i not in embedded.unreadable}
    judge_obj: Judge | None = registry.get("judge", judge) if judge else None
    require_components(registry, list(graded.values()))  # retail's NL_ASSERTION: bench-judging's
    evaluation = Evaluation(components=registry.components.get("reward component", {}), rules=registry.components.get("combination rule", {}))
    metrics = [(registry.origin("metric", n), m) for n, m in registry.components.get("metric", {}).items()]
    document = results.document
    config = {
        "imported_from": str(path),
        "domain": data.name,
        "tasks": tasks,
        "data_dir": data_dir,
        "agent": _implementation(document, "agent_info"),
        "user": _implementation(document, "user_info"),
        "trials": _object(document.get("info")).get("num_trials"),
        "judge": judge_obj.name if judge_obj else None,
    }
    run_id = run_id or "import-" + hashlib.sha256(results.path.read_bytes() + canonical_json(config).encode()).hexdigest()[:10]
    store = Store(store_path, registry.migrations)
    try:
        attributors = list(registry.components.get("attributor", {}).values())  # bench-trust's rules, as in a run
        scoring = (evaluation, metrics, attributors)
        skipped = asyncio.run(_import(run_id, config, results, data, graded, embedded.unreadable, judge_obj, store, scoring))
        notes = [*results.notes, *embedded.notes, *_termination_notes(results.simulations)]
        return _summary(store, run_id, data.name, results.simulations, skipped, tasks, differing, notes)
    finally:
        store.close()


def _implementation(document: dict[str, Any], key: str) -> Any:
    info = document.get("info")
    part = info.get(key) if isinstance(info, dict) else None
    return part.get("implementation") if isinstance(part, dict) else None


def _tasks(embedded: dict[str, Task], data: DomainData, *, prefer: str) -> tuple[dict[str, Task], dict[str, list[str]]]:
    """The tasks that grade the import, and per id whose embedded and current versions differ, the fields that do.

    Plugin-owned fields such as goal_shifts are parsed by their plugins; a task only one side has is used as it is.
    """
    current = {t.id: t for t in data.tasks}
    found = {i: differing_fields(embedded[i], current[i]) for i in embedded.keys() & current.keys()}
    differing = {i: found[i] for i in sorted(found, key=task_id_key) if found[i]}
    first, second = (embedded, current) if prefer == "embedded" else (current, embedded)
    return {**second, **first}, differing


DERIVED_FIELDS = frozenset({"attributes"})
"""Task fields bench derives itself (report labels such as telecom's intent and persona; tau2's tasks have none), so a
file's task never carries them: left out when its version is compared with the domain's."""


def differing_fields(embedded: Task, current: Task) -> list[str]:
    """The fields in which a file's version of a task differs from the domain's, bench's derived labels left out."""
    return [f.name for f in attrs.fields(type(current)) if f.name not in DERIVED_FIELDS and getattr(embedded, f.name) != getattr(current, f.name)]


async def _import(
    run_id: str,
    config: dict[str, Any],
    results: ResultsFile,
    data: DomainData,
    tasks: dict[str, Task],
    unreadable: dict[str, str],
    judge: Judge | None,
    store: Store,
    scoring: tuple[Evaluation, list[tuple[str, Metric]], list[Attributor]],
) -> list[Skipped]:
    """Store every simulation bench can re-score (`scoring`: the loaded components and rules, metrics and attributors);
    the others are returned, each with its reason."""
    evaluation, metrics, attributors = scoring
    store.begin_run(
        run_id,
        config,
        hashlib.sha256(canonical_json(config).encode()).hexdigest(),
        [],
        {data.name: data.content_hash()},
        _seed(_object(results.document.get("info"))),
    )
    done = store.finished_units(run_id)
    skipped = list(results.skipped)
    for sim in results.simulations:
        if ("agent", sim.task_id, sim.trial) in done:
            continue
        try:
            if sim.task_id in unreadable and sim.task_id not in tasks:
                raise ConfigError(unreadable[sim.task_id])
            result, inputs, used = await _rescore(run_id, sim, tasks, data, judge, evaluation, attributors)
            values, rows = await score_metrics(metrics, result, inputs, judge=used) if inputs else ([], [])
        except (BenchError, KeyError, TypeError, ValueError, AttributeError) as exc:
            skipped.append(Skipped(where=sim.where, reason=_reason(exc)))
            continue
        store.save_conversation(result, [*_values(result, sim.theirs), *values], plugin_rows=rows)
        done.add(("agent", sim.task_id, sim.trial))
    store.set_status(run_id, "complete")
    return skipped


def _reason(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, BenchError) else f"{type(exc).__name__}: {exc}"


def _termination_notes(simulations: list[Simulation]) -> list[str]:
    """Termination reasons bench does not have (tau2's newer ones): stored as agent_error, premature as in tau2."""
    known = {r.value for r in TerminationReason}
    reasons = [s.raw.get("termination_reason") for s in simulations]
    unknown = Counter(json.dumps(r) if not isinstance(r, str) else r for r in reasons if not isinstance(r, str) or r not in known)
    if not unknown:
        return []
    listed = ", ".join(f"{reason}: {count}" for reason, count in sorted(unknown.items()))
    return [
        f"termination reasons bench does not have ({listed}): stored as agent_error, a premature end (reward 0, as tau2 "
        "grades every end but user_stop and agent_stop)"
    ]


def _summary(
    store: Store,
    run_id: str,
    domain: str,
    simulations: list[Simulation],
    skipped: list[Skipped],
    tasks: str,
    differing: dict[str, list[str]],
    notes: list[str],
) -> ImportSummary:
    """Agreement between the stored rewards and the file's, whether stored by this import or an earlier one."""
    ours = {(r["task_id"], r["trial"]): r["reward"] for r in store.conversations(run_id) if r["arm"] == "agent"}
    agreeing, disagreeing, infrastructure, unrewarded, stored = 0, [], 0, 0, 0
    for sim in simulations:
        if (sim.task_id, sim.trial) not in ours:
            continue
        stored += 1
        reward = ours[(sim.task_id, sim.trial)]
        if _infrastructure_error(sim):
            infrastructure += 1
        elif sim.theirs is None:
            unrewarded += 1
        elif reward is not None and abs(sim.theirs - reward) < 1e-6:
            agreeing += 1
        else:
            disagreeing.append(f"{sim.task_id}/{sim.trial}: theirs {sim.theirs}, ours {reward}")
    return ImportSummary(
        run_id=run_id,
        domain=domain,
        conversations=stored,
        agreeing=agreeing,
        disagreeing=disagreeing,
        infrastructure_errors=infrastructure,
        tasks=tasks,
        differing_tasks=list(differing),
        differing_fields=sorted({f for fields in differing.values() for f in fields}),
        skipped=[str(s) for s in skipped],
        unrewarded=unrewarded,
        notes=notes,
    )


async def _rescore(
    run_id: str,
    sim: Simulation,
    tasks: dict[str, Task],
    data: DomainData,
    judge: Judge | None,
    evaluation: Evaluation,
    attributors: list[Attributor],
) -> tuple[ConversationResult, MetricInputs | None, Judge | None]:
    if sim.task_id not in tasks:
        raise ConfigError(f"the task is in neither the file nor domain {data.name!r}")
    task = tasks[sim.task_id]
    raw = sim.raw
    events = EventLog()
    if duplex(raw):
        found, timeline = import_duplex(raw, sim.root)
        events.emit(Event(kind=Timeline.kind, data=timeline.as_data()), source="duplex", message_index=len(found))
        for segment in speech_events(timeline):
            events.emit(segment, source="duplex", message_index=len(found))
    else:
        found = messages(raw.get("messages") or [], sim.root)
    common: dict[str, Any] = {
        "run_id": run_id,
        "arm": "agent",
        "task_id": sim.task_id,
        "trial": sim.trial,
        "seed": _seed(raw),
        "agent": "imported",
        "user": "imported",
        "messages": found,
        "started_utc": str(raw.get("start_time") or utc_now()),
        "ended_utc": str(raw.get("end_time") or utc_now()),
        "duration_ms": _duration_ms(raw.get("duration")),
        "agent_cost": number(raw.get("agent_cost")),
        "user_cost": number(raw.get("user_cost")),
        "attributes": {**task.attributes, **({"simulation_id": str(raw["id"])} if raw.get("id") else {})},
        "events": list(events.events),
    }
    if _infrastructure_error(sim):
        # Their harness failed, not their agent: a 0.0 here would count a failure of theirs against the agent.
        failed = ConversationResult(
            termination_reason=TerminationReason.INFRASTRUCTURE_ERROR, reward_info=None, error="imported: stored as an infrastructure error", **common
        )
        return attributed(failed, task, data, build_environment(data, task), None, attributors=attributors), None, None
    termination = _termination(raw.get("termination_reason"))
    env = replay_trajectory(data, task, found)
    used = judge or ImportedVerdicts.of(raw)
    gold = replay_gold(data, task)
    reward_info = await evaluate(task, found, termination, env, gold, judge=used, seed=_seed(raw), evaluation=evaluation)
    # Labelled by the same attributors as a run's conversations (bench-trust's rules: docs/attribution.md).
    result = attributed(
        ConversationResult(termination_reason=termination, reward_info=reward_info, **common), task, data, env, gold, attributors=attributors
    )
    return result, MetricInputs(task=task, events=events, final_env=env, gold=gold), used


def duplex(raw: dict[str, Any]) -> bool:
    """A full-duplex (voice) simulation: tau2 stores its ticks and derives the messages from them."""
    return raw.get("messages") is None and (raw.get("mode") == MODE or isinstance(raw.get("ticks"), list))


def _seed(raw: dict[str, Any]) -> int:
    seed: Any = raw.get("seed")
    return int(seed) if whole(seed, -SQLITE_INT, SQLITE_INT - 1) else 0


def _duration_ms(value: Any) -> int:
    seconds = number(value)
    # A duration longer than a year is no duration: kept out of the store rather than overflowing it.
    return int(1000 * seconds) if seconds is not None and 0 <= seconds < 3.2e7 else 0


@attrs.define(kw_only=True)
class ImportedVerdicts(Judge):
    """The NL-assertion verdicts a results file recorded, standing in for a judge when none is configured."""

    name: str = "imported"
    verdicts: list[tuple[str, bool, str]] = attrs.field(factory=list)
    """(assertion as the file stores it, met, justification), in the file's order."""

    @classmethod
    def of(cls, sim: dict[str, Any]) -> ImportedVerdicts | None:
        """The simulation's recorded verdicts, or None when it has none."""
        given = sim.get("reward_info")
        info: dict[str, Any] = given if isinstance(given, dict) else {}
        extra = _object(info.get("info"))
        details = _object(extra.get("tsr_details"))
        found = info.get("nl_assertions") or details.get("nl_assertion_details") or []
        verdicts = [
            (str(v["nl_assertion"]), bool(v.get("met")), str(v.get("justification") or ""))
            for v in (found if isinstance(found, list) else [])
            if isinstance(v, dict) and "nl_assertion" in v
        ]
        return cls(verdicts=verdicts) if verdicts else None

    async def judge(self, request: JudgeRequest) -> list[Check]:
        """The recorded verdict of each assertion, marked as imported (an assertion the file did not judge is an error)."""
        paired = pair_verdicts(list(request.assertions), self.verdicts)
        if isinstance(paired, str):
            raise ConfigError(paired)
        return [
            Check(subject=a, met=met, detail=f"imported verdict{how}: {why}") for a, (met, why, how) in zip(request.assertions, paired, strict=True)
        ]


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _termination(value: str | None) -> TerminationReason:
    try:
        return TerminationReason(value)
    except ValueError:
        # Reasons our harness does not produce (e.g. context_window_exceeded) end a conversation as an error.
        return TerminationReason.AGENT_ERROR


def _values(result: ConversationResult, theirs: float | None) -> list[MetricValue]:
    return [*component_values(result), MetricValue(metric="tau2.reward", plugin="bench-tau2", value=theirs)]
