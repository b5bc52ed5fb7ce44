"""Before a run: its domain, tasks, arms and (task, trial) units, its components resolved and checked."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench_kernel.conversation.channels import Channel
from bench_kernel.conversation.loops import LOOP_PLUGINS, ConversationLoop
from bench_kernel.conversation.participants import Agent, UserSimulator
from bench_kernel.errors import BenchError, ConfigError, PluginError, TaskFileError
from bench_kernel.evaluation.evaluator import Replayed
from bench_kernel.evaluation.goldcheck import GoldChecker, ToolFault
from bench_kernel.evaluation.rewards import Evaluation
from bench_kernel.logs import get_logger
from bench_kernel.modelhub.api import DEFAULT_BACKEND, ModelConfig
from bench_kernel.modelhub.hub import role_option_hint
from bench_kernel.plugins import collect, get_plugin_manager, installed_entry_points, load_profile, missing_plugin, with_backend_plugins
from bench_kernel.profiles.profile import Profile
from bench_kernel.registry import Registry
from bench_kernel.run.config import DOMAIN_SETTINGS, PLUGIN_SETTINGS, RECORDED, RunConfig, stored_plugin_settings
from bench_kernel.run.context import RunParts, Unit
from bench_kernel.run.transforms import transformed_domain, unowned_settings
from bench_kernel.schema.messages import Mode
from bench_kernel.schema.results import AGENT, ATTRIBUTION_LABELS, JUDGE
from bench_kernel.schema.tasks import Task
from bench_kernel.serialization import canonical_json, structure
from bench_kernel.store.store import RunRecord, Store
from bench_kernel.tasks.domain import Domain, DomainData, DomainOptions, build_environment
from bench_kernel.tasks.extensions import PLUGIN_COMPONENTS, TaskVocabulary, task_problems
from bench_kernel.tasks.fit import check_fit, check_toolkits
from bench_kernel.tasks.lazy import LazyTasks, task_ids

log = get_logger()
BASELINE_AGENT = "do-nothing"
BASELINE_USER = "scripted"
TEXT_ARM = "text"
"""The arm of a paired run that plays each agent conversation again without the channel."""
EVALUATED_ARMS = frozenset({"agent", TEXT_ARM})
RETRY_EVENT = "run.retry_attributed"
"""The run event listing the replays of a `--retry-attributed` pass [arm, task, trial, retry], so a resume finishes it."""
MAX_LISTED = 20
"""Broken tasks a refusal names one by one."""
KEPT_REPLAYS = 512
"""Gold checks a run keeps for its first scores (each holds an environment): larger task sets replay the rest then."""


def load_domain(registry: Registry, config: RunConfig, *, every_task: bool = False) -> DomainData:
    """Pick the run's domain and load its data and tasks (lazy tasks narrowed to the run's unless `every_task`: docs/plugins.md)."""
    names = registry.names("domain")
    if not config.domain and len(names) != 1:
        raise ConfigError(f"choose a domain with --domain (loaded: {', '.join(names) or 'none'}; add --plugin NAME)")
    name = config.domain or names[0]
    domain: Domain = registry.get("domain", name)
    options = DomainOptions(
        data_dir=Path(config.data_dir) if config.data_dir else None,
        tasks_file=Path(config.tasks_file) if config.tasks_file else None,
        split=config.split,
        vocabulary=task_vocabulary(registry),
        retrieval=config.retrieval,
        retrieval_options={k: str(v) for k, v in (config.retrieval_options or {}).items()},
        profile=load_profile(config.profile),
    )
    plugin = registry.origin("domain", name)
    where = config.tasks_file or config.data_dir or f"the {plugin} plugin's packaged suite"
    try:
        data = domain.load(options)
    except TaskFileError as exc:  # its path may lie deep in site-packages: say whose tasks they are
        raise TaskFileError(exc.path, exc.problems, owner=f"plugin {plugin!r}: domain {name!r}") from exc
    except BenchError:
        raise
    except Exception as exc:
        raise ConfigError(f"domain {name!r} (plugin {plugin!r}) could not load {where}: {type(exc).__name__}: {exc}") from exc
    if (config.retrieval is not None or config.retrieval_options) and data.retrieval is None:
        raise ConfigError(f"domain {name!r} (plugin {plugin!r}) has no knowledge-retrieval variants: drop --retrieval")
    check_toolkits(data, plugin)
    data = transformed_domain(registry, config, data)
    if isinstance(data.tasks, LazyTasks) and not every_task and (config.task_ids or config.num_tasks is not None):
        data = attrs.evolve(data, tasks=data.tasks.narrowed(selected_ids(data.tasks, config)))
    check_fit(data, str(where))
    problems = task_problems(data.tasks, options.vocabulary.extensions if options.vocabulary else ())
    return attrs.evolve(data, task_problems=data.task_problems + problems) if problems else data


def load_run_domain(run: RunRecord, registry: Registry | None = None) -> DomainData:
    """A stored run's domain data loaded as the run loaded it (its domain settings; `registry`, else the run's plugins)."""
    # The run's plugins also when `registry` lacks a first-party owner of the run's settings (personas).
    settings = {key: run.config[key] for key in DOMAIN_SETTINGS if run.config.get(key) is not None}
    config = RunConfig(**settings, plugin_settings=stored_plugin_settings(run.config))
    if registry is None or any(key in PLUGIN_SETTINGS for key in unowned_settings(registry, config)):
        registry = collect(get_plugin_manager(with_backend_plugins(run.config.get("plugins"), config.implied_plugins())))
    return load_domain(registry, config)


def domain_changed(run: RunRecord, data: DomainData) -> str | None:
    """What changed in the domain's tasks or policy since the run (their content hash differs), or None."""
    stored = run.task_sets.get(data.name)
    if stored in (None, data.content_hash()):
        return None
    return f"the tasks or policy of domain {data.name!r} changed since run {run.id!r}"


def select_tasks(data: DomainData, config: RunConfig) -> list[Task]:
    """The run's tasks: the split's (already applied), then --task-id, then --num-tasks."""
    if config.task_ids:
        known = set(task_ids(data.tasks))
        missing = [i for i in config.task_ids if i not in known]
        if missing:
            raise ConfigError(f"unknown task ids in domain {data.name!r}: {', '.join(missing)}")
    chosen = selected_ids(data.tasks, config)
    wanted = set(chosen)  # lazy tasks: only the chosen ones are built
    tasks = list(data.tasks.narrowed(chosen)) if isinstance(data.tasks, LazyTasks) else [t for t in data.tasks if t.id in wanted]
    if not tasks:
        raise ConfigError(f"no tasks selected in domain {data.name!r}")
    return tasks


def selected_ids(tasks: Sequence[Task], config: RunConfig) -> list[str]:
    """The ids of the tasks --task-id and --num-tasks select, in task order (unknown ids left out)."""
    ids = task_ids(tasks)
    if config.task_ids:
        wanted = set(config.task_ids)
        ids = [i for i in ids if i in wanted]
    return ids[: config.num_tasks] if config.num_tasks is not None else ids


def sweep_arms(config: RunConfig) -> list[str]:
    """The arms a sweep adds: "key=value" for every value but the first (which is the agent arm's)."""
    return [f"{key}={json.dumps(value)}" for key, values in (config.sweep or {}).items() for value in values[1:]]


def arm_channel_options(config: RunConfig, arm: str) -> dict[str, Any]:
    """The channel options a conversation of this arm plays with (a sweep value overrides the run's)."""
    sweep = config.sweep or {}
    options = {**(config.channel_options or {}), **{key: values[0] for key, values in sweep.items() if values}}
    key, sep, raw = arm.partition("=")
    return {**options, key: json.loads(raw)} if sep and key in sweep else options


def evaluated(arm: str) -> bool:
    """True for arms that play the evaluated agent (agent, text, sweep arms), False for the baseline."""
    return arm in EVALUATED_ARMS or "=" in arm


def plan_stored(store: Store, run_id: str, tasks: list[Task], config: RunConfig) -> tuple[list[Unit], int]:
    """The units a run still plays (trial-major, as tau2 orders them; then `--retry-attributed`'s replays), and how many it had stored."""
    arms = ["agent", *([TEXT_ARM] if config.paired else []), *sweep_arms(config)]
    wanted = [(arm, task, trial) for arm in arms for trial in range(config.trials) for task in tasks]
    if config.baseline and config.agent != BASELINE_AGENT:
        wanted += [("baseline", task, 0) for task in tasks]
    done, retries = store.finished_units(run_id), store.current_retries(run_id)
    # A unit whose newest row is a replay keeps its ordinal: one that ended in an infrastructure error is played again under it.
    units = [Unit(arm, task, trial, retries.get((arm, task.id, trial), 0)) for arm, task, trial in wanted if (arm, task.id, trial) not in done]
    # Judge faults are judged again on resume (bench-judging: `RewardComponent.resume`), never played again.
    labels = [label for label in config.retry_attributed or () if label != JUDGE]
    replays = retry_units(store, run_id, tasks, labels) if labels else []
    # A replayed unit is counted once, as one to play: the run's planned total stays its units'.
    return units + replays, len(wanted) - len(units) - len(replays)


def retry_units(store: Store, run_id: str, tasks: list[Task], labels: Sequence[str]) -> list[Unit]:
    """The replays of one `--retry-attributed` pass: the last pass's unfinished ones (a resume), else a new pass."""
    # A new pass replays the evaluated arms' newest finished rows attributed to one of `labels`, recorded as an event first.
    if AGENT in labels:
        raise ConfigError(
            "--retry-attributed agent: replaying the agent's own failures would report best-of-N trials; "
            "only failures attributed to another party are played again (docs/attribution.md)"
        )
    unknown = sorted(set(labels) - set(ATTRIBUTION_LABELS))
    if unknown:
        raise ConfigError(f"--retry-attributed {unknown[0]!r}: not a label ({', '.join(ATTRIBUTION_LABELS)})")
    by_id = {t.id: t for t in tasks}
    current = store.current_retries(run_id)
    last = store.last_run_event(run_id, (RETRY_EVENT,))
    left = [u for u in (last or {}).get("units", []) if current.get((u[0], u[1], u[2]), 0) < u[3] and u[1] in by_id]
    if left:
        log.info("run.retry_attributed", resumed=len(left), labels=(last or {}).get("labels"))
        return [Unit(arm, by_id[task], trial, retry) for arm, task, trial, retry in left]
    chosen = [
        Unit(arm, by_id[task], trial, retry + 1)
        for arm, task, trial, retry in store.attributed_units(run_id, labels)
        if task in by_id and evaluated(arm)
    ]
    if chosen:
        units = [[u.arm, u.task.id, u.trial, u.retry] for u in chosen]
        store.add_event(run_id, RETRY_EVENT, {"labels": list(labels), "units": units})
    log.info("run.retry_attributed", replays=len(chosen), labels=list(labels))
    return chosen


def _check_tickets(tasks: list[Task]) -> None:
    # Alone, the agent works from the ticket: without one it would be scored on a task nobody told it.
    missing = [t.id for t in tasks if not t.ticket]
    if missing:
        raise ConfigError(
            f"--mode no-user: {len(missing)} of {len(tasks)} tasks have no `ticket`, the task as the agent "
            f"gets it alone (e.g. {missing[0]!r}): give each a ticket in the task file, or leave them out "
            "with --task-id (`bench tasks --format json` says `has_ticket` per task)"
        )


def with_loop_settings(config: RunConfig, registry: Registry, tasks: Sequence[Task]) -> RunConfig:
    """A loop-played run's settings and channel as its loop completes them; loop settings in another mode refused."""
    plugin = LOOP_PLUGINS.get(config.mode.value)
    if plugin is None:
        if config.duplex is not None:
            raise ConfigError("duplex settings (tick, duration, speech complexity) apply to --mode full-duplex only (bench-duplex's)")
        return config
    loop = require_loop(registry, config.mode.value, config.plugins)
    settings, channel = loop.configure(config.duplex, config.channel, list(registry.components.get("channel", {})), tasks)
    return attrs.evolve(config, duplex=settings, channel=channel)


def require_loop(registry: Registry, mode: str, selected: Sequence[str] | None = None) -> ConversationLoop:
    """The loop playing a mode; a run in a mode no loaded plugin plays is refused, naming the distribution (or its block)."""
    if mode in registry.components.get("conversation loop", {}):
        return registry.get("conversation loop", mode)
    plugin = LOOP_PLUGINS[mode]
    if f"no:{plugin}" in (selected or ()):
        raise ConfigError(f"--mode {mode} is played by bench-{plugin}, which this run blocks (--plugin no:{plugin})")
    if plugin in installed_entry_points():
        raise ConfigError(
            f"--mode {mode} is played by the plugin {plugin!r} (bench-{plugin}), installed but not loaded: "
            f"add --plugin {plugin} (or {plugin!r} to the plugins a PluginSet is built with)"
        )
    raise ConfigError(f"--mode {mode} needs bench-{plugin}, which plays {mode} conversations and is not installed: pip install bench-{plugin}")


def require_components(registry: Registry, tasks: Sequence[Task], selected: Sequence[str] | None = None) -> None:
    """Refuse a run whose tasks rest on a first-party distribution's reward component that is not loaded, naming it."""
    loaded = registry.components.get("reward component", {})
    for name, dist in PLUGIN_COMPONENTS.items():
        resting = [t.id for t in tasks if t.evaluation_criteria and name in t.evaluation_criteria.reward_basis]
        if not resting or name in loaded:
            continue
        raise ConfigError(
            f"{len(resting)} of {len(tasks)} tasks rest on the reward component {name} (e.g. {resting[0]!r}), which the "
            f"distribution {dist} registers; it is {missing_plugin(dist.removeprefix('bench-'), selected)}"
        )


def with_component_defaults(config: RunConfig, channel: Channel, agent: Agent | None = None) -> RunConfig:
    """The configuration with the channel's and the agent's own defaults for the model roles they need."""
    # A role the run configured keeps its settings, except that an agent's default backend replaces the default one
    # (`openai`): `--agent realtime --agent-model M --agent-base-url URL` reaches a realtime endpoint, not a chat one.
    models = dict(config.models)
    agent_defaults = agent.default_models(config.agent_options) if agent is not None else {}
    for owner, defaults in ((channel.name, channel.default_models), (agent.name if agent else "", agent_defaults)):
        for role, spec in defaults.items():
            given = models.get(role)
            if given is None:
                models[role] = structure(dict(spec), ModelConfig, source=f"the default {role} model of {owner!r}")
            elif defaults is agent_defaults and given.backend == DEFAULT_BACKEND and spec.get("backend", DEFAULT_BACKEND) != DEFAULT_BACKEND:
                models[role] = attrs.evolve(given, backend=str(spec["backend"]))
    return config if models == config.models else attrs.evolve(config, models=models)


def _check_duplex_only(config: RunConfig, agent: Agent, user: UserSimulator | None) -> None:
    """Refuse, before anything is stored, a participant outside the modes it plays and an exposure the agent lacks."""
    exposure = config.exposure or "none"
    if exposure not in agent.exposures:
        raise ConfigError(f"agent {agent.name!r} cannot be given --exposure {exposure} (it takes: {', '.join(agent.exposures)})")
    for participant in (agent, user) if config.mode is not Mode.FULL_DUPLEX else ():
        if participant is not None and getattr(participant, "duplex_only", False):
            raise ConfigError(f"{participant.name!r} plays only full-duplex conversations: add --mode full-duplex")


def _check_model_roles(config: RunConfig, needs: Sequence[tuple[str, Iterable[str]]]) -> None:
    """Refuse a run without a model for a role that one of `needs` (who, the roles it calls) calls."""
    for who, roles in needs:
        for role in roles:
            if role not in config.models:
                raise ConfigError(f"{who} needs a model for the {role} role: give {role_option_hint(role)} or [models.{role}] in a run file")


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


def code_fingerprints(registry: Registry, parts: RunParts) -> dict[str, str]:
    """The code fingerprints of the run's components (`code_fingerprint`, where not empty), by "KIND NAME"."""
    judge = registry.get("judge", parts.config.judge) if parts.config.judge else None  # as registered, not as `prepare_judge` wraps it
    players = [("agent", parts.agent), ("agent", parts.baseline_agent), ("user simulator", parts.user), ("user simulator", parts.baseline_user)]
    scorers = [(kind, c) for kind in ("metric", "reward component", "combination rule") for c in registry.components.get(kind, {}).values()]
    return checked_fingerprints(registry, [*players, ("channel", parts.channel), ("judge", judge), *scorers])


def checked_fingerprints(registry: Registry, components: Sequence[tuple[str, Any]]) -> dict[str, str]:
    """The non-empty `code_fingerprint` of each (kind, component), by "KIND NAME"; one that is not a str refuses the run."""
    found: dict[str, str] = {}
    for kind, component in components:
        value = getattr(component, "code_fingerprint", "") if component is not None else ""
        if not isinstance(value, str):
            plugin = registry.origins.get((kind, component.name), "?")
            raise ConfigError(
                f"{kind} {component.name!r} (plugin {plugin!r}): code_fingerprint must be a str (e.g. "
                f"source_fingerprint(__file__)), got {value!r:.100}"
            )
        if value:
            found[f"{kind} {component.name}"] = value
    return found


CODE_CHANGED_EVENT = "run.code_changed"
"""A new run that repeats an earlier one but for its components' code: {"since": run id, "changed": [...], "plugins": [...]}."""


def fingerprint_owners(registry: Registry) -> dict[str, str]:
    """The plugin of each "KIND NAME" a code fingerprint is recorded under (`checked_fingerprints`)."""
    named = {(kind, key): component for kind, found in registry.components.items() for key, component in found.items()}
    return {f"{kind} {getattr(named.get((kind, key)), 'name', key)}": plugin for (kind, key), plugin in registry.origins.items()}


def record_code_changes(
    store: Store, run_id: str, identity: Mapping[str, Any], task_sets: Mapping[str, str], owners: Mapping[str, str] | None = None
) -> None:
    """When a new run repeats the latest earlier one but for its code fingerprints, say so (`owners`: `fingerprint_owners`)."""
    mine = json.loads(canonical_json(identity))  # as stored, so lists compare with lists

    def rest(config: Mapping[str, Any]) -> dict[str, Any]:
        return {key: value for key, value in config.items() if key not in RECORDED}

    for other in store.runs_with(domain=mine.get("domain"), agent=mine.get("agent")):
        if other.id == run_id or other.task_sets != task_sets or rest(other.config) != rest(mine):
            continue
        theirs = {**other.config.get("fingerprints", {}), "agent": other.config.get("agent_fingerprint")}
        ours = {**mine.get("fingerprints", {}), "agent": mine.get("agent_fingerprint")}
        keys = [key for key in sorted(set(theirs) | set(ours)) if theirs.get(key) != ours.get(key)]
        labels = {key: f"agent {mine['agent']}" if key == "agent" else key for key in keys}
        changed = list(
            dict.fromkeys(labels[key] + (" (new)" if theirs.get(key) is None else " (gone)" if ours.get(key) is None else "") for key in keys)
        )
        plugins = sorted({(owners or {})[label] for label in labels.values() if label in (owners or {})})
        store.add_event(run_id, CODE_CHANGED_EVENT, {"since": other.id, "changed": changed, "plugins": plugins})
        log.warning("run.code_changed", since=other.id, changed=changed)
        return


def code_change_notice(store: Store, run_id: str) -> str | None:
    """The line a new run's first start prints when it is new because code changed since an earlier run."""
    found = store.last_run_event(run_id, (CODE_CHANGED_EVENT,))
    if found is None or store.last_run_event(run_id, ("run.started",)) is not None:
        return None
    plugins = found.get("plugins") or []
    return (
        (f"plugin{'s' * (len(plugins) > 1)} {', '.join(map(repr, plugins))}: " if plugins else "")
        + f"the code of {', '.join(found['changed'])} changed since run {found['since']}: this is a new run "
        f"({found['since']} is kept; with bench-trust, `bench rescore {found['since']}` scores its conversations again when only "
        "metrics or reward components changed)"
    )


def resolve_components(registry: Registry, config: RunConfig, data: DomainData, tasks: list[Task]) -> RunParts:
    """Resolve names (the config `with_component_defaults`) and refuse what cannot work before anything is stored."""
    config = with_component_defaults(config, registry.get("channel", config.channel), registry.get("agent", config.agent))
    data.policy_for(config.mode)  # a mode the domain does not support is refused here, not per conversation
    solo = config.mode is Mode.NO_USER
    if solo:
        _check_tickets(tasks)
    require_components(registry, tasks, config.plugins)
    evaluation = Evaluation(components=registry.components.get("reward component", {}), rules=registry.components.get("combination rule", {}))
    evaluation.validate(tasks)
    resolved = RunParts(
        config=config,
        agent=registry.get("agent", config.agent),
        user=None if solo else registry.get("user simulator", scripted_user(config.user, data)),
        baseline_agent=registry.get("agent", BASELINE_AGENT),
        baseline_user=None if solo else registry.get("user simulator", scripted_user(BASELINE_USER, data)),
        judge=evaluation.prepare_judge(registry.get("judge", config.judge) if config.judge else None, config, tasks),
        channel=registry.get("channel", config.channel),
        evaluation=evaluation,
        metrics=[(registry.origin("metric", n), m) for n, m in registry.components.get("metric", {}).items()],
    )
    components = [c for c in (resolved.agent, resolved.user, resolved.judge, resolved.channel, *(m for _, m in resolved.metrics)) if c is not None]
    roles = [c.needed_roles(config.agent_options, registry) if isinstance(c, Agent) else getattr(c, "model_roles", ()) for c in components]
    _check_model_roles(config, [(repr(c.name), needed) for c, needed in zip(components, roles, strict=True)])
    _check_duplex_only(config, resolved.agent, resolved.user)
    variant = f" with retrieval {data.retrieval!r}" if data.retrieval else ""
    _check_model_roles(config, [(f"domain {data.name!r}{variant}", data.model_roles)])
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
    return TaskVocabulary(
        extensions=list(registry.components.get("task extension", {}).values()),
        reward_components=frozenset({*registry.components.get("reward component", {}), *PLUGIN_COMPONENTS}),
        reward_rules=frozenset(registry.components.get("combination rule", {})),
        owners=_installed_owners,
    )


def _installed_owners() -> dict[str, str]:
    registry = collect(get_plugin_manager(None))
    return {ext.location: registry.origin("task extension", name) for name, ext in registry.components.get("task extension", {}).items()}


def gold_failures(
    data: DomainData, tasks: Sequence[Task], plugin: str | None = None, replays: dict[str, Replayed] | None = None
) -> list[dict[str, Any]]:
    """The tasks whose gold replay fails, as {task_id, problems, scored_as_reference}; refuses faulty tools (`refuse_tool_faults`)."""
    # scored_as_reference: only gold actions fail and `DomainData.failed_gold_actions_scored`. The gold states
    # are hashed later, per task at its first score (`RunContext.gold`), so a large database is hashed after the first request.
    checker = GoldChecker(data)
    failures: list[dict[str, Any]] = []
    for task in tasks:
        try:
            gold = checker.check(task)
            if replays is not None and len(replays) < KEPT_REPLAYS:  # a run's first score of the task reuses it
                replays[task.id] = gold
        except Exception:  # noqa: BLE001 - a set-up that raises fails each conversation as an infrastructure error
            continue  # (stored, excluded from every score, re-run on resume): never scored, so not refused here
        assertions = [f"env assertion {c.subject} fails on the gold state: {c.detail}" for c in gold.assertion_checks if not c.met]
        problems = [f"gold action {error}" for error in gold.action_errors] + assertions
        if problems:
            failures.append({"task_id": task.id, "problems": problems, "scored_as_reference": data.failed_gold_actions_scored and not assertions})
    refuse_tool_faults(data, checker.faults(), plugin)
    return failures


def refuse_tool_faults(data: DomainData, faults: Sequence[ToolFault], plugin: str | None) -> None:
    """Refuse a domain whose tools edit shared records in place or are not deterministic (no option runs it anyway)."""
    # The first corrupts every later conversation, the second leaves no agent able to match the gold state.
    if not faults:
        return
    same: dict[tuple[str, str | None], list[ToolFault]] = {}  # one problem of one tool, in the tasks it shows on
    for fault in faults:
        same.setdefault((fault.problem, fault.tool or fault.step), []).append(fault)
    shown = [f"({n}) {group[0].describe()}{_also_in([f.task_id for f in group[1:]])}." for n, group in enumerate(same.values(), 1)]
    message = (
        f"domain {data.name!r} cannot be run, {len(faults)} of its tasks show a tool that leaves them unscorable "
        f"whatever the agent does (as `bench check` reports; no conversation is stored): {' '.join(shown)}"
    )
    raise PluginError(plugin, message) if plugin else ConfigError(message)


def _also_in(task_ids: Sequence[str]) -> str:
    if not task_ids:
        return ""
    listed = ", ".join(repr(t) for t in task_ids[:MAX_LISTED])
    return f" (the same in task{'s' if len(task_ids) > 1 else ''} {listed}{' and more' if len(task_ids) > MAX_LISTED else ''})"


def checked_gold(
    data: DomainData, tasks: Sequence[Task], config: RunConfig, plugin: str | None = None, replays: dict[str, Replayed] | None = None
) -> list[dict[str, Any]]:
    """`gold_failures`; a run whose tasks cannot be scored (their gold replay fails) is refused unless it allows broken tasks."""
    failures = gold_failures(data, tasks, plugin, replays)  # `plugin`: the domain's
    refused = [f for f in failures if not f["scored_as_reference"]]
    if refused and config.allow_broken_tasks:
        log.warning("run.broken_tasks", tasks=[f["task_id"] for f in refused], why="--allow-broken-tasks: rewards not meaningful")
    if not refused or config.allow_broken_tasks:
        return failures
    shown = [f"{f['task_id']} ({'; '.join(f['problems'])})" for f in refused[:MAX_LISTED]]
    more = f"; and {len(refused) - MAX_LISTED} more (`bench check` lists them all)" if len(refused) > MAX_LISTED else ""
    raise ConfigError(
        (f"plugin {plugin!r}: " if plugin else "")
        + f"{len(refused)} of {len(tasks)} selected tasks of domain {data.name!r} cannot be scored, their gold replay fails "
        f"(as `bench check` reports; a correct agent would not score 1): {'; '.join(shown)}{more}. Fix the tasks, leave "
        "them out (--task-id, --num-tasks, --split) or run them anyway with --allow-broken-tasks (the report then lists "
        "them and says their rewards are not meaningful)"
    )
