"""The conformance kit for every seam but domains: metrics, channels, agents, user simulators, judges, executors and
report sections.

Use it from a plugin's tests as the domain kit::

    from bench_kernel.testing import ChannelConformance

    class TestChannel(ChannelConformance):
        plugin = "acme"        # the entry-point name in the `bench` group
        name = "walkie"        # the channel's name (needed only when the plugin registers several)

pytest runs every `test_conformance_*` method as a test. Each check is also a plain function that raises
AssertionError with a message naming the plugin and the object at fault. Checks play against the kit's own world
(`kitworld`: a two-task notes domain, the kernel's oracle and scripted user), so no domain is needed. Set `extra` to
register plugin objects beside the plugin (e.g. a scripted model backend), `models` for the roles a component needs,
`options` for participant or channel options. Nothing here imports pytest.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

import attrs

from bench_kernel.conversation.channels import Channel
from bench_kernel.conversation.orchestrator import initial_messages
from bench_kernel.conversation.participants import Agent, ConversationSetup, UserSimulator
from bench_kernel.errors import ConfigError
from bench_kernel.evaluation.metric import Judge, JudgeRequest, Metric
from bench_kernel.evaluation.sections import Report, ReportContext, ReportFormat, ReportSection, Section
from bench_kernel.loadchecks import component_problems, session_problem
from bench_kernel.modelhub.api import ModelConfig
from bench_kernel.modelhub.hub import ConversationModels, ModelHub
from bench_kernel.plugins import PluginSet, always_loaded, collect, get_plugin_manager
from bench_kernel.registry import Registry
from bench_kernel.report.report import build_report, report_builder
from bench_kernel.run.context import Executor
from bench_kernel.run.scoring import score_metrics
from bench_kernel.schema.events import EventLog
from bench_kernel.schema.messages import AssistantMessage, Message, Mode, TerminationReason, UserMessage
from bench_kernel.schema.results import Check
from bench_kernel.store.store import Store
from bench_kernel.store.view import RunView, read_only
from bench_kernel.tasks.domain import build_environment
from bench_kernel.testing.kitworld import (
    KIT_DOMAIN,
    kit_conversations,
    kit_data,
    kit_empty_run,
    kit_plugins,
    kit_run,
    kit_store,
    scored_conversation,
    stored_conversations,
)

PARTICIPANT_FAILURES = ("agent_error", "user_error", "infrastructure_error")
STOPS = ("agent_stop", "user_stop")


# --------------------------------------------------------------------------- loading


def load_component(kind: str, plugin: str, name: str | None = None, *, plugins: PluginSet | None = None) -> Any:
    """The component of one kind the plugin registers (the one called `name` when it registers several)."""
    plugins = plugins or kit_plugins(plugin)
    registry = collect(plugins)
    failed = [p for p in plugins.failures() if p.name == plugin]
    if failed:
        raise AssertionError(f"plugin {plugin!r} failed to load: {failed[0].error}")
    own = {n: c for n, c in registry.components.get(kind, {}).items() if registry.origin(kind, n) == plugin}
    names = {getattr(c, "name", n): c for n, c in own.items()}
    if not names:
        raise AssertionError(f"plugin {plugin!r} registers no {kind}")
    if name is None and len(names) > 1:
        raise AssertionError(f"plugin {plugin!r} registers several {kind}s ({', '.join(sorted(names))}): set `name`")
    if name is not None and name not in names:
        raise AssertionError(f"plugin {plugin!r} registers no {kind} named {name!r} (it registers {', '.join(sorted(names))})")
    return names[name] if name is not None else next(iter(names.values()))


def check_methods(kind: str, component: object, plugin: str) -> None:
    """The component's methods (and its declared session class's) are async where the kernel awaits them."""
    problems = component_problems(kind, component)
    if problems:
        raise AssertionError(f"plugin {plugin!r}: " + "; ".join(problems))


def kit_models(plugins: PluginSet, configs: Mapping[str, ModelConfig]) -> ConversationModels | None:
    """Model access for one kit conversation, through the backends the plugins register (None without configs)."""
    if not configs:
        return None
    hub = ModelHub(configs=dict(configs), backends=collect(plugins).components.get("model", {}))
    return ConversationModels(hub, run_id="kit", conversation_id="kit/agent/write-note/0", arm="agent")


def kit_setup(
    mode: Mode = Mode.DEFAULT,
    *,
    channel: str = "identity",
    options: Mapping[str, Any] | None = None,
    channel_options: Mapping[str, Any] | None = None,
    task_id: str = "write-note",
    models: ConversationModels | None = None,
) -> ConversationSetup:
    """A conversation's set-up in the kit's notes domain (`models` from `kit_models` for components that call them)."""
    data = kit_data()
    task = next(t for t in data.tasks if t.id == task_id)
    env = build_environment(data, task, solo=mode is Mode.NO_USER)
    return ConversationSetup(
        task=task,
        domain=data.name,
        mode=mode,
        seed=0,
        policy=data.policy_for(mode, task),
        agent_tools=env.agent_schemas(),
        user_tools=None,
        history=tuple(initial_messages([], mode)),
        options=dict(options or {}),
        events=EventLog(),
        channel=channel,
        models=models,
        channel_options=dict(channel_options or {}),
    )


def _who(kind: str, component: object, plugin: str) -> str:
    return f"{kind} {getattr(component, 'name', component)!r} of plugin {plugin!r}"


def _await(value: Any, what: str) -> Any:
    if not inspect.isawaitable(value):
        raise AssertionError(f"{what} returned {type(value).__name__}, not an awaitable: write it as `async def`")
    return asyncio.run(_resolved(value))


async def _resolved(value: Any) -> Any:
    return await value


# --------------------------------------------------------------------------- channels


def check_channel_session(
    channel: Channel,
    plugin: str,
    mode: Mode = Mode.DEFAULT,
    channel_options: Mapping[str, Any] | None = None,
    models: ConversationModels | None = None,
) -> None:
    """A session starts; `to_agent`/`to_user` are async and hand back a message of the same kind; `close` is async."""
    who = _who("channel", channel, plugin)
    session = channel.start(kit_setup(mode, channel=channel.name, channel_options=channel_options, models=models))
    problem = session_problem("channel", channel, session, plugin)
    if problem:
        raise AssertionError(problem)

    async def cross() -> None:
        heard_by_agent = await session.to_agent(UserMessage(content="Please save the note 'milk'."))
        if not isinstance(heard_by_agent, UserMessage):
            raise AssertionError(f"{who}: to_agent returned {type(heard_by_agent).__name__}, not a UserMessage ({mode.value} mode)")
        heard_by_user = await session.to_user(AssistantMessage(content="Saved. Anything else?"))
        if not isinstance(heard_by_user, AssistantMessage):
            raise AssertionError(f"{who}: to_user returned {type(heard_by_user).__name__}, not an AssistantMessage ({mode.value} mode)")
        await session.close()

    asyncio.run(cross())


# --------------------------------------------------------------------------- agents and user simulators


def check_agent_session(
    agent: Agent, plugin: str, mode: Mode = Mode.DEFAULT, options: Mapping[str, Any] | None = None, models: ConversationModels | None = None
) -> None:
    """A session starts, its `respond` and `close` are async and `is_stop` answers a plain text with a bool."""
    who = _who("agent", agent, plugin)
    session = agent.start(kit_setup(mode, options={"agent": dict(options or {})}, models=models))
    problem = session_problem("agent", agent, session, plugin)
    if problem:
        raise AssertionError(problem)
    stop = session.is_stop(AssistantMessage(content="Hello, how can I help?"))
    if not isinstance(stop, bool):
        raise AssertionError(f"{who}: is_stop returned {type(stop).__name__}, not a bool")
    asyncio.run(session.close())


def check_user_session(user: UserSimulator, plugin: str, options: Mapping[str, Any] | None = None, models: ConversationModels | None = None) -> None:
    """A session starts, its `respond` and `close` are async; a stop token ends the conversation, a plain text does not."""
    who = _who("user simulator", user, plugin)
    session = user.start(kit_setup(Mode.DEFAULT, options={"user": dict(options or {})}, models=models))
    problem = session_problem("user simulator", user, session, plugin)
    if problem:
        raise AssertionError(problem)
    if session.is_stop(UserMessage(content="Thanks, that's all. ###STOP###")) is not True:
        raise AssertionError(f"{who}: is_stop does not see ###STOP### in a text without tool calls as a stop")
    if session.is_stop(UserMessage(content="Please save a note.")) is not False:
        raise AssertionError(f"{who}: is_stop takes a plain text for a stop")
    asyncio.run(session.close())


def check_conversations(db: Path, run_id: str, who: str, *, expect_stop: bool = True, mode: Mode = Mode.DEFAULT) -> None:
    """Every conversation of a kit run ended without a participant or infrastructure error (and, expected, by a stop)."""
    rows = stored_conversations(db, run_id)
    if not rows:
        raise AssertionError(f"{who}: the run stored no conversation ({mode.value} mode)")
    for row in rows:
        reason = row["termination_reason"]
        if reason in PARTICIPANT_FAILURES:
            raise AssertionError(f"{who}: task {row['task_id']!r} ({mode.value} mode) ended {reason}: {row['error']}")
        if expect_stop and reason not in STOPS:
            raise AssertionError(f"{who}: task {row['task_id']!r} ({mode.value} mode) ended {reason}, not by a stop")


def check_plays(plugins: PluginSet, who: str, *, mode: Mode = Mode.DEFAULT, expect_stop: bool = True, max_steps: int = 30, **config: Any) -> None:
    """A short run of the kit's domain (config: agent, user, models, options) ends every conversation cleanly."""
    with kit_store() as db:
        run_id = kit_run(db, plugins, mode=mode, max_steps=max_steps, **config)
        check_conversations(db, run_id, who, expect_stop=expect_stop, mode=mode)


# --------------------------------------------------------------------------- judges


KIT_ASSERTIONS = (("The agent saved the note.",), ("The agent greeted the user.", "The agent saved the note.", "The agent asked for a password."))


def check_judge(judge: Judge, plugin: str, models: Any = None) -> None:
    """`judge` is async and gives one Check (with a bool `met`) per assertion, for one and for several assertions."""
    who = _who("judge", judge, plugin)
    task_id, messages, _ = kit_conversations()["solved"]
    result, inputs = scored_conversation(task_id, messages)
    for assertions in KIT_ASSERTIONS:
        request = JudgeRequest(task=inputs.task, messages=result.messages, assertions=list(assertions), seed=0, models=models)
        checks = _await(judge.judge(request), f"{who}: judge")
        if not isinstance(checks, list | tuple) or len(checks) != len(assertions):
            got = len(checks) if isinstance(checks, list | tuple) else type(checks).__name__
            raise AssertionError(f"{who}: {len(assertions)} assertion(s) judged, {got} check(s) returned (one per assertion)")
        for assertion, check in zip(assertions, checks, strict=True):
            if not isinstance(check, Check) or not isinstance(check.met, bool):
                raise AssertionError(f"{who}: the check of {assertion!r} is {check!r}, not a Check with a bool `met`")


# --------------------------------------------------------------------------- metrics


def check_metric_scores(
    metric: Metric, plugin: str, conversations: Mapping[str, tuple[str, Sequence[Message], TerminationReason]] | None = None
) -> None:
    """The metric scores each hand-built conversation as a run would, without an error (the recorded one is quoted)."""
    who = _who("metric", metric, plugin)
    for label, (task_id, messages, termination) in (conversations or kit_conversations()).items():
        result, inputs = scored_conversation(task_id, messages, termination)
        values, _ = asyncio.run(score_metrics([(plugin, metric)], result, inputs))
        failed = [v for v in values if v.error]
        if failed:
            raise AssertionError(f"{who} failed on the conversation {label!r} (recorded as its error): {failed[0].error}")
        if not values:
            raise AssertionError(f"{who} returned no value for the conversation {label!r}")


def check_metric_in_run(plugins: PluginSet, metric: Metric, plugin: str, **config: Any) -> None:
    """In a run of the kit's domain the metric stores values without error, and its summary renders in every format."""
    who = _who("metric", metric, plugin)
    with kit_store() as db:
        run_id = kit_run(db, plugins, **config)
        store = Store(db)
        try:
            values = [v for v in store.metric_values(run_id) if v["plugin"] == plugin and _is_metric(v["metric"], metric.name)]
            errors = [v for v in values if v["error"]]
            if errors:
                raise AssertionError(f"{who} failed in a run (recorded as its error): {errors[0]['error']}")
            if not values:
                raise AssertionError(f"{who} stored no value in a run of the kit's domain")
            _check_report(store, run_id, plugins, f"{plugin}:{metric.name}", who, optional=True)
        finally:
            store.close()


def _is_metric(stored: str, name: str) -> bool:
    return stored == name or stored.startswith(f"{name}.")


def check_metric_summary_empty(plugins: PluginSet, metric: Metric, plugin: str) -> None:
    """The metric's summary (and the report) renders in every format for a run with no conversation."""
    with kit_store() as db:
        run_id = kit_empty_run(db, plugins)
        store = Store(db)
        try:
            _check_report(store, run_id, plugins, f"{plugin}:{metric.name}", _who("metric", metric, plugin), optional=True)
        finally:
            store.close()


# --------------------------------------------------------------------------- report sections


def check_section_renders(plugins: PluginSet, section: ReportSection, plugin: str, *, empty: bool, **config: Any) -> None:
    """The section builds without error and renders, with the whole report, in every installed format (bench-report's
    table, json, markdown, csv and html) for an empty run (`empty`) or a run of the kit's domain; without bench-report,
    the section is built alone."""
    who = _who("report section", section, plugin)
    with kit_store() as db:
        run_id = kit_empty_run(db, plugins) if empty else kit_run(db, plugins, **config)
        store = Store(db)
        try:
            _check_report(store, run_id, plugins, section.name, who, optional=empty, label="an empty run" if empty else "a run")
        finally:
            store.close()


def _check_report(store: Store, run_id: str, plugins: PluginSet, section: str, who: str, *, optional: bool, label: str = "a run") -> None:
    registry = collect(plugins)
    if report_builder(registry) is None and report_builder(collect(get_plugin_manager(always_loaded()))) is None:
        _check_found(_section_alone(store, run_id, registry, section), who, optional=optional, label=label)
        return
    report = build_report(store, run_id, registry)
    found = [s for s in report.sections if s["name"] == section]
    _check_found(found, who, optional=optional, label=label)
    for fmt in _formats(registry).values():
        _render(report, fmt, ReportContext(), f"with {who}, the report of {label} does not render as {fmt.name}")
        if found:
            _render(report, fmt, ReportContext(section=section), f"{who} does not render as {fmt.name} on {label}")


def _section_alone(store: Store, run_id: str, registry: Registry, name: str) -> list[dict[str, Any]]:
    """Without a report builder (bench-report not installed) the section, or the metric summary ("plugin:metric"), built
    on its own, as the report would hold it."""
    run = store.run(run_id)
    assert run is not None
    kind = "report section" if name in registry.components.get("report section", {}) else "metric"
    view = RunView(store, run, plugin=registry.origin(kind, name))
    with read_only(store.db):
        try:
            component = registry.get(kind, name)
            built = component.build(view) if kind == "report section" else getattr(component, "summarize", lambda _: None)(view)
        except Exception as exc:  # noqa: BLE001 - reported as the report shows a failed section
            return [{"error": f"{type(exc).__name__}: {exc}", "tables": []}]
    if not built:
        return []
    if not isinstance(built, Section):  # a metric's figures, shown as one table
        return [{"error": None, "tables": [{"headers": ["figure", "value"], "rows": [[k, v] for k, v in built.items()]}]}]
    return [{"error": None, "tables": [attrs.asdict(t) for t in built.tables]}]


def _check_found(found: list[dict[str, Any]], who: str, *, optional: bool, label: str) -> None:
    if found and found[0]["error"]:
        raise AssertionError(f"{who} failed on {label}: {found[0]['error']}")
    if not found and not optional:
        raise AssertionError(f"{who} shows nothing on {label} (build returned None)")
    if found:
        _check_tables(found[0], who)


def _formats(registry: Registry) -> dict[str, ReportFormat]:
    """The formats under test's plugins register, and those of the plugins loading with every run (bench-report's)."""
    always = collect(get_plugin_manager(always_loaded()))
    return {**always.components.get("report format", {}), **registry.components.get("report format", {})}


def _render(report: Report, fmt: ReportFormat, context: ReportContext, failure: str) -> None:
    try:
        fmt.render(report, context)
    except Exception as exc:
        # A format that cannot show a section alone says so cleanly (CSV of a section without tables).
        if not (isinstance(exc, ConfigError) and context.section is not None):
            raise AssertionError(f"{failure}: {type(exc).__name__}: {exc}") from exc


def _check_tables(section: Mapping[str, Any], who: str) -> None:
    for table in section["tables"]:
        for i, row in enumerate(table["rows"]):
            if len(row) != len(table["headers"]):
                raise AssertionError(
                    f"{who}: table {table['title'] or i!r} has a row of {len(row)} cells for {len(table['headers'])} headers: {row!r:.80}"
                )


# --------------------------------------------------------------------------- executors


def check_executor(plugins: PluginSet, executor: Executor, plugin: str, /, *, reference: PluginSet | None = None, **config: Any) -> None:
    """The executor plays every unit of a kit run and hands back each result once, as the local executor does."""
    who = _who("executor", executor, plugin)
    with kit_store() as db:
        run_id = kit_run(db, plugins, executor=executor.name, trials=2, run_id="kit-executor", **config)
        played = stored_conversations(db, run_id)
    with kit_store() as db:
        local = stored_conversations(
            db, kit_run(db, reference or plugins, trials=2, run_id="kit-local", **{k: v for k, v in config.items() if k != "executor_options"})
        )
    keys = [(r["task_id"], r["trial"]) for r in played]
    if len(keys) != len(set(keys)):
        raise AssertionError(f"{who}: some conversations were stored more than once: {sorted(keys)}")
    wanted = {(r["task_id"], r["trial"]): r["reward"] for r in local}
    got = {(r["task_id"], r["trial"]): r["reward"] for r in played}
    if set(got) != set(wanted):
        raise AssertionError(f"{who}: played {sorted(got)}, the local executor {sorted(wanted)}")
    failures = [r for r in played if r["termination_reason"] in PARTICIPANT_FAILURES]
    if failures:
        raise AssertionError(f"{who}: task {failures[0]['task_id']!r} ended {failures[0]['termination_reason']}: {failures[0]['error']}")
    if got != wanted:
        raise AssertionError(f"{who}: rewards {got} differ from the local executor's {wanted}")


# --------------------------------------------------------------------------- the classes


class SeamConformance:
    """What every seam's kit shares: which plugin and component, extra plugin objects, models and options."""

    kind: ClassVar[str]
    plugin: ClassVar[str]
    """The entry-point name of the plugin (or, with `plugin_object`, the name to register that object under)."""
    name: ClassVar[str | None] = None
    """The component's name, when the plugin registers several of this kind."""
    plugin_object: ClassVar[object | None] = None
    """Register this object as the plugin instead of loading an installed entry point (tests of unpublished code)."""
    extra: ClassVar[Sequence[tuple[str, object]]] = ()
    """(name, plugin object) pairs registered beside the plugin, e.g. a scripted model backend."""
    models: ClassVar[Mapping[str, ModelConfig]] = {}
    """Model roles the runs configure (`{"agent": ModelConfig(backend=..., model=...)}`)."""

    def plugin_set(self) -> PluginSet:
        """A fresh plugin manager: built-ins, the plugin, `extra` and the kit's domain."""
        extra = list(self.extra)
        if self.plugin_object is not None:
            return kit_plugins(None, [(self.plugin, self.plugin_object), *extra])
        return kit_plugins(self.plugin, extra)

    def component(self) -> Any:
        """The component under test."""
        return load_component(self.kind, self.plugin, self.name, plugins=self.plugin_set())

    def kit_models(self) -> ConversationModels | None:
        """Model access for the kit's direct session checks, from `models`."""
        return kit_models(self.plugin_set(), self.models)

    def run_config(self) -> dict[str, Any]:
        """What the kit's runs set besides the domain: the plugin's models."""
        return {"models": dict(self.models)} if self.models else {}

    def test_conformance_registration(self) -> None:
        """The plugin loads and registers the component; its methods are async where the kernel awaits them."""
        check_methods(self.kind, self.component(), self.plugin)


class ChannelConformance(SeamConformance):
    """Subclass and set `plugin` (and `name`): sessions in every mode, and a run through the channel."""

    kind = "channel"
    channel_options: ClassVar[Mapping[str, Any]] = {}
    modes: ClassVar[Iterable[Mode]] = (Mode.DEFAULT, Mode.NO_USER)

    def test_conformance_sessions(self) -> None:
        """to_agent/to_user are async and return messages of the right kind, in every mode."""
        for mode in self.modes:
            check_channel_session(self.component(), self.plugin, mode, self.channel_options, self.kit_models())

    def test_conformance_run(self) -> None:
        """The oracle and the scripted user talk through the channel to the end."""
        channel = self.component()
        check_plays(
            self.plugin_set(),
            _who("channel", channel, self.plugin),
            channel=channel.name,
            channel_options=dict(self.channel_options) or None,
            **self.run_config(),
        )


class AgentConformance(SeamConformance):
    """Subclass and set `plugin` (and `name`): sessions, and short conversations with the scripted user and alone."""

    kind = "agent"
    options: ClassVar[Mapping[str, Any]] = {}
    modes: ClassVar[Iterable[Mode]] = (Mode.DEFAULT, Mode.NO_USER)
    expect_stop: ClassVar[bool] = True
    """Every conversation ends by a stop (the agent's alone, the scripted user's otherwise) within `max_steps`."""
    max_steps: ClassVar[int] = 30

    def test_conformance_session(self) -> None:
        """respond and close are async; is_stop answers with a bool; in every mode."""
        for mode in self.modes:
            check_agent_session(self.component(), self.plugin, mode, self.options, self.kit_models())

    def test_conformance_conversations(self) -> None:
        """Short conversations in every mode end cleanly, by a stop."""
        agent = self.component()
        for mode in self.modes:
            check_plays(
                self.plugin_set(),
                _who("agent", agent, self.plugin),
                mode=mode,
                agent=agent.name,
                agent_options=dict(self.options),
                expect_stop=self.expect_stop,
                max_steps=self.max_steps,
                **self.run_config(),
            )


class UserSimulatorConformance(SeamConformance):
    """Subclass and set `plugin` (and `name`): sessions, stop tokens, and short conversations with the oracle."""

    kind = "user simulator"
    options: ClassVar[Mapping[str, Any]] = {}
    expect_stop: ClassVar[bool] = True
    max_steps: ClassVar[int] = 30

    def test_conformance_session(self) -> None:
        """respond and close are async; ###STOP### stops, a plain text does not."""
        check_user_session(self.component(), self.plugin, self.options, self.kit_models())

    def test_conformance_conversations(self) -> None:
        """Short conversations with the oracle end cleanly, by a stop."""
        user = self.component()
        check_plays(
            self.plugin_set(),
            _who("user simulator", user, self.plugin),
            user=user.name,
            user_options=dict(self.options),
            expect_stop=self.expect_stop,
            max_steps=self.max_steps,
            **self.run_config(),
        )


class JudgeConformance(SeamConformance):
    """Subclass and set `plugin` (and `name`; override `judge_models()` for a judge that calls models)."""

    kind = "judge"

    def judge_models(self) -> Any:
        """The model access a JudgeRequest carries (from `models`; None when the judge calls no model)."""
        return self.kit_models()

    def test_conformance_checks(self) -> None:
        """One Check per assertion, from an async judge."""
        check_judge(self.component(), self.plugin, self.judge_models())


class MetricConformance(SeamConformance):
    """Subclass and set `plugin` (and `name`): scores on hand-built conversations, values in a run, summaries rendered."""

    kind = "metric"

    def conversations(self) -> Mapping[str, tuple[str, Sequence[Message], TerminationReason]]:
        """The hand-built conversations scored: name -> (kit task id, messages, termination). Override to add yours."""
        return kit_conversations()

    def test_conformance_scores(self) -> None:
        """Every hand-built conversation is scored without error."""
        check_metric_scores(self.component(), self.plugin, self.conversations())

    def test_conformance_run(self) -> None:
        """A run stores the metric's values without error; its summary renders in every format."""
        check_metric_in_run(self.plugin_set(), self.component(), self.plugin, **self.run_config())

    def test_conformance_summary_of_an_empty_run(self) -> None:
        """The summary of a run without conversations renders in every format."""
        check_metric_summary_empty(self.plugin_set(), self.component(), self.plugin)


class ReportSectionConformance(SeamConformance):
    """Subclass and set `plugin` (and `name`): the section renders in every format for an empty and a non-empty run."""

    kind = "report section"

    def test_conformance_empty_run(self) -> None:
        """An empty run: the section builds (or shows nothing) and renders in every format."""
        check_section_renders(self.plugin_set(), self.component(), self.plugin, empty=True)

    def test_conformance_run(self) -> None:
        """A run of the kit's domain: the section builds and renders in every format."""
        check_section_renders(self.plugin_set(), self.component(), self.plugin, empty=False, **self.run_config())


class ExecutorConformance(SeamConformance):
    """Subclass and set `plugin` (and `name`): a kit run played by the executor matches the local executor's.

    The kit's domain is registered in this process only: an executor whose workers rebuild the run from installed
    plugins (in other processes) needs an installed domain instead; set `domain_plugin` (e.g. "mock") and `domain`.
    """

    kind = "executor"
    executor_options: ClassVar[Mapping[str, Any]] = {}
    workers: ClassVar[int] = 1
    domain_plugin: ClassVar[str | None] = None
    domain: ClassVar[str] = KIT_DOMAIN

    def plugin_set(self) -> PluginSet:
        """As the other kits', plus `domain_plugin` when set."""
        if self.domain_plugin is None:
            return super().plugin_set()
        from bench_kernel.plugins import get_plugin_manager

        selected = [self.domain_plugin] if self.plugin_object is not None else [self.plugin, self.domain_plugin]
        objects = [(self.plugin, self.plugin_object)] if self.plugin_object is not None else []
        return get_plugin_manager(selected, [*objects, *self.extra])

    def test_conformance_plays(self) -> None:
        """Every unit is played and handed back once; rewards match the local executor's."""
        plugins = self.plugin_set()
        config: dict[str, Any] = {"domain": self.domain, "workers": self.workers, **self.run_config()}
        if self.executor_options:
            config["executor_options"] = dict(self.executor_options)
        if self.domain_plugin is not None:
            config["plugins"] = [p.name for p in plugins.plugins if not p.builtin and p.error is None]
        check_executor(plugins, self.component(), self.plugin, **config)
