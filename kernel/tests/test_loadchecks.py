"""Checks at load: sync methods the kernel awaits, hooks without the marker; each names plugin and object."""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from toy_domain import ToyPlugin

import bench_kernel
from bench_kernel import (
    AgentSession,
    AssistantMessage,
    Channel,
    ChannelSession,
    Check,
    ConfigError,
    ConversationSetup,
    Judge,
    JudgeRequest,
    Message,
    Metric,
    MetricContext,
    ReportSection,
    RunConfig,
    RunView,
    Section,
    UserMessage,
    UserSession,
    UserSimulator,
    collect,
    get_plugin_manager,
    run,
)
from bench_kernel.plugins import COMPONENT_HOOKS
from bench_kernel.run import checks


def registering(kind: str, component: object) -> object:
    hook = COMPONENT_HOOKS[kind]
    plugin = types.SimpleNamespace()
    setattr(plugin, hook, bench_kernel.hookimpl(specname=hook)(lambda register: register(component)))
    return plugin


def failure(kind: str, component: object) -> str | None:
    plugins = get_plugin_manager([], [("acme", registering(kind, component))])
    collect(plugins)
    return next((p.error for p in plugins.failures() if p.name == "acme"), None)


class SyncChannelSession(ChannelSession):
    def to_agent(self, message: UserMessage) -> UserMessage:  # type: ignore[override]
        return message


@attrs.define(kw_only=True)
class DeclaredChannel(Channel):
    name: str = "walkie"

    def start(self, setup: ConversationSetup) -> SyncChannelSession:
        return SyncChannelSession()


class SyncAgentSession(AgentSession):
    def respond(self, incoming: Sequence[Message]) -> AssistantMessage:  # type: ignore[override]
        return AssistantMessage(content="hi")


@attrs.define(kw_only=True)
class DeclaredAgent(bench_kernel.Agent):
    name: str = "echo"

    def start(self, setup: ConversationSetup) -> SyncAgentSession:
        return SyncAgentSession()


@attrs.define(kw_only=True)
class UndeclaredAgent(bench_kernel.Agent):
    name: str = "echo"

    def start(self, setup: ConversationSetup) -> AgentSession:
        return SyncAgentSession()


class AsyncStopSession(UserSession):
    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        return UserMessage(content="hi")

    async def is_stop(self, message: UserMessage) -> bool:  # type: ignore[override]
        return False


@attrs.define(kw_only=True)
class AsyncStopUser(UserSimulator):
    name: str = "asker"

    def start(self, setup: ConversationSetup) -> AsyncStopSession:
        return AsyncStopSession()


@attrs.define(kw_only=True)
class SyncJudge(Judge):
    name: str = "strict"

    def judge(self, request: JudgeRequest) -> list[Check]:  # type: ignore[override]
        return []


@attrs.define(kw_only=True)
class AsyncSummary(Metric):
    name: str = "turns"

    def score(self, context: MetricContext) -> dict[str, float | None]:
        return {"": 1.0}

    async def summarize(self, view: RunView) -> dict[str, float | None]:  # type: ignore[override]
        return {}


@attrs.define(kw_only=True)
class AsyncLoadDomain(bench_kernel.Domain):
    name: str = "shelf"

    async def load(self, options: bench_kernel.DomainOptions) -> bench_kernel.DomainData:  # type: ignore[override]
        raise NotImplementedError


@attrs.define(kw_only=True)
class AsyncSection(ReportSection):
    name: str = "summary"

    async def build(self, view: RunView) -> Section:  # type: ignore[override]
        return Section(title="x")


@pytest.mark.parametrize(
    "kind, component, message",
    [
        (
            "channel",
            DeclaredChannel(),
            "channel 'walkie': tests.test_loadchecks.SyncChannelSession.to_agent is a plain def, "
            "but the kernel awaits it: write `async def to_agent` (the session class DeclaredChannel.start returns)",
        ),
        (
            "agent",
            DeclaredAgent(),
            "agent 'echo': tests.test_loadchecks.SyncAgentSession.respond is a plain def, but the kernel "
            "awaits it: write `async def respond` (the session class DeclaredAgent.start returns)",
        ),
        (
            "user simulator",
            AsyncStopUser(),
            "user simulator 'asker': tests.test_loadchecks.AsyncStopSession.is_stop is an async "
            "def, but the kernel calls it without awaiting: write `def is_stop`",
        ),
        (
            "judge",
            SyncJudge(),
            "judge 'strict': tests.test_loadchecks.SyncJudge.judge is a plain def, but the kernel awaits it: write `async def judge`",
        ),
        (
            "metric",
            AsyncSummary(),
            "metric 'turns': tests.test_loadchecks.AsyncSummary.summarize is an async def, but the kernel "
            "calls it without awaiting: write `def summarize`",
        ),
        ("report section", AsyncSection(), "report section 'summary': tests.test_loadchecks.AsyncSection.build is an async def"),
        (
            "domain",
            AsyncLoadDomain(),
            "domain 'shelf': tests.test_loadchecks.AsyncLoadDomain.load is an async def, but the kernel calls it without awaiting: write `def load`",
        ),
    ],
)
def test_a_method_of_the_wrong_colour_fails_registration_naming_plugin_and_method(kind: str, component: object, message: str):
    error = failure(kind, component)
    assert error is not None and error.startswith("registration failed: ")
    assert message.replace("tests.test_loadchecks", "") in error.replace("kernel.tests.test_loadchecks", "").replace("tests.test_loadchecks", "")


def test_conforming_components_and_a_sync_metric_score_register():
    assert failure("metric", AsyncSummary.__mro__[1](name="base")) is None
    assert failure("agent", UndeclaredAgent()) is None  # its session class shows only at the first conversation


def test_a_failing_registration_refuses_a_command_that_named_the_plugin(monkeypatch: pytest.MonkeyPatch):
    real = checks.get_plugin_manager
    monkeypatch.setattr(checks, "get_plugin_manager", lambda selected: real([], [("acme", registering("judge", SyncJudge()))]))
    with pytest.raises(
        ConfigError,
        match=r"plugin 'acme' failed: registration failed: judge 'strict': .*SyncJudge.judge "
        r"is a plain def",
    ):
        checks.checked_plugins(["acme"])


def stored_after_refusal(tmp_path: Path, kind: str, component: object, **config: Any) -> tuple[str, list[dict[str, Any]]]:
    """Run the toy domain with a component whose session breaks the contract: the refusal's message, what was stored."""
    plugins = get_plugin_manager([], [("toy", ToyPlugin()), ("acme", registering(kind, component))])
    with pytest.raises(bench_kernel.PluginError) as refused:
        run(RunConfig(domain="toy", **config), tmp_path / "r.db", plugins=plugins)
    store = bench_kernel.Store(tmp_path / "r.db")
    stored = [c for r in store.runs() for c in store.conversations(r["id"])]
    store.close()
    return str(refused.value), stored


@pytest.mark.parametrize("concurrency", [1, 8])
def test_an_undeclared_sync_session_stops_the_run_storing_no_conversation(tmp_path: Path, concurrency: int):
    # 8 in flight: the baseline's offline conversations start beside the agent's and would finish first.
    message, stored = stored_after_refusal(tmp_path, "agent", UndeclaredAgent(), agent="echo", concurrency=concurrency)
    assert message.startswith("plugin 'acme': agent 'echo': ")
    assert "SyncAgentSession.respond is a plain def, but the kernel awaits it: write `async def respond`" in message
    assert "the run stopped at its first conversation, storing none" in message
    assert stored == []


class SyncCloseUserSession(UserSession):
    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        return UserMessage(content="###STOP###")

    def close(self) -> None:  # type: ignore[override]
        pass


@attrs.define(kw_only=True)
class UndeclaredUser(UserSimulator):
    name: str = "mumbler"

    def start(self, setup: ConversationSetup) -> UserSession:
        return SyncCloseUserSession()


def test_an_undeclared_sync_close_of_a_user_session_stops_the_run(tmp_path: Path):
    message, stored = stored_after_refusal(tmp_path, "user simulator", UndeclaredUser(), user="mumbler")
    assert message.startswith("plugin 'acme': user simulator 'mumbler': ")
    assert "SyncCloseUserSession.close is a plain def, but the kernel awaits it: write `async def close`" in message
    assert stored == []


@attrs.define(kw_only=True)
class UndeclaredChannel(Channel):
    name: str = "walkie"

    def start(self, setup: ConversationSetup) -> ChannelSession:
        return SyncChannelSession()


def test_an_undeclared_sync_channel_session_stops_the_run(tmp_path: Path):
    message, stored = stored_after_refusal(tmp_path, "channel", UndeclaredChannel(), channel="walkie", baseline=False)
    assert message.startswith("plugin 'acme': channel 'walkie': ")
    assert "SyncChannelSession.to_agent is a plain def" in message
    assert stored == []


def unmarked_module() -> types.ModuleType:
    module = types.ModuleType("bench_acme")

    def register_domains(register: Callable[[Any], None]) -> None:
        register(object())

    def register_agents(register: Callable[[Any], None]) -> None:
        register(object())

    module.register_domains = register_domains  # type: ignore[attr-defined]
    module.register_agents = register_agents  # type: ignore[attr-defined]
    module.helper = lambda: None  # type: ignore[attr-defined]
    return module


def test_hooks_without_the_marker_fail_the_plugin_naming_them():
    plugins = get_plugin_manager([], [("acme", unmarked_module())])
    [failed] = plugins.failures()
    assert failed.name == "acme"
    assert failed.error == (
        "module bench_acme has functions named like hooks but not marked with @bench_kernel.hookimpl, so "
        "none of them is registered: register_agents, register_domains (add the decorator above each)"
    )


def test_a_marked_hook_beside_an_unmarked_one_still_fails():
    module = unmarked_module()
    module.register_domains = bench_kernel.hookimpl(module.register_domains)  # type: ignore[attr-defined]
    [failed] = get_plugin_manager([], [("acme", module)]).failures()
    assert "none of them is registered: register_agents (" in (failed.error or "")


def test_marked_hooks_register():
    module = unmarked_module()
    for name in ("register_domains", "register_agents"):
        setattr(module, name, bench_kernel.hookimpl(getattr(module, name)))
    assert get_plugin_manager([], [("acme", module)]).failures() == []
