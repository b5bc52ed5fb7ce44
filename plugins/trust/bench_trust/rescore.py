"""`bench rescore`: a stored run's conversations evaluated and scored again, into a new run linked to its source.

Nothing is played again and no participant is started: each conversation's final state is rebuilt by replaying its
stored tool calls on a fresh environment (as imports do), its reward components are computed by the components and
combination rules loaded now, its metrics by the metrics loaded now. NL assertions keep their stored verdicts unless
`rejudge` (the run's judge is asked again). Infrastructure errors are copied as they are. Events emitted while a
conversation was scored (judge verdicts, metrics) are produced anew; every other event is copied (docs/results.md).
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import (
    DEFAULT_PRICES,
    Attribution,
    BenchError,
    ComponentScore,
    ConfigError,
    ConversationModels,
    ConversationResult,
    DomainData,
    Environment,
    Evaluation,
    Event,
    EventLog,
    GoldReplay,
    Judge,
    Message,
    Metric,
    MetricInputs,
    Mode,
    ModelHub,
    PluginSet,
    Profile,
    Registry,
    RewardComponent,
    RewardContext,
    RewardInfo,
    RewardType,
    RunConfig,
    RunRecord,
    Store,
    Task,
    TerminationReason,
    ToolContext,
    attributed,
    build_environment,
    checked_fingerprints,
    collect,
    component_values,
    converter,
    domain_changed,
    evaluate,
    get_logger,
    get_plugin_manager,
    load_profile,
    load_run_domain,
    open_store,
    open_store_for_reading,
    replay_gold,
    replay_history,
    require_components,
    score_metrics,
    select_tasks,
    transformed_tasks,
    unstructure,
    utc_now,
    with_backend_plugins,
)

log = get_logger()
NL = RewardType.NL_ASSERTION.value
JUDGE_SOURCE = "bench-kernel:judge"
"""The source of the events a judgment emits (failed attempts, a panel's votes, a judgment asked again)."""
RESCORED_EVENT = "run.rescored"
"""The rescored run's last event: its source and what the rescore did."""
KERNEL = "bench-kernel"
"""The plugin name of the kernel's own metric values (reward components, judge agreement)."""
SCORING_KINDS = ("metric", "reward component", "combination rule")
PARTICIPANT_ROLES = ("agent", "user")
"""Model roles a rescore never configures (with their `-*` variants): participants are never called."""


@attrs.frozen(kw_only=True)
class RescoreSummary:
    """What a rescore stored."""

    run_id: str
    source: str
    conversations: int
    """Conversations copied, superseded replays included."""
    rescored: int
    """Finished ones evaluated and scored again (the others are infrastructure errors, copied as they were)."""
    changed: list[str]
    """The source's conversations whose reward or a component's score changed."""
    rejudged: int
    replay_mismatches: list[str]
    """Tool calls whose replay gave another result than the stored one (the final state may differ from the run's)."""


@attrs.define(kw_only=True)
class StoredVerdicts(RewardComponent):
    """The NL_ASSERTION component as the source run judged it: its stored score, checks and note, no judge called."""

    inner: RewardComponent
    kept: ComponentScore

    def applies(self, task: Task) -> bool:
        """As the component it stands in for."""
        return self.inner.applies(task)

    async def score(self, context: RewardContext) -> ComponentScore:
        """The stored verdicts."""
        return self.kept


@attrs.define(kw_only=True)
class Rescoring:
    """What every conversation of one rescore shares."""

    source: RunRecord
    run_id: str
    config: RunConfig
    data: DomainData
    tasks: dict[str, Task]
    registry: Registry
    evaluation: Evaluation
    metrics: list[tuple[str, Metric]]
    judge: Judge | None
    options: RescoreOptions
    profile: Profile
    hub: ModelHub
    golds: dict[str, GoldReplay] = attrs.field(factory=dict)

    def gold(self, task: Task) -> GoldReplay:
        """The task's gold replay, computed once."""
        if task.id not in self.golds:
            self.golds[task.id] = replay_gold(self.data, task)
        return self.golds[task.id]


@attrs.frozen(kw_only=True)
class RescoreOptions:
    """How to rescore: the new run's id, whether the judge is asked again, the plugins, the cache, concurrency."""

    run_id: str | None = None
    """Default: SOURCE-rescore-N, the first free N."""
    rejudge: bool = False
    plugins: list[str] | None = None
    """The plugins to load (default: the source run's selection, which None means every installed one)."""
    cache: bool = False
    concurrency: int = 32


def rescore(
    source_id: str,
    store_path: Path | str,
    options: RescoreOptions | None = None,
    load_plugins: Callable[[list[str] | None], PluginSet] = get_plugin_manager,
) -> RescoreSummary:
    """Evaluate and score a stored run's conversations again into a new run; `load_plugins` builds the plugin set."""
    return asyncio.run(_rescore(source_id, store_path, options or RescoreOptions(), load_plugins))


async def _rescore(
    source_id: str, store_path: Path | str, options: RescoreOptions, load_plugins: Callable[[list[str] | None], PluginSet]
) -> RescoreSummary:
    reading = open_store_for_reading(store_path)
    try:
        source = reading.run(source_id)
        assert source is not None
    finally:
        reading.close()
    config = source_config(source)
    plugin_set = load_plugins(with_backend_plugins(options.plugins or config.plugins, config.implied_plugins()))
    registry = collect(plugin_set)
    store = open_store(store_path, registry.migrations)
    rescoring = None
    try:
        rescoring = _prepare(source, config, registry, store, options)
        rows = store.conversations(source_id, include_superseded=True)
        _refuse_unknown_tasks(rows, rescoring)
        await _check_models(rescoring)
        return await _rescore_rows(rescoring, store, rows, plugin_set)
    finally:
        if rescoring is not None:
            await rescoring.hub.aclose()
        store.close()


def source_config(source: RunRecord) -> RunConfig:
    """The configuration of the run to rescore; an imported run or one running right now is refused."""
    if "imported_from" in source.config:
        raise ConfigError(
            f"run {source.id!r} was imported from {source.config['imported_from']}: import it again to "
            "score it with today's components (a rescore rebuilds a run's domain from its configuration)"
        )
    if source.status == "running":
        raise ConfigError(f"run {source.id!r} is being run right now: rescore it once it has ended")
    return RunConfig.from_stored(source.config, source=f"run {source.id!r}'s stored configuration")


def _prepare(source: RunRecord, config: RunConfig, registry: Registry, store: Store, options: RescoreOptions) -> Rescoring:
    data = _domain(source, registry)
    tasks = {t.id: t for t in data.tasks}
    run_tasks = transformed_tasks(data, select_tasks(data, config), config, registry)
    tasks.update({t.id: t for t in run_tasks})
    require_components(registry, run_tasks)  # NL_ASSERTION's stored verdicts need bench-judging's component to stand in
    evaluation = Evaluation(components=registry.components.get("reward component", {}), rules=registry.components.get("combination rule", {}))
    profile = load_profile(config.profile)
    target = options.run_id or _free_id(store, f"{source.id}-rescore")
    if store.run(target, missing_ok=True) is not None:
        raise ConfigError(f"run {target!r} already exists: give the rescore another --run-id")
    hub = ModelHub(
        configs=profile.with_sampling(_scoring_models(config)),
        backends=registry.components.get("model", {}),
        store=store,
        use_cache=options.cache,
        prices={**DEFAULT_PRICES, **config.prices},
    )
    return Rescoring(
        source=source,
        run_id=target,
        config=config,
        data=data,
        tasks=tasks,
        registry=registry,
        evaluation=evaluation,
        metrics=[(registry.origin("metric", n), m) for n, m in registry.components.get("metric", {}).items()],
        judge=_judge(registry, config, options.rejudge, evaluation),
        options=options,
        profile=profile,
        hub=hub,
    )


def _domain(source: RunRecord, registry: Registry) -> DomainData:
    """The run's domain as it loaded it, refused when its tasks or policy changed since (the scores would mix)."""
    try:
        data = load_run_domain(source, registry)
    except BenchError as exc:
        raise ConfigError(f"run {source.id!r}: its domain no longer loads, so its conversations cannot be scored again ({exc})") from exc
    changed = domain_changed(source, data)
    if changed:
        raise ConfigError(
            f"{changed} (content hash): its conversations would be scored against other tasks; rescore "
            "where the run's data is as it was, or run the tasks again"
        )
    if data.advance is not None:
        raise ConfigError(
            f"domain {data.name!r} moves on by itself between steps (DomainData.advance): a conversation's "
            "final state cannot be rebuilt from its messages, so its runs cannot be rescored"
        )
    return data


def _free_id(store: Store, stem: str) -> str:
    return next(f"{stem}-{n}" for n in itertools.count(1) if store.run(f"{stem}-{n}", missing_ok=True) is None)


def _scoring_models(config: RunConfig) -> dict[str, Any]:
    """The run's model settings but its participants': a rescore can call no agent or user model."""
    return {
        role: model
        for role, model in config.models.items()
        if role not in PARTICIPANT_ROLES and not role.startswith(tuple(f"{r}-" for r in PARTICIPANT_ROLES))
    }


def _judge(registry: Registry, config: RunConfig, rejudge: bool, evaluation: Evaluation) -> Judge | None:
    """The run's judge as the run asked it (`Evaluation.prepare_judge`: bench-judging's rounds), for metrics that ask
    one and for NL assertions judged again (`rejudge`)."""
    if config.judge is None:
        if rejudge:
            raise ConfigError("--rejudge: the run had no judge, so it has no NL assertions to judge again")
        return None
    if not rejudge and config.judge not in registry.components.get("judge", {}):
        log.warning("rescore.judge_missing", judge=config.judge, why="metrics that ask the run's judge get none")
        return None
    return evaluation.prepare_judge(registry.get("judge", config.judge), config, [])


def _refuse_unknown_tasks(rows: list[dict[str, Any]], rescoring: Rescoring) -> None:
    unknown = sorted(
        {
            r["task_id"]
            for r in rows
            if r["task_id"] not in rescoring.tasks and r["termination_reason"] != TerminationReason.INFRASTRUCTURE_ERROR.value
        }
    )
    if unknown:
        raise ConfigError(
            f"run {rescoring.source.id!r} has conversations of {len(unknown)} tasks that its domain "
            f"{rescoring.data.name!r} does not have now (e.g. {unknown[0]!r}): nothing was stored"
        )


async def _check_models(rescoring: Rescoring) -> None:
    """The models the loaded metrics (and a judge asked again) need, checked before anything is stored."""
    needed = {role: f"metric {metric.name!r}" for _, metric in rescoring.metrics for role in metric.model_roles}
    if rescoring.options.rejudge and rescoring.judge is not None:
        needed.update({role: f"judge {rescoring.judge.name!r}" for role in getattr(rescoring.judge, "model_roles", ())})
    for role, who in needed.items():
        if role not in rescoring.hub.configs:
            raise ConfigError(
                f"{who} needs a model for the {role} role, which run {rescoring.source.id!r} did not "
                "configure: a rescore uses the run's models (run the tasks again with one)"
            )
        rescoring.hub.check_kind(role)
        await rescoring.hub.client(role).check()


async def _rescore_rows(rescoring: Rescoring, store: Store, rows: list[dict[str, Any]], plugin_set: PluginSet) -> RescoreSummary:
    """Begin the new run, copy the source's history, score every unit's rows (in retry order), end the run."""
    source = rescoring.source
    store.begin_run(
        rescoring.run_id,
        _recorded_config(rescoring),
        source.config_hash,
        [unstructure(p) for p in plugin_set.plugins if p.error is None],
        source.task_sets,
        source.seed,
    )
    stored_values: dict[str, list[dict[str, Any]]] = {}
    for value in store.metric_values(source.id):
        stored_values.setdefault(value["conversation_id"], []).append(value)
    changed: list[str] = []
    mismatches: list[str] = []
    rejudged = 0
    limit = asyncio.Semaphore(max(1, rescoring.options.concurrency))

    async def unit(unit_rows: list[dict[str, Any]]) -> None:
        nonlocal rejudged
        async with limit:
            for row in unit_rows:  # a replay's save marks the row it replaces superseded, as in the run
                result, problems = await _rescored(rescoring, store, row, stored_values.get(row["id"], []))
                mismatches.extend(f"{row['id']}: {p}" for p in problems)
                stored = _stored_info(row)
                if _scores(result.reward_info) != _scores(stored):
                    changed.append(row["id"])
                rejudged += _judged_now(result.reward_info, stored, rescoring.options.rejudge)

    try:
        _copy_history(store, source.id, rescoring.run_id)
        await asyncio.gather(*(unit(list(group)) for _, group in itertools.groupby(rows, key=lambda r: (r["arm"], r["task_id"], r["trial"]))))
    except BaseException:
        store.set_status(rescoring.run_id, "interrupted")
        raise
    summary = RescoreSummary(
        run_id=rescoring.run_id,
        source=source.id,
        conversations=len(rows),
        rescored=sum(r["termination_reason"] != TerminationReason.INFRASTRUCTURE_ERROR.value for r in rows),
        changed=sorted(changed),
        rejudged=rejudged,
        replay_mismatches=mismatches,
    )
    store.add_event(rescoring.run_id, RESCORED_EVENT, {**unstructure(summary), "rejudge": rescoring.options.rejudge})
    store.set_status(rescoring.run_id, source.status)
    return summary


def _copy_history(store: Store, source: str, target: str) -> None:
    """Copy a run's events and model-call ledger to another run, conversation ids moved to it."""
    with store.write():  # one of the store's writes: the ledger rows it holds back for this loop turn commit first
        for table in ("events", "llm_calls"):
            rows = [dict(row) for row in store.db.query(f"select * from {table} where run_id = ? order by id", [source])]
            for row in rows:
                row.pop("id")
                row["run_id"] = target
                if row["conversation_id"] is not None and row["conversation_id"].startswith(f"{source}/"):
                    row["conversation_id"] = target + row["conversation_id"][len(source) :]
            if rows:
                columns = list(rows[0])
                sql = f"insert into {table} ({', '.join(columns)}) values ({', '.join('?' for _ in columns)})"
                store.db.conn.executemany(sql, [[row[c] for c in columns] for row in rows])


def _recorded_config(rescoring: Rescoring) -> dict[str, Any]:
    """The source's configuration linked to it, with the code fingerprints of the scoring components loaded now."""
    kinds = SCORING_KINDS + (("judge",) if rescoring.options.rejudge else ())
    kept = {k: v for k, v in rescoring.source.config.get("fingerprints", {}).items() if not k.startswith(kinds)}
    judge = [("judge", rescoring.registry.get("judge", rescoring.config.judge))] if rescoring.options.rejudge and rescoring.config.judge else []
    scoring = [(kind, component) for kind in SCORING_KINDS for component in rescoring.registry.components.get(kind, {}).values()]
    now = checked_fingerprints(rescoring.registry, [*scoring, *judge])
    fingerprints = dict(sorted({**kept, **now}.items()))
    config = {**rescoring.source.config, "rescored_from": rescoring.source.id}
    return {**config, "fingerprints": fingerprints} if fingerprints else {k: v for k, v in config.items() if k != "fingerprints"}


async def _rescored(
    rescoring: Rescoring, store: Store, row: dict[str, Any], stored_values: list[dict[str, Any]]
) -> tuple[ConversationResult, list[str]]:
    """One stored conversation scored again and stored under the new run: its result and its replay's mismatches."""
    messages: list[Message] = [
        converter.structure(json.loads(m["message_json"]), Message)  # type: ignore[arg-type]
        for m in store.messages(row["id"])
    ]
    scoring = _scoring_sources(rescoring, stored_values)
    events = EventLog(
        events=[e for e in _events(store, row["id"]) if e.source not in scoring], position=lambda: len(messages), clock=utc_now
    )  # as the conversation's log was bound when scored
    result = _copied(rescoring, row, messages, events.events)
    if result.termination_reason is TerminationReason.INFRASTRUCTURE_ERROR:
        store.save_conversation(result, [])
        return result, []
    task = rescoring.tasks[row["task_id"]]
    env, problems = _final_state(rescoring, task, messages)
    gold = rescoring.gold(task)
    models = ConversationModels(rescoring.hub, run_id=rescoring.run_id, conversation_id=result.conversation_id, arm=row["arm"])
    stored = _stored_info(row)
    info = await evaluate(
        task,
        messages,
        result.termination_reason,
        env,
        gold,
        judge=rescoring.judge,
        seed=row["seed"],
        models=models,
        evaluation=_evaluation(rescoring, stored),
        events=events,
        profile=rescoring.profile,
    )
    result = attrs.evolve(result, reward_info=info)
    if _scores(info) != _scores(stored):  # the label follows the new scores; an unchanged one (a reviewer's too) stays
        attributors = rescoring.registry.components.get("attributor", {}).values()
        result = attributed(attrs.evolve(result, attribution=None), task, rescoring.data, env, gold, store, attributors)
    values, plugin_rows = await score_metrics(
        rescoring.metrics, result, MetricInputs(task, events, env, gold, models), judge=rescoring.judge, profile=rescoring.profile
    )
    store.save_conversation(result, component_values(result) + values, plugin_rows=plugin_rows)
    return result, problems


def _copied(rescoring: Rescoring, row: dict[str, Any], messages: list[Message], events: list[Event]) -> ConversationResult:
    """The stored conversation under the new run, as stored (its reward info is replaced once scored again)."""
    return ConversationResult(
        run_id=rescoring.run_id,
        arm=row["arm"],
        task_id=row["task_id"],
        trial=row["trial"],
        seed=row["seed"],
        agent=row["agent"],
        user=row["user"],
        termination_reason=TerminationReason(row["termination_reason"]),
        messages=messages,
        reward_info=_stored_info(row),
        started_utc=row["started_utc"],
        ended_utc=row["ended_utc"],
        duration_ms=row["duration_ms"],
        error=row["error"],
        agent_cost=row["agent_cost"],
        user_cost=row["user_cost"],
        events=events,
        channel=row.get("channel") or "identity",
        attributes=json.loads(row["attributes_json"]) if row.get("attributes_json") else {},
        attribution=_stored_attribution(row),
        retry=row.get("retry") or 0,
    )


def _stored_info(row: dict[str, Any]) -> RewardInfo | None:
    return converter.structure(json.loads(row["reward_info_json"]), RewardInfo) if row.get("reward_info_json") else None


def _stored_attribution(row: dict[str, Any]) -> Attribution | None:
    if not row.get("attribution"):
        return None
    evidence = json.loads(row["attribution_evidence"]) if row.get("attribution_evidence") else {}
    return Attribution(
        label=row["attribution"], rule=evidence.get("rule", ""), evidence=evidence.get("evidence", ""), source=evidence.get("source", "rules")
    )


def _events(store: Store, conversation_id: str) -> list[Event]:
    return [
        Event(kind=e["kind"], data=json.loads(e["data_json"]), message_index=e["message_index"], source=e["source"] or "", ts_utc=e["ts_utc"])
        for e in store.conversation_events(conversation_id)
    ]


def _scoring_sources(rescoring: Rescoring, stored_values: list[dict[str, Any]]) -> set[str]:
    """The sources of the events a conversation's scoring emitted, which the rescore emits anew: the metrics' (loaded
    now, or that stored values: `plugin:name` for each dotted prefix of a value's name) and, asked again, the judge's."""
    found = {f"{plugin}:{metric.name}" for plugin, metric in rescoring.metrics} | ({JUDGE_SOURCE} if rescoring.options.rejudge else set())
    for value in stored_values:
        if value["plugin"] != KERNEL:
            parts = value["metric"].split(".")
            found.update(f"{value['plugin']}:{'.'.join(parts[:n])}" for n in range(1, len(parts) + 1))
    return found


def _final_state(rescoring: Rescoring, task: Task, messages: Sequence[Message]) -> tuple[Environment, list[str]]:
    """The conversation's final state, rebuilt: its tool calls that write replayed on a fresh environment."""
    opening = attrs.evolve(task.initial_state, message_history=None) if task.initial_state else None
    env = build_environment(
        rescoring.data,
        attrs.evolve(task, initial_state=opening),
        solo=rescoring.config.mode is Mode.NO_USER,
        context=ToolContext(profile=rescoring.profile),
    )
    return env, replay_history(env, messages, strict=False)


def _evaluation(rescoring: Rescoring, stored: RewardInfo | None) -> Evaluation:
    """The loaded components, with the stored NL verdicts standing in for the judge unless it is asked again."""
    kept = stored.component(NL) if stored is not None and not rescoring.options.rejudge else None
    inner = rescoring.evaluation.components.get(NL)
    if kept is None or inner is None:
        return rescoring.evaluation
    verdicts = StoredVerdicts(name=NL, description=inner.description, always=inner.always, inner=inner, kept=kept)
    return attrs.evolve(rescoring.evaluation, components={**rescoring.evaluation.components, NL: verdicts})


def _scores(info: RewardInfo | None) -> tuple[Any, ...]:
    """What decides a conversation's standing: its reward and each component's score and error."""
    if info is None:
        return ()
    return (info.reward, sorted((c.component, c.score, c.error) for c in info.components))


def _judged_now(info: RewardInfo | None, stored: RewardInfo | None, rejudge: bool) -> int:
    """1 when the rescore judged the conversation's NL assertions (asked again, or never judged before)."""
    if info is None or info.component(NL) is None:
        return 0
    return int(rejudge or stored is None or stored.component(NL) is None)
