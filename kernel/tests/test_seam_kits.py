"""The conformance kit for every seam: it passes the kernel's own components and the seam examples, and each check
fails, with a message naming plugin and object, on a plugin that gets that seam wrong."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import pytest
from plugin_factory import needs_report
from seam_plugins import SeamPlugin

import bench_kernel
from bench_kernel import (
    AgentSession,
    AssistantMessage,
    Channel,
    ChannelSession,
    Check,
    ConversationSetup,
    Judge,
    JudgeRequest,
    Message,
    Metric,
    MetricContext,
    ReportSection,
    RunView,
    Section,
    SectionTable,
    UserMessage,
)
from bench_kernel.builtin.participants import OracleAgent
from bench_kernel.run.runner import execute
from bench_kernel.testing import (
    AgentConformance,
    ChannelConformance,
    ExecutorConformance,
    JudgeConformance,
    MetricConformance,
    ReportSectionConformance,
    UserSimulatorConformance,
    check_agent_session,
    check_channel_session,
    check_executor,
    check_judge,
    check_metric_in_run,
    check_metric_scores,
    check_section_renders,
    kit_setup,
    load_component,
)
from bench_kernel.testing.kitworld import kit_plugins

# --------------------------------------------------------------------------- the kernel's own components pass


class TestOracleAgent(AgentConformance):
    plugin = "bench_kernel.builtin.participants"
    name = "oracle"


class TestScriptedUser(UserSimulatorConformance):
    plugin = "bench_kernel.builtin.participants"


class TestIdentityChannel(ChannelConformance):
    plugin = "bench_kernel.builtin.channels"


class TestLocalExecutor(ExecutorConformance):
    plugin = "bench_kernel.builtin.executors"


class TestUppercaseChannel(ChannelConformance):
    plugin = "seams"
    plugin_object = SeamPlugin()


class TestShiftingUser(UserSimulatorConformance):
    plugin = "seams"
    plugin_object = SeamPlugin()


class TestTurnLedgerMetric(MetricConformance):
    plugin = "seams"
    plugin_object = SeamPlugin()


class TestShiftSection(ReportSectionConformance):
    plugin = "seams"
    plugin_object = SeamPlugin()


# --------------------------------------------------------------------------- broken plugins fail each check


def plugin_of(kind: str, component: object) -> object:
    """A plugin object registering one component of a kind."""
    hook = bench_kernel.plugins.COMPONENT_HOOKS[kind]

    class One:
        pass

    def register(self: object, register: Callable[[Any], None]) -> None:
        register(component)

    register.__name__ = hook
    setattr(One, hook, bench_kernel.hookimpl(register))
    return One()


def loaded(kind: str, component: object) -> tuple[Any, Any]:
    """The component as the kit loads it, registered by plugin 'broken', and the plugin manager."""
    plugins = kit_plugins(None, [("broken", plugin_of(kind, component))])
    return load_component(kind, "broken", plugins=plugins), plugins


class SyncSession(ChannelSession):
    """A channel session written with plain defs."""

    def to_agent(self, message: UserMessage) -> UserMessage:  # type: ignore[override]
        return message

    def to_user(self, message: AssistantMessage) -> AssistantMessage:  # type: ignore[override]
        return message


@attrs.define(kw_only=True)
class SyncChannel(Channel):
    """Its `start` is annotated with the base class: only the first session shows the mistake."""

    name: str = "sync"

    def start(self, setup: ConversationSetup) -> ChannelSession:
        return SyncSession()


@attrs.define(kw_only=True)
class DeclaredSyncChannel(Channel):
    """Its `start` names the session class: registration sees the mistake."""

    name: str = "declared-sync"

    def start(self, setup: ConversationSetup) -> SyncSession:
        return SyncSession()


def test_a_sync_channel_fails_the_session_check_naming_plugin_and_method():
    channel, _ = loaded("channel", SyncChannel())
    with pytest.raises(
        AssertionError,
        match=r"plugin 'broken': channel 'sync': .*SyncSession.to_agent is a plain def, "
        r"but the kernel awaits it: write `async def to_agent`",
    ):
        check_channel_session(channel, "broken")


def test_a_sync_channel_with_a_declared_session_class_fails_at_registration():
    with pytest.raises(
        AssertionError,
        match=r"plugin 'broken' failed to load: registration failed: channel 'declared-sync': "
        r".*SyncSession.to_agent is a plain def",
    ):
        loaded("channel", DeclaredSyncChannel())


@attrs.define(kw_only=True)
class ChannelReturningText(Channel):
    name: str = "text"

    def start(self, setup: ConversationSetup) -> ChannelSession:
        return TextSession()


class TextSession(ChannelSession):
    async def to_agent(self, message: UserMessage) -> Any:
        return message.content


def test_a_channel_returning_the_wrong_kind_fails():
    channel, _ = loaded("channel", ChannelReturningText())
    with pytest.raises(AssertionError, match=r"channel 'text' of plugin 'broken': to_agent returned str, not a UserMessage"):
        check_channel_session(channel, "broken")


class SyncAgentSession(AgentSession):
    def respond(self, incoming: Sequence[Message]) -> AssistantMessage:  # type: ignore[override]
        return AssistantMessage(content="hi")


@attrs.define(kw_only=True)
class SyncAgent(bench_kernel.Agent):
    name: str = "sync-agent"

    def start(self, setup: ConversationSetup) -> AgentSession:
        return SyncAgentSession()


def test_a_sync_agent_fails_the_session_check_and_its_conversations():
    agent, plugins = loaded("agent", SyncAgent())
    with pytest.raises(AssertionError, match=r"plugin 'broken': agent 'sync-agent': .*SyncAgentSession.respond is a plain def"):
        check_agent_session(agent, "broken")
    # A short run refuses it at its first conversation, storing none (docs/plugins.md, "Checks at load").
    with pytest.raises(bench_kernel.PluginError, match=r"plugin 'broken': agent 'sync-agent': .*respond is a plain def.*storing none"):
        bench_kernel.testing.check_plays(plugins, "agent 'sync-agent' of plugin 'broken'", agent="sync-agent")


@attrs.define(kw_only=True)
class Chatterbox(bench_kernel.Agent):
    """Never calls a tool, never stops."""

    name: str = "chatterbox"

    def start(self, setup: ConversationSetup) -> AgentSession:
        return ChatterSession()


class ChatterSession(AgentSession):
    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        return AssistantMessage(content="Tell me more.")


def test_an_agent_that_never_stops_alone_fails_the_no_user_conversation():
    agent, _ = loaded("agent", Chatterbox())

    class Kit(AgentConformance):
        plugin = "broken"
        plugin_object = plugin_of("agent", agent)

    with pytest.raises(
        AssertionError,
        match=r"agent 'chatterbox' of plugin 'broken': task '[a-z-]+' \(no-user mode\) "
        r"ended agent_error: agent sent text in the no-user mode",
    ):
        Kit().test_conformance_conversations()


@attrs.define(kw_only=True)
class RaisingMetric(Metric):
    name: str = "fragile"

    async def score(self, context: MetricContext) -> dict[str, float | None]:
        return {"": 1.0 / sum(m.role == "tool" for m in context.messages)}


def test_a_metric_that_raises_fails_with_its_recorded_message():
    metric, plugins = loaded("metric", RaisingMetric())
    with pytest.raises(
        AssertionError,
        match=r"metric 'fragile' of plugin 'broken' failed on the conversation 'greeting only' "
        r"\(recorded as its error\): ZeroDivisionError: float division by zero",
    ):
        check_metric_scores(metric, "broken")
    with pytest.raises(
        AssertionError,
        match=r"metric 'fragile' of plugin 'broken' failed in a run \(recorded as its error\): "
        r"ZeroDivisionError",
    ):
        check_metric_in_run(plugins, metric, "broken", agent="do-nothing")


@attrs.define(kw_only=True)
class SetSummary(Metric):
    """Scores fine; its summary holds a value JSON cannot write."""

    name: str = "setty"

    def score(self, context: MetricContext) -> dict[str, float | None]:  # a sync score is allowed
        return {"": 1.0}

    def summarize(self, view: RunView) -> Section:
        return Section(title="setty", tables=[SectionTable(headers=["ids"], rows=[[{"a"}]])])


@needs_report()
def test_a_metric_summary_that_breaks_one_format_fails_naming_the_format():
    metric, plugins = loaded("metric", SetSummary())
    check_metric_scores(metric, "broken")
    with pytest.raises(AssertionError, match=r"metric 'setty' of plugin 'broken'.*as json.*TypeError: Object of type set"):
        check_metric_in_run(plugins, metric, "broken")


@attrs.define(kw_only=True)
class JsonBreakingSection(ReportSection):
    name: str = "brittle"

    def build(self, view: RunView) -> Section:
        rows = [[c["task_id"], {c["trial"]}] for c in view.conversations()]
        return Section(title="Brittle", tables=[SectionTable(headers=["task", "trials"], rows=rows)])


@needs_report()
def test_a_section_that_breaks_in_one_format_fails_naming_it_on_a_non_empty_run_only():
    section, plugins = loaded("report section", JsonBreakingSection())
    check_section_renders(plugins, section, "broken", empty=True)
    with pytest.raises(
        AssertionError,
        match=r"with report section 'brittle' of plugin 'broken', the report of a run does not render as json: "
        r"TypeError: Object of type set is not JSON serializable",
    ):
        check_section_renders(plugins, section, "broken", empty=False)


@attrs.define(kw_only=True)
class EmptyRunSection(ReportSection):
    name: str = "divides"

    def build(self, view: RunView) -> Section:
        rows = view.conversations()
        return Section(title="Mean", text=f"mean reward {sum(r['reward'] for r in rows) / len(rows)}")


def test_a_section_that_fails_on_an_empty_run_is_caught():
    section, plugins = loaded("report section", EmptyRunSection())
    check_section_renders(plugins, section, "broken", empty=False)
    with pytest.raises(
        AssertionError,
        match=r"report section 'divides' of plugin 'broken' failed on an empty run: "
        r"ZeroDivisionError",
    ):
        check_section_renders(plugins, section, "broken", empty=True)


@attrs.define(kw_only=True)
class RaggedSection(ReportSection):
    name: str = "ragged"

    def build(self, view: RunView) -> Section:
        return Section(title="Ragged", tables=[SectionTable(headers=["a", "b"], rows=[[1]])])


def test_a_table_row_that_does_not_fit_its_headers_is_caught():
    section, plugins = loaded("report section", RaggedSection())
    with pytest.raises(AssertionError, match=r"report section 'ragged' of plugin 'broken': table 0 has a row of 1 cells for 2 headers"):
        check_section_renders(plugins, section, "broken", empty=True)


@attrs.define(kw_only=True)
class SyncJudge(Judge):
    name: str = "sync-judge"

    def judge(self, request: JudgeRequest) -> list[Check]:  # type: ignore[override]
        return [Check(subject=a, met=True) for a in request.assertions]


@attrs.define(kw_only=True)
class OneCheckJudge(Judge):
    name: str = "one-check"

    async def judge(self, request: JudgeRequest) -> list[Check]:
        return [Check(subject=request.assertions[0], met=True)]


@attrs.define(kw_only=True)
class FairJudge(Judge):
    name: str = "fair"

    async def judge(self, request: JudgeRequest) -> list[Check]:
        return [Check(subject=a, met="saved" in a) for a in request.assertions]


def test_judges_one_check_per_assertion_from_an_async_judge():
    judge, _ = loaded("judge", FairJudge())
    check_judge(judge, "broken")

    class Kit(JudgeConformance):
        plugin = "fair"
        plugin_object = plugin_of("judge", FairJudge())

    Kit().test_conformance_registration()
    Kit().test_conformance_checks()
    judge, _ = loaded("judge", OneCheckJudge())
    with pytest.raises(AssertionError, match=r"judge 'one-check' of plugin 'broken': 3 assertion\(s\) judged, 1 check\(s\) returned"):
        check_judge(judge, "broken")


def test_a_sync_judge_is_refused_at_registration_and_by_the_check():
    with pytest.raises(
        AssertionError,
        match=r"plugin 'broken' failed to load: registration failed: judge 'sync-judge': "
        r".*SyncJudge.judge is a plain def, but the kernel awaits it",
    ):
        loaded("judge", SyncJudge())
    with pytest.raises(AssertionError, match=r"judge 'sync-judge' of plugin 'broken': judge returned list, not an awaitable"):
        check_judge(SyncJudge(), "broken")


@attrs.define(kw_only=True)
class DroppingExecutor(bench_kernel.Executor):
    """Plays every unit but the last."""

    name: str = "dropping"

    async def execute(self, ctx: Any, units: list[Any], on_finished: Callable[[Any], None]) -> int:
        return await execute(ctx, units[:-1], on_finished)


def test_an_executor_that_drops_a_unit_fails():
    executor, plugins = loaded("executor", DroppingExecutor())
    with pytest.raises(AssertionError, match=r"executor 'dropping' of plugin 'broken': played .* the local executor"):
        check_executor(plugins, executor, "broken")


def test_the_kit_names_a_plugin_that_registers_nothing_of_the_kind_or_several():
    with pytest.raises(AssertionError, match=r"plugin 'broken' registers no channel"):
        load_component("channel", "broken", plugins=kit_plugins(None, [("broken", plugin_of("judge", FairJudge()))]))
    with pytest.raises(AssertionError, match=r"registers several agents \(do-nothing, oracle\): set `name`"):
        load_component("agent", "bench_kernel.builtin.participants")


def test_kit_setup_fits_both_modes():
    assert kit_setup().history and not kit_setup(bench_kernel.Mode.NO_USER).history
    assert {t["function"]["name"] for t in kit_setup().agent_tools} == {"get_note", "write_note"}
    assert isinstance(OracleAgent().start(kit_setup()), AgentSession)


def test_the_kit_imports_without_pytest():
    code = (
        "import sys; sys.modules['pytest'] = None; import bench_kernel.testing as t; "
        "assert t.MetricConformance and t.check_channel_session; print('ok')"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.stdout.strip() == "ok", done.stderr
