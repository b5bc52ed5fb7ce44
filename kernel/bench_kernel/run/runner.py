"""Runs a configured suite: plans (task, trial) units, runs them concurrently, stores each as it ends."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import hashlib
import inspect
import json
import signal
import sqlite3
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from bench_kernel.conversation.channels import Channel, IdentityChannel
from bench_kernel.conversation.events import EventLog
from bench_kernel.conversation.messages import Message, Mode, TerminationReason
from bench_kernel.conversation.orchestrator import Conversation, Limits, initial_messages, run_conversation, stamp_history
from bench_kernel.conversation.participants import Agent, AgentSession, ConversationSetup, UserSession, UserSimulator
from bench_kernel.errors import BenchError, ConfigError, ParticipantError
from bench_kernel.evaluation.evaluator import GoldReplay, default_evaluation, evaluate, replay_gold
from bench_kernel.evaluation.metric import Judge, Metric, MetricContext, MetricResult
from bench_kernel.evaluation.results import ConversationResult
from bench_kernel.evaluation.rewards import Evaluation
from bench_kernel.loadchecks import session_problem
from bench_kernel.logs import bind_context, get_logger
from bench_kernel.modelhub.api import ModelConfig
from bench_kernel.modelhub.hub import ConversationModels, ModelHub, role_option_hint
from bench_kernel.modelhub.prices import DEFAULT_PRICES, Price
from bench_kernel.modelhub.redact import redact
from bench_kernel.plugins import PluginSet, Registry, collect, get_plugin_manager, with_backend_plugins
from bench_kernel.profiles.profile import Profile, load_profile
from bench_kernel.serialization import canonical_json, structure, unstructure, utc_now
from bench_kernel.store.lease import HEARTBEAT_S
from bench_kernel.store.store import MetricValue, PluginRows, Store, open_store
from bench_kernel.tasks.domain import Domain, DomainData, DomainOptions, build_environment
from bench_kernel.tasks.extensions import TaskVocabulary, task_attributes, task_problems
from bench_kernel.tasks.fit import check_fit, check_toolkits
from bench_kernel.tasks.personas import apply_personas, persona_texts, read_persona_file
from bench_kernel.tasks.schema import Task
from bench_kernel.tasks.shifts import named_chains, plan_chains, read_plan_file
from bench_kernel.tools.environment import Environment

if TYPE_CHECKING:
    from bench_kernel.run.executors import Executor

log = get_logger()
YOUNG_COLLECTION_THRESHOLD = 7_000
"""Allocations between young collections while conversations run (Python's default is 700)."""
BASELINE_AGENT = "do-nothing"
BASELINE_USER = "scripted"
KERNEL = "bench-kernel"
"""The plugin column of the kernel's own metric values (reward, component.*)."""
EXECUTION_ONLY = ("run_id", "concurrency", "max_in_flight", "run_timeout_s", "cache", "max_cost", "prices", "executor",
                  "executor_options", "workers", "allow_broken_tasks")
TEXT_ARM = "text"
"""The arm of a paired run that plays each agent conversation again without the channel."""
EVALUATED_ARMS = frozenset({"agent", TEXT_ARM})
GOLD_FAILURES_EVENT = "run.gold_failures"
"""The run event that lists the tasks whose gold replay fails (`gold_failures`), for the report."""
MAX_LISTED = 20
"""Broken tasks a refusal names one by one."""
OPTIONAL_IDENTITY = ("persona", "persona_file", "shifts", "shift_plan", "turns_per_goal", "channel_options", "paired", "sweep", "exposure")


@attrs.frozen(kw_only=True)
class RunConfig:
    """Everything that decides a run's results (and, apart from them, how it is executed)."""

    domain: str | None = None
    agent: str = "oracle"
    user: str = "scripted"
    judge: str | None = None
    mode: Mode = Mode.DEFAULT
    channel: str = "identity"
    trials: int = 1
    task_ids: list[str] | None = None
    split: str | None = None
    num_tasks: int | None = None
    seed: int = 300
    max_steps: int = 200
    max_errors: int = 10
    conversation_timeout_s: float | None = None
    baseline: bool = True
    data_dir: str | None = None
    tasks_file: str | None = None
    plugins: list[str] | None = None
    agent_options: dict[str, Any] = attrs.field(factory=dict)
    user_options: dict[str, Any] = attrs.field(factory=dict)
    models: dict[str, ModelConfig] = attrs.field(factory=dict)
    """Model per role (agent, user, judge); keys are named by variable, never stored."""
    persona: str | None = None
    """Give every task this registered persona (its key is kept as the conversations' `persona` attribute)."""
    persona_file: str | None = None
    """A JSON object of persona key -> text overriding registered texts (AgentChangeBench's user_personas.json)."""
    shifts: int | None = None
    """Chain every task with this many of the domain's following tasks: a goal-shift run on any domain."""
    shift_plan: str | None = None
    """A JSON list of {task, then: [ids]}: the chains to run instead of --shifts."""
    turns_per_goal: int | None = None
    """The scripted user moves to its next goal after this many of its turns even when the agent has not finished."""
    channel_options: dict[str, Any] | None = None
    """Options for the channel (`--channel-option KEY=VALUE`), e.g. the voice channel's snr_db."""
    paired: bool | None = None
    """Also play every agent conversation without the channel (arm "text", same seed) to compare the modalities."""
    exposure: str | None = None
    """What the agent is told about the customer: "none", "persona" (the task's persona text) or "context" (a
    profile a profiler infers from the conversation every 3 user messages), MM-tau-p²'s conditions."""
    sweep: dict[str, list[Any]] | None = None
    """Channel option values to sweep in one run, e.g. {"snr_db": [20, 5, -2]}: the first is arm "agent", each other
    value its own arm named "snr_db=5" (same seeds), so a report compares them."""
    profile: str | None = None
    """A profile directory (docs/profiles.md): prompts, tool schemas, sampling and seeds; None is bench's own."""
    # Execution only: not part of the configuration hash.
    run_id: str | None = None
    concurrency: int = 32
    max_in_flight: int | None = None
    """Requests in flight per endpoint at most, for endpoints whose roles set no max_concurrency (default: concurrency x roles)."""
    run_timeout_s: float | None = None
    cache: bool = False
    max_cost: float | None = None
    prices: dict[str, Price] = attrs.field(factory=dict)
    executor: str = "local"
    """Where conversations are played (a registered executor: local, or a plugin's such as ray); this process stores."""
    executor_options: dict[str, Any] = attrs.field(factory=dict)
    workers: int = 1
    """Processes (or a cluster executor's actors) playing conversations; the run's process alone writes."""
    allow_broken_tasks: bool = False
    """Run tasks whose gold replay fails (refused otherwise, before anything is stored); the report lists them."""

    def identity(self) -> dict[str, Any]:
        """The result-deciding part of the configuration, as stored and hashed."""
        data = unstructure(self)
        for key in EXECUTION_ONLY:
            data.pop(key)
        for key in OPTIONAL_IDENTITY:  # left out while unset, so runs configured before they existed keep their ids
            if data.get(key) is None:
                data.pop(key, None)
        for role in data["models"].values():
            for key in ("timeout_s", "max_concurrency", "max_retries"):
                role.pop(key)
        return data

    def recorded_identity(self, profile: Profile, agent_fingerprint: Mapping[str, str] | None = None) -> dict[str, Any]:
        """The identity as a run stores it: the profile by name, content hash, directory and sampling defaults, and
        the agent's fingerprint when it has one."""
        sampling = {role: dict(values) for role, values in profile.sampling.items()}
        recorded = {**self.identity(), "profile": {**profile.identity(), "path": profile.path, "sampling": sampling}}
        return {**recorded, "agent_fingerprint": dict(agent_fingerprint)} if agent_fingerprint else recorded

    def config_hash(self, task_sets: dict[str, str] | None = None, profile: Profile | None = None,
                    agent_fingerprint: Mapping[str, str] | None = None) -> str:
        """sha256 of the identity, with data paths replaced by the content they hold: a resumed run must match it.

        The run id derives from it, so spelling a data directory relative or absolute names one run; the profile
        counts by name and content, so two runs that differ only in profile never share an id; the agent's
        fingerprint (`Agent.fingerprint`) counts when it is not empty, so runs of agents without one keep their ids.
        """
        identity = self.identity()
        identity["profile"] = (profile or load_profile(self.profile)).identity()
        if agent_fingerprint:
            identity["agent_fingerprint"] = dict(agent_fingerprint)
        if task_sets is not None:
            identity.update(data_dir=None, tasks_file=None, task_sets=task_sets)
            if "persona_file" in identity:
                identity["persona_file"] = "content in task_sets"
        return hashlib.sha256(canonical_json(identity).encode()).hexdigest()


@attrs.frozen
class Unit:
    """One conversation to run."""

    arm: str
    task: Task
    trial: int


@attrs.define
class RunContext:
    """What every conversation of a run shares."""

    run_id: str
    config: RunConfig
    data: DomainData
    agent: Agent
    user: UserSimulator | None
    baseline_agent: Agent
    baseline_user: UserSimulator | None
    judge: Judge | None
    metrics: list[tuple[str, Metric]]
    registry: Registry
    store: Store
    models: ModelHub
    channel: Channel = attrs.field(factory=IdentityChannel)
    evaluation: Evaluation = attrs.field(factory=default_evaluation)
    golds: dict[str, GoldReplay] = attrs.field(factory=dict)
    attributes: dict[str, dict[str, str]] = attrs.field(factory=dict)
    executor: Executor | None = None
    """None plays in this process (what `local` does with one worker)."""
    profile: Profile = attrs.field(factory=lambda: load_profile(None))
    """What the run's models see beyond the task data."""
    store_path: str = ""
    plugins: list[str] | None = None
    """The run's plugins by entry-point name, for workers that rebuild the context (None: every installed one)."""

    def task_attributes(self, task: Task) -> dict[str, str]:
        """The task's attributes for report breakdowns, computed once per run."""
        if task.id not in self.attributes:
            extensions = list(self.registry.components.get("task extension", {}).values())
            self.attributes[task.id] = task_attributes(self.data.name, task, extensions)
        return self.attributes[task.id]

    def gold(self, task: Task) -> GoldReplay:
        """The task's gold replay, computed once per run (it does not depend on the trial)."""
        if task.id not in self.golds:
            self.golds[task.id] = replay_gold(self.data, task)
        return self.golds[task.id]


@attrs.frozen(kw_only=True)
class RunSummary:
    """How a run (or a resumed part of it) went."""

    run_id: str
    resumed: bool
    planned: int
    skipped: int
    finished: int
    status: str
    wall_s: float
    infrastructure_errors: int = 0
    """Conversations of the run stored as infrastructure errors (excluded from scores, re-run on resume)."""
    signal: int | None = None
    """The signal (SIGINT, SIGTERM) that interrupted the run, if one did."""


class RunInterrupted(BenchError):
    """A signal arrived before the run began: nothing was stored."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name} before the run began; nothing was stored")
        self.signum = signum


def load_domain(registry: Registry, config: RunConfig) -> DomainData:
    """Pick the run's domain and load its data and tasks."""
    name = config.domain or _only_domain(registry)
    domain: Domain = registry.get("domain", name)
    options = DomainOptions(
        data_dir=Path(config.data_dir) if config.data_dir else None,
        tasks_file=Path(config.tasks_file) if config.tasks_file else None,
        split=config.split,
        vocabulary=task_vocabulary(registry),
    )
    plugin = registry.origin("domain", name)
    where = config.tasks_file or config.data_dir or f"the {plugin} plugin's packaged suite"
    try:
        data = domain.load(options)
    except BenchError:
        raise
    except Exception as exc:
        raise ConfigError(f"domain {name!r} (plugin {plugin!r}) could not load {where}: {type(exc).__name__}: {exc}") from exc
    check_toolkits(data, plugin)
    check_fit(data, str(where))
    data = _with_personas(registry, config, data)
    problems = task_problems(data.tasks, options.vocabulary.extensions if options.vocabulary else ())
    return attrs.evolve(data, task_problems=data.task_problems + problems) if problems else data


def _with_personas(registry: Registry, config: RunConfig, data: DomainData) -> DomainData:
    """Persona keys of the tasks (or the run's --persona) replaced by their texts."""
    registered = [registry.get("persona", name) for name in registry.names("persona")]
    overrides = read_persona_file(Path(config.persona_file)) if config.persona_file else None
    texts = persona_texts(registered, data.name, overrides)
    tasks = apply_personas(data.tasks, texts, forced=config.persona)
    return data if tasks == data.tasks else attrs.evolve(data, tasks=tasks)


def _only_domain(registry: Registry) -> str:
    names = registry.names("domain")
    if len(names) != 1:
        raise ConfigError(f"choose a domain with --domain (loaded: {', '.join(names) or 'none'}; add --plugin NAME)")
    return names[0]


def select_tasks(data: DomainData, config: RunConfig) -> list[Task]:
    """The run's tasks: the split's (already applied), then --task-id, then --num-tasks."""
    tasks = data.tasks
    if config.task_ids:
        known = {t.id for t in tasks}
        missing = [i for i in config.task_ids if i not in known]
        if missing:
            raise ConfigError(f"unknown task ids in domain {data.name!r}: {', '.join(missing)}")
        tasks = [t for t in tasks if t.id in set(config.task_ids)]
    if config.num_tasks is not None:
        tasks = tasks[: config.num_tasks]
    if not tasks:
        raise ConfigError(f"no tasks selected in domain {data.name!r}")
    return tasks


def shifted_tasks(data: DomainData, tasks: list[Task], config: RunConfig, registry: Registry | None = None) -> list[Task]:
    """The run's tasks chained into goal-shift tasks when the run asks for it (--shifts, --shift-plan), or when a
    loaded metric measures shifts (`default_shifts`, e.g. bench-gsrt) and the tasks have no shifts of their own."""
    shifts = config.shifts or (_default_shifts(registry, tasks) if not config.shift_plan else None)
    if not shifts and not config.shift_plan:
        return tasks

    def sound(task: Task) -> bool:
        try:
            gold = replay_gold(data, task)
        except Exception:  # noqa: BLE001 - set-ups that contradict each other (two suspensions of one line)
            return False
        return not gold.action_errors and all(c.met for c in gold.assertion_checks)

    if config.shift_plan:
        return named_chains(read_plan_file(Path(config.shift_plan)), data.tasks, sound, config.turns_per_goal)
    return plan_chains(tasks, data.tasks, shifts or 0, sound, config.turns_per_goal)


def _default_shifts(registry: Registry | None, tasks: list[Task]) -> int | None:
    if registry is None or any("goal_shifts" in t.extensions for t in tasks):
        return None  # tasks that carry their own goal shifts (AgentChangeBench's) are run as they are
    wanted = [getattr(m, "default_shifts", None) for m in registry.components.get("metric", {}).values()]
    found = max((w for w in wanted if isinstance(w, int) and w > 0), default=None)
    if found:
        log.info("run.shifts", shifts=found, why="a loaded metric measures goal shifts; --shifts or --shift-plan to choose")
    return found


def sweep_arms(config: RunConfig) -> list[str]:
    """The arms a sweep adds: "key=value" for every value but the first (which is the agent arm's)."""
    return [f"{key}={json.dumps(value)}" for key, values in (config.sweep or {}).items() for value in values[1:]]


def arm_channel_options(config: RunConfig, arm: str) -> dict[str, Any]:
    """The channel options a conversation of this arm plays with (a sweep value overrides the run's)."""
    options = dict(config.channel_options or {})
    for key, values in (config.sweep or {}).items():
        if values:
            options[key] = values[0]
    key, sep, raw = arm.partition("=")
    if sep and config.sweep and key in config.sweep:
        options[key] = json.loads(raw)
    return options


def evaluated(arm: str) -> bool:
    """True for arms that play the evaluated agent (agent, text, sweep arms), False for the baseline."""
    return arm in EVALUATED_ARMS or "=" in arm


def plan_units(tasks: list[Task], config: RunConfig, done: set[tuple[str, str, int]]) -> tuple[list[Unit], int]:
    """Units still to run (trial-major, as tau2 orders them) and how many were already done."""
    wanted = [Unit("agent", task, trial) for trial in range(config.trials) for task in tasks]
    if config.paired:
        wanted += [Unit(TEXT_ARM, task, trial) for trial in range(config.trials) for task in tasks]
    for arm in sweep_arms(config):
        wanted += [Unit(arm, task, trial) for trial in range(config.trials) for task in tasks]
    if config.baseline and config.agent != BASELINE_AGENT:
        wanted += [Unit("baseline", task, 0) for task in tasks]
    todo = [u for u in wanted if (u.arm, u.task.id, u.trial) not in done]
    return todo, len(wanted) - len(todo)


def _check_judge(tasks: list[Task], judge: Judge | None) -> None:
    if judge is not None:
        return
    # Only tasks that have assertions to judge need a judge (tau2 retail: 40 such tasks, not every NL-basis one).
    needing = [t.id for t in tasks if t.evaluation_criteria and t.evaluation_criteria.nl_assertions_to_judge()]
    if needing:
        raise ConfigError(f"{len(needing)} of {len(tasks)} tasks have NL assertions to judge (e.g. {needing[0]!r}): "
                          "choose a judge with --judge")


def with_channel_defaults(config: RunConfig, channel: Channel) -> RunConfig:
    """The configuration with the channel's own defaults for the model roles it needs and the run left unconfigured."""
    missing = {role: spec for role, spec in channel.default_models.items() if role not in config.models}
    if not missing:
        return config
    added = {role: structure(dict(spec), ModelConfig, source=f"channel {channel.name!r} default for {role}")
             for role, spec in missing.items()}
    return attrs.evolve(config, models={**config.models, **added})


def _check_model_roles(config: RunConfig, components: list[Any]) -> None:
    for component in components:
        for role in getattr(component, "model_roles", ()) if component is not None else ():
            if role not in config.models:
                raise ConfigError(f"{component.name!r} needs a model for the {role} role: "
                                  f"give {role_option_hint(role)} or [models.{role}] in a run file")


@attrs.frozen(kw_only=True)
class _Resolved:
    """Every component a run names, resolved before the store is touched."""

    agent: Agent
    user: UserSimulator | None
    baseline_agent: Agent
    baseline_user: UserSimulator | None
    judge: Judge | None
    channel: Channel
    evaluation: Evaluation
    metrics: list[tuple[str, Metric]]


def agent_fingerprint(agent: Agent, options: Mapping[str, Any], plugin: str | None = None) -> dict[str, str]:
    """The agent's fingerprint, checked: a str -> str mapping; a failing or malformed one refuses the run."""
    where = f"agent {agent.name!r}" + (f" (plugin {plugin!r})" if plugin else "")
    try:
        found = agent.fingerprint(options)
    except BenchError:
        raise
    except Exception as exc:
        raise ConfigError(f"{where} could not compute its fingerprint: {type(exc).__name__}: {exc}") from exc
    if not isinstance(found, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in found.items()):
        raise ConfigError(f"{where}: fingerprint() must return a dict of str to str, got {found!r:.200}")
    return dict(found)


def resolve_components(registry: Registry, config: RunConfig, data: DomainData, tasks: list[Task]) -> _Resolved:
    """Resolve names and refuse what cannot work, so that a mistyped --agent never leaves a begun run behind."""
    data.policy_for(config.mode)  # a mode the domain does not support is refused here, not per conversation
    solo = config.mode is Mode.NO_USER
    resolved = _Resolved(
        agent=registry.get("agent", config.agent),
        user=None if solo else registry.get("user simulator", scripted_user(config.user, data)),
        baseline_agent=registry.get("agent", BASELINE_AGENT),
        baseline_user=None if solo else registry.get("user simulator", scripted_user(BASELINE_USER, data)),
        judge=registry.get("judge", config.judge) if config.judge else None,
        channel=registry.get("channel", config.channel),
        evaluation=Evaluation(components=registry.components.get("reward component", {}),
                              rules=registry.components.get("combination rule", {})),
        metrics=[(registry.origin("metric", n), m) for n, m in registry.components.get("metric", {}).items()],
    )
    resolved.evaluation.validate(tasks)
    _check_judge(tasks, resolved.judge)
    _check_model_roles(config, [resolved.agent, resolved.user, resolved.judge, resolved.channel,
                                *(m for _, m in resolved.metrics)])
    return resolved


def profile_fits(profile: Profile, data: DomainData, tasks: Sequence[Task], mode: Mode) -> None:
    """Refuse, before anything is stored, a profile whose tool schemas do not cover the tools the domain offers."""
    if not tasks or not profile.covers(data.name):
        return
    solo = mode is Mode.NO_USER
    env = build_environment(data, tasks[0], solo=solo)
    profile.present_tools(data.name, "agent", env.agent_schemas(), solo=solo)
    user_tools = env.user_schemas()
    if user_tools is not None:
        profile.present_tools(data.name, "user", user_tools)


def scripted_user(name: str, data: DomainData) -> str:
    """The user simulator a run gets for `name`: the domain's own scripted user in place of the kernel's."""
    return data.scripted_user if name == BASELINE_USER and data.scripted_user else name


def task_vocabulary(registry: Registry) -> TaskVocabulary:
    """What the loaded plugins let task files say, with the owners of every installed plugin's fields for error hints."""
    return TaskVocabulary(extensions=list(registry.components.get("task extension", {}).values()),
                          reward_components=frozenset(registry.components.get("reward component", {})),
                          reward_rules=frozenset(registry.components.get("combination rule", {})),
                          owners=_installed_owners)


def _installed_owners() -> dict[str, str]:
    registry = collect(get_plugin_manager(None))
    return {ext.location: registry.origin("task extension", name)
            for name, ext in registry.components.get("task extension", {}).items()}


async def prepare(config: RunConfig, store_path: Path | str,
                  plugins: PluginSet | None = None) -> tuple[RunContext, list[Unit], int, bool]:
    """Load plugins, domain and tasks, check model credentials, open the store, begin or resume the run, plan it."""
    plugins = plugins or get_plugin_manager(with_backend_plugins(config.plugins, [m.backend for m in config.models.values()]))
    registry = collect(plugins)
    data = load_domain(registry, config)
    tasks = shifted_tasks(data, select_tasks(data, config), config, registry)
    config = with_channel_defaults(config, registry.get("channel", config.channel))
    parts = resolve_components(registry, config, data, tasks)
    fingerprint = agent_fingerprint(parts.agent, config.agent_options, registry.origin("agent", config.agent))
    executor: Executor = registry.get("executor", config.executor)
    executor.check(config)
    profile = load_profile(config.profile)
    profile_fits(profile, data, tasks, config.mode)
    golds, failures = gold_failures(data, tasks)
    refuse_unscorable(data, tasks, failures, allowed=config.allow_broken_tasks)
    models = ModelHub(configs=profile.with_sampling(config.models), backends=registry.components.get("model", {}),
                      use_cache=config.cache, max_cost=config.max_cost, prices={**DEFAULT_PRICES, **config.prices},
                      concurrency=config.concurrency, max_in_flight=config.max_in_flight)
    for limit in models.throttled():
        log.warning("model.in_flight_below_concurrency", endpoint=limit.endpoint, roles=limit.roles,
                    max_in_flight=limit.limit, concurrency=config.concurrency, source=limit.source)
    try:
        await models.check()
    except BaseException:
        await models.aclose()
        raise
    store = open_store(store_path, registry.migrations)
    models.store = store
    task_sets = {data.name: data.content_hash()}
    config_hash = config.config_hash(task_sets, profile, fingerprint)
    run_id = config.run_id or f"{data.name}-{config.agent}-{config_hash[:8]}"
    loaded = [unstructure(p) for p in plugins.plugins if p.error is None]
    try:
        new = store.begin_run(run_id, config.recorded_identity(profile, fingerprint), config_hash, loaded,
                              task_sets, config.seed)
    except BaseException:
        store.close()
        await models.aclose()
        raise
    try:
        models.spent = store.run_spend(run_id)  # the cost cap covers every resume of the run
        if failures:  # what the report lists: tasks whose rewards are not meaningful, or scored as the reference does
            store.add_event(run_id, GOLD_FAILURES_EVENT, {"tasks": failures})
        ctx = RunContext(
            run_id=run_id, config=config, data=data, agent=parts.agent, user=parts.user, baseline_agent=parts.baseline_agent,
            baseline_user=parts.baseline_user, judge=parts.judge, metrics=parts.metrics, registry=registry, store=store,
            models=models, channel=parts.channel, evaluation=parts.evaluation, executor=executor,
            store_path=str(store_path), plugins=_entry_point_names(plugins), profile=profile, golds=golds,
        )
        units, skipped = plan_units(tasks, config, store.finished_units(run_id))
    except BaseException:
        store.set_status(run_id, "interrupted")  # gives the lease back
        store.close()
        await models.aclose()
        raise
    return ctx, units, skipped, not new


def gold_failures(data: DomainData, tasks: Sequence[Task]) -> tuple[dict[str, GoldReplay], list[dict[str, Any]]]:
    """Every task's gold replay, and the tasks whose gold actions fail or whose env assertions fail on the gold state.

    Each failure is {task_id, problems, scored_as_reference}: the last is True when the only problems are failing gold
    actions and the domain's reference implementation scores such tasks anyway (`DomainData.failed_gold_actions_scored`).
    A set-up that raises is left to the conversations, which record it as an infrastructure error (never a score).
    """
    golds: dict[str, GoldReplay] = {}
    failures: list[dict[str, Any]] = []
    for task in tasks:
        try:
            gold = golds[task.id] = replay_gold(data, task)
        except Exception:  # noqa: BLE001 - a set-up that raises fails each conversation as an infrastructure error
            continue  # (stored, excluded from every score, re-run on resume): never scored, so not refused here
        assertions = [f"env assertion {c.subject} fails on the gold state: {c.detail}" for c in gold.assertion_checks if not c.met]
        problems = [f"gold action {error}" for error in gold.action_errors] + assertions
        if problems:
            failures.append({"task_id": task.id, "problems": problems,
                             "scored_as_reference": data.failed_gold_actions_scored and not assertions})
    return golds, failures


def refuse_unscorable(data: DomainData, tasks: Sequence[Task], failures: Sequence[Mapping[str, Any]], *, allowed: bool) -> None:
    """Refuse a run whose tasks cannot be scored (their gold replay fails), unless it allows broken tasks."""
    refused = [f for f in failures if not f["scored_as_reference"]]
    if not refused:
        return
    if allowed:
        log.warning("run.broken_tasks", tasks=[f["task_id"] for f in refused], why="--allow-broken-tasks: rewards not meaningful")
        return
    shown = [f"{f['task_id']} ({'; '.join(f['problems'])})" for f in refused[:MAX_LISTED]]
    more = f"; and {len(refused) - MAX_LISTED} more (`bench check` lists them all)" if len(refused) > MAX_LISTED else ""
    raise ConfigError(
        f"{len(refused)} of {len(tasks)} selected tasks of domain {data.name!r} cannot be scored, their gold replay fails "
        f"(as `bench check` reports; a correct agent would not score 1): {'; '.join(shown)}{more}. Fix the tasks, leave "
        "them out (--task-id, --num-tasks, --split) or run them anyway with --allow-broken-tasks (the report then lists "
        "them and says their rewards are not meaningful)")


def _entry_point_names(plugins: PluginSet) -> list[str]:
    """The loaded plugins as `--plugin` names a worker loads again (built-ins always load)."""
    return [p.name for p in plugins.plugins if not p.builtin and p.error is None]


def in_flight_record(ctx: RunContext) -> dict[str, Any]:
    """The run's effective in-flight limits, as its run.started (or run.resumed) event keeps them."""
    return {"concurrency": ctx.config.concurrency,
            "in_flight": [unstructure(limit) for limit in ctx.models.in_flight_limits()]}


async def execute(ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None] | None = None) -> int:
    """Run units with at most config.concurrency in flight; return how many finished."""
    queue: Iterator[Unit] = iter(units)
    finished = 0

    async def worker() -> None:
        nonlocal finished
        for unit in queue:
            if ctx.models.exhausted:
                return
            result = await run_unit(ctx, unit)
            finished += 1
            if on_finished is not None:
                on_finished(result)
            # A conversation that never waits (offline participants) would otherwise hold the loop for the whole
            # run: yielding once per conversation lets signals and the heartbeat in.
            await asyncio.sleep(0)

    workers = max(1, min(ctx.config.concurrency, len(units)))
    await asyncio.gather(*(worker() for _ in range(workers)))
    return finished


def run(config: RunConfig, store_path: Path | str, *, plugins: PluginSet | None = None,
        on_start: Callable[[RunContext, int, int], None] | None = None,
        on_finished: Callable[[ConversationResult], None] | None = None, handle_signals: bool = False) -> RunSummary:
    """Run (or resume) a suite and store every conversation as it ends.

    With handle_signals, SIGINT and SIGTERM stop the run cleanly: conversations in flight are dropped
    (nothing half-written), the run is marked interrupted and the summary names the signal.
    """
    return asyncio.run(run_async(config, store_path, plugins=plugins, on_start=on_start, on_finished=on_finished,
                                 handle_signals=handle_signals))


async def run_async(config: RunConfig, store_path: Path | str, *, plugins: PluginSet | None = None,
                    on_start: Callable[[RunContext, int, int], None] | None = None,
                    on_finished: Callable[[ConversationResult], None] | None = None,
                    handle_signals: bool = False) -> RunSummary:
    """`run`, inside a running event loop (model clients live on the loop that created them)."""
    started = time.perf_counter()
    with _cancel_on_signals(handle_signals) as interrupts:
        try:
            ctx, units, skipped, resumed = await prepare(config, store_path, plugins)
        except asyncio.CancelledError:
            if interrupts.signum is None:
                raise
            _uncancel()
            raise RunInterrupted(interrupts.signum) from None
        bind_context(run_id=ctx.run_id)
        finished, status, counts = await _run_prepared(ctx, units, skipped, resumed, on_start, on_finished, interrupts)
    return RunSummary(run_id=ctx.run_id, resumed=resumed, planned=len(units) + skipped, skipped=skipped,
                      finished=finished, status=status, wall_s=time.perf_counter() - started,
                      infrastructure_errors=counts["infrastructure_errors"], signal=interrupts.signum)


async def _run_prepared(ctx: RunContext, units: list[Unit], skipped: int, resumed: bool,
                        on_start: Callable[[RunContext, int, int], None] | None,
                        on_finished: Callable[[ConversationResult], None] | None,
                        interrupts: _Interrupts) -> tuple[int, str, dict[str, int]]:
    """Execute a begun run, record how it ended and give back its lease, whatever happens."""
    finished = 0

    def counted(result: ConversationResult) -> None:
        nonlocal finished
        finished += 1
        if on_finished is not None:
            on_finished(result)

    beat = asyncio.create_task(_heartbeat(ctx.store, ctx.run_id))
    try:
        if on_start is not None:
            on_start(ctx, len(units), skipped)
        ctx.store.add_event(ctx.run_id, "run.resumed" if resumed else "run.started",
                            {"to_run": len(units), "stored": skipped, **in_flight_record(ctx)})
        stopped_early = False
        try:
            stopped_early = await _execute_with_deadline(ctx, units, counted)
        except asyncio.CancelledError:
            if interrupts.signum is None:
                raise
            _uncancel()
        interrupts.armed = False  # from here on the run ends by itself: what it stored is recorded whatever comes
        counts = ctx.store.unit_counts(ctx.run_id)
        signum = interrupts.signum
        status = "interrupted" if signum else run_status(counts, planned=len(units) + skipped, stopped_early=stopped_early)
        ctx.store.set_status(ctx.run_id, status)
        ctx.store.add_event(ctx.run_id, f"run.{status}", {"finished": finished, **counts,
                                                          **({"signal": signal.Signals(signum).name} if signum else {})})
    except BaseException:
        with contextlib.suppress(Exception):  # the original failure matters more than this bookkeeping
            ctx.store.set_status(ctx.run_id, "interrupted")
        raise
    finally:
        beat.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await beat
        ctx.store.close()
    return finished, status, counts


async def _heartbeat(store: Store, run_id: str) -> None:
    while True:
        await asyncio.sleep(HEARTBEAT_S)
        try:
            store.heartbeat(run_id)
        except sqlite3.Error as exc:  # a missed beat is retried; only a long silence gives the run away
            log.warning("run.heartbeat_failed", error=repr(exc))


@attrs.define
class _Interrupts:
    """SIGINT and SIGTERM while installed: the first one is recorded and, while armed, cancels the run's task."""

    task: asyncio.Task[Any] | None = None
    armed: bool = True
    signum: int | None = None
    """The signal that cancelled the task (None if none did)."""
    installed: list[int] = attrs.field(factory=list)

    def handle(self, signum: int) -> None:
        """Stop the run on the first signal; a second one acts as usual (the handlers are gone)."""
        self.uninstall()
        if self.armed and self.task is not None:
            self.signum = signum
            self.task.cancel()

    def uninstall(self) -> None:
        """Give the signals back to their default handlers."""
        loop = asyncio.get_running_loop()
        while self.installed:
            loop.remove_signal_handler(self.installed.pop())


@contextlib.contextmanager
def _cancel_on_signals(enabled: bool) -> Iterator[_Interrupts]:
    interrupts = _Interrupts(task=asyncio.current_task(), armed=enabled)
    if enabled:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, interrupts.handle, sig)
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or no signals here
                continue
            interrupts.installed.append(sig)
    try:
        yield interrupts
    finally:
        interrupts.uninstall()


def _uncancel() -> None:
    task = asyncio.current_task()
    if task is not None:
        task.uncancel()


def run_status(counts: dict[str, int], *, planned: int, stopped_early: bool) -> str:
    """complete only when every planned unit finished; failed when every one ended in an infrastructure error.

    A run stopped by its deadline or cost cap is incomplete (resumable), whatever it stored.
    """
    infra, stored = counts["infrastructure_errors"], counts["stored"]
    if stopped_early:
        return "incomplete"
    if stored and infra == stored:
        return "failed"
    if infra or stored - infra < planned:
        return "incomplete"
    return "complete"


async def _execute_with_deadline(ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None]) -> bool:
    """Execute the units; True when the deadline or the cost cap stopped them early."""
    try:
        async with asyncio.timeout(ctx.config.run_timeout_s), _collector_for_conversations():
            if ctx.executor is None:
                await execute(ctx, units, on_finished)
            else:
                await ctx.executor.execute(ctx, units, on_finished)
    except TimeoutError:
        log.warning("run.timeout", planned=len(units))
        return True
    finally:
        await ctx.models.aclose()
    if ctx.models.exhausted:
        log.warning("run.budget_reached", spent=ctx.models.spent)
        return True
    return False


@contextlib.asynccontextmanager
async def _collector_for_conversations() -> AsyncIterator[None]:
    """Cyclic GC tuned for many conversations in flight, as it was afterwards.

    What set-up built (modules, classes, domain data) is frozen out of every collection, and young collections
    come a tenth as often: conversations allocate short-lived objects by the thousand, nearly all freed by
    reference counting, and each collection pass stalled every conversation in flight.
    """
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(threshold[0], YOUNG_COLLECTION_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


async def run_unit(ctx: RunContext, unit: Unit) -> ConversationResult:
    """Run, evaluate and store one conversation; an unexpected failure is stored as an infrastructure error."""
    bind_context(task_id=unit.task.id, trial=unit.trial, arm=unit.arm)
    started_utc, t0 = utc_now(), time.perf_counter()
    cid = f"{ctx.run_id}/{unit.arm}/{unit.task.id}/{unit.trial}"
    models = ConversationModels(ctx.models, run_id=ctx.run_id, conversation_id=cid, arm=unit.arm)
    try:
        result, metrics, rows = await _converse(ctx, unit, models, started_utc, t0)
    except Exception as exc:  # noqa: BLE001 - recorded, excluded from metrics, re-run on resume
        log.error("conversation.infrastructure_error", error=repr(exc))
        result, metrics, rows = _infrastructure_error(ctx, unit, started_utc, t0, exc), [], []
    ctx.store.save_conversation(result, metrics, plugin_rows=rows)
    return result


async def _converse(ctx: RunContext, unit: Unit, models: ConversationModels, started_utc: str,
                    t0: float) -> tuple[ConversationResult, list[MetricValue], list[PluginRows]]:
    config, task = ctx.config, unit.task
    agent, user = (ctx.agent, ctx.user) if evaluated(unit.arm) else (ctx.baseline_agent, ctx.baseline_user)
    channel = IdentityChannel() if unit.arm == TEXT_ARM else ctx.channel
    profile = ctx.profile
    seed = profile.conversation_seed(config.seed, task.id, unit.trial)
    env = build_environment(ctx.data, task, solo=config.mode is Mode.NO_USER)
    opening = task.initial_state.message_history or [] if task.initial_state else []
    history = stamp_history(initial_messages(opening, config.mode, profile.greeting))
    events = EventLog()
    user_tools = env.user_schemas(task.user_tools)
    setup = ConversationSetup(
        task=task, domain=ctx.data.name, mode=config.mode, seed=seed, policy=ctx.data.policy_for(config.mode),
        agent_tools=profile.present_tools(ctx.data.name, "agent", env.agent_schemas(), solo=config.mode is Mode.NO_USER),
        user_tools=None if user_tools is None else profile.present_tools(ctx.data.name, "user", user_tools),
        history=tuple(history), profile=profile,
        options={"agent": config.agent_options, "user": config.user_options}, services=ctx.registry, models=models,
        events=events, channel=channel.name, channel_options=arm_channel_options(config, unit.arm),
        exposure=config.exposure or "none",
    )
    convo = await _play(ctx, agent, user, setup, env, history, events, channel)
    assert convo.termination is not None
    gold = ctx.gold(task)
    reward_info = await evaluate(task, convo.messages, convo.termination, env, gold, judge=ctx.judge, seed=seed,
                                 models=models, evaluation=ctx.evaluation, events=events, profile=profile)
    result = ConversationResult(
        run_id=ctx.run_id, arm=unit.arm, task_id=task.id, trial=unit.trial, seed=seed, agent=agent.name,
        user=user.name if user is not None else "none", termination_reason=convo.termination, messages=convo.messages,
        reward_info=reward_info, started_utc=started_utc, ended_utc=utc_now(),
        duration_ms=int((time.perf_counter() - t0) * 1000), error=convo.error and redact(convo.error),
        agent_cost=agent_cost(agent, models), user_cost=models.cost("user"), channel=channel.name,
        attributes=ctx.task_attributes(task), events=events.events,  # the log's own list: events the metrics emit below are the result's too
    )
    values, rows = await _plugin_metric_values(ctx, result, MetricInputs(task, events, env, gold, models))
    return result, component_values(result) + values, rows


async def _play(ctx: RunContext, agent: Agent, user: UserSimulator | None, setup: ConversationSetup, env: Environment,
                history: list[Message], events: EventLog, channel_kind: Channel) -> Conversation:
    config = ctx.config
    limits = Limits(max_steps=config.max_steps, max_errors=config.max_errors, timeout_s=config.conversation_timeout_s)
    sessions: list[Any] = []
    termination: TerminationReason | None = None  # stays None when the conversation is cancelled
    try:
        agent_session = agent.start(setup)
        sessions.append(agent_session)
        user_session = user.start(setup) if user is not None else None
        sessions.append(user_session)
        # The identity channel changes nothing: skipping it keeps the hot path as short as it was.
        channel = None if type(channel_kind) is IdentityChannel else channel_kind.start(setup)
        sessions.append(channel)
        unusable = _unusable_sessions(ctx.registry, history, [("agent", agent, agent_session), ("user simulator", user, user_session),
                                                     ("channel", channel_kind, channel)])
        if unusable is not None:
            termination = unusable.termination
            return unusable
        convo = await run_conversation(env, agent_session, user_session, mode=config.mode, history=history,
                                       limits=limits, channel=channel, events=events)
        termination = convo.termination
        return convo
    except Exception:
        termination = TerminationReason.INFRASTRUCTURE_ERROR
        raise
    finally:
        for session in sessions:
            if isinstance(session, AgentSession | UserSession):
                session.termination = termination  # what close() may tell the participant's own service
            if session is not None:
                await session.close()


def _unusable_sessions(registry: Registry, history: list[Message], sessions: list[tuple[str, Any, Any]]) -> Conversation | None:
    """A sync `respond` (or channel method) shows here, before the first await, as an error naming plugin and class.

    Sessions whose class `start` declares were checked at registration; this catches the others.
    An agent's or user's mistake ends the conversation as that participant's error; a channel's is the run's own.
    """
    for kind, component, session in sessions:
        if session is None:
            continue
        problem = session_problem(kind, component, session, _origin(registry, kind, component.name))
        if problem is None:
            continue
        if kind == "channel":
            raise ParticipantError(problem)
        reason = TerminationReason.AGENT_ERROR if kind == "agent" else TerminationReason.USER_ERROR
        log.error("conversation.unusable_session", error=problem)
        who = "agent" if kind == "agent" else "user"
        return Conversation(messages=list(history), termination=reason, error=f"{who}: ParticipantError: {problem}")
    return None


def _origin(registry: Registry, kind: str, name: str) -> str | None:
    return registry.origins.get((kind, name))


def agent_cost(agent: Agent, models: ConversationModels) -> float | None:
    """The agent's cost in one conversation: its ledgered calls' sum, or None (unknown) when bench saw none of the
    calls an agent that calls models itself may have made."""
    if agent.calls_models_itself and not any(entry.role == "agent" for entry in models.ledger):
        return None
    return models.cost("agent")


def component_values(result: ConversationResult) -> list[MetricValue]:
    """The reward and every reward component of a conversation, as metric values."""
    info = result.reward_info
    values = [MetricValue(metric="reward", plugin=KERNEL, value=result.reward,
                          details={"basis": list(info.reward_basis), "rule": info.rule, "note": info.note} if info else None)]
    for c in info.components if info else []:
        values.append(MetricValue(metric=f"component.{c.component}", plugin=KERNEL, value=c.score,
                                  details={"checks": unstructure(c.checks), "note": c.note}, error=c.error))
    return values


@attrs.frozen
class MetricInputs:
    """What a conversation leaves for its metrics besides the result."""

    task: Task
    events: EventLog
    final_env: Environment
    gold: GoldReplay
    models: ConversationModels | None = None


async def _plugin_metric_values(ctx: RunContext, result: ConversationResult,
                                inputs: MetricInputs) -> tuple[list[MetricValue], list[PluginRows]]:
    return await score_metrics(ctx.metrics, result, inputs, judge=ctx.judge, profile=ctx.profile)


async def score_metrics(metrics: Sequence[tuple[str, Metric]], result: ConversationResult, inputs: MetricInputs, *,
                        judge: Judge | None = None, profile: Profile | None = None) -> tuple[list[MetricValue], list[PluginRows]]:
    """Every (plugin, metric) scored on one finished conversation; a failing metric becomes an error value, never an exception.

    Runs call it for each conversation; importers call it for conversations built elsewhere.
    """
    values: list[MetricValue] = []
    rows: list[PluginRows] = []
    for plugin, metric in metrics:
        context = MetricContext(task=inputs.task, result=result, events=inputs.events, final_env=inputs.final_env,
                                gold=inputs.gold, judge=judge, models=inputs.models,
                                role=metric.model_roles[0] if metric.model_roles else None, source=f"{plugin}:{metric.name}",
                                profile=profile or load_profile(None))
        try:
            values += metric_values(plugin, metric.name, await _awaited(metric.score(context)))
        except Exception as exc:  # noqa: BLE001 - one failing metric never stops the others, nor the conversation
            values.append(MetricValue(metric=metric.name, plugin=plugin, value=None, error=f"{type(exc).__name__}: {exc}"))
            continue
        if context.rows:
            rows.append(PluginRows(plugin=plugin, metric=metric.name, rows=list(context.rows)))
    return values, rows


async def _awaited(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


def metric_values(plugin: str, name: str, scored: MetricResult | Mapping[str, float | None]) -> list[MetricValue]:
    """A metric's result as stored values: `name` for the "" key, `name.key` for the others."""
    result = scored if isinstance(scored, MetricResult) else MetricResult(values=scored)
    out = []
    for key, value in result.values.items():
        number = None if value is None else float(value)
        out.append(MetricValue(metric=f"{name}.{key}" if key else name, plugin=plugin, value=number,
                               details=result.details.get(key)))
    return out


def _infrastructure_error(ctx: RunContext, unit: Unit, started_utc: str, t0: float, exc: Exception) -> ConversationResult:
    agent = ctx.agent if evaluated(unit.arm) else ctx.baseline_agent
    user = ctx.user if evaluated(unit.arm) else ctx.baseline_user
    return ConversationResult(
        run_id=ctx.run_id, arm=unit.arm, task_id=unit.task.id, trial=unit.trial,
        seed=ctx.profile.conversation_seed(ctx.config.seed, unit.task.id, unit.trial), agent=agent.name,
        user=user.name if user else "none", termination_reason=TerminationReason.INFRASTRUCTURE_ERROR, messages=[],
        reward_info=None, started_utc=started_utc, ended_utc=utc_now(), duration_ms=int((time.perf_counter() - t0) * 1000),
        error=redact(f"{type(exc).__name__}: {exc}"), attributes=_safe_attributes(ctx, unit.task),
    )


def _safe_attributes(ctx: RunContext, task: Task) -> dict[str, str]:
    try:
        return ctx.task_attributes(task)
    except Exception:  # noqa: BLE001 - an infrastructure error is stored whatever a plugin's attributes do
        return {"domain": ctx.data.name}
