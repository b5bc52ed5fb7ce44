"""Seams for domains whose tools need the conversation: the tool context, async tools, one state for both sides,
per-task policies, retrieval variants and the profile's texts of discoverable tools."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from toy_domain import TASKS, CounterTools, ToyDomain, ToyPlugin

from bench_kernel import (
    Agent,
    AgentSession,
    AssistantMessage,
    ConfigError,
    ConversationSetup,
    DomainData,
    DomainOptions,
    Message,
    State,
    ToolCall,
    ToolKind,
    Toolkit,
    hookimpl,
    tool,
)
from bench_kernel.plugins import get_plugin_manager, load_profile
from bench_kernel.run.runner import RunConfig, run
from bench_kernel.schema.messages import Mode
from bench_kernel.store.store import Store
from bench_kernel.tasks.domain import build_environment


class ContextTools(CounterTools):
    """Counters, plus tools that read the conversation's context."""

    @tool(ToolKind.READ)
    async def which_task(self) -> str:
        """Say which task is being played, after waiting on the event loop as a model call would."""
        await asyncio.sleep(0)
        task = self.context.task
        return (
            f"{task.id if task else None} profile={self.context.profile.name if self.context.profile else None} "
            f"models={self.context.models is not None}"
        )


class LedgerTools(Toolkit):
    """The user's side, writing into the agent's very database."""

    @tool(ToolKind.WRITE)
    def bump(self, name: str) -> dict:
        """Add one to a counter on the user's side.

        Args:
            name: The counter's name.
        """
        record = self.state.counters.edit(name)
        record["value"] += 1
        return record


@attrs.define(kw_only=True)
class ContextDomain(ToyDomain):
    """The toy domain with the seams under test switched on."""

    name: str = "ctx"
    tasks: list[dict[str, Any]] = attrs.field(factory=lambda: TASKS[:2])
    retrieval_variants: tuple[str, ...] = ("plain", "fancy")

    def load(self, options: DomainOptions) -> DomainData:
        """The toy data with a shared state, a per-task policy and retrieval variants."""
        data = super().load(options)
        variant = options.retrieval or "plain"
        if variant not in self.retrieval_variants:
            raise ConfigError(f"unknown retrieval variant {variant!r}")
        return attrs.evolve(
            data,
            name=self.name,
            agent_toolkit=ContextTools,
            user_toolkit=LedgerTools,
            user_state=None,
            shared_user_state=True,
            task_policy=lambda task: f"Policy for {task.id} ({variant}).",
            retrieval=variant,
        )


class AskingAgent(Agent):
    """Calls `which_task` once, then stops: what the tool answered is in the conversation."""

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A session that remembers the policy it was given."""
        return AskingSession(policy=setup.policy)


@attrs.define
class AskingSession(AgentSession):
    """One conversation of AskingAgent."""

    policy: str
    asked: bool = False

    async def respond(self, messages: list[Message]) -> AssistantMessage:
        """First the tool call, then the policy as a final word."""
        if not self.asked:
            self.asked = True
            return AssistantMessage(content=None, tool_calls=(ToolCall(id="c1", name="which_task", arguments={}),))
        return AssistantMessage(content=f"{self.policy} ###STOP###")


class AgentPlugin:
    """Registers AskingAgent."""

    @hookimpl
    def register_agents(self, register: Callable[[Agent], None]) -> None:
        """Register the asking agent."""
        register(AskingAgent(name="asking"))


def go(tmp_path: Path, **config: Any) -> str:
    config = {"domain": "ctx", "agent": "asking", "baseline": False, "task_ids": ["inc-a"], "mode": Mode.NO_USER, **config}
    plugins = get_plugin_manager([], extra=[("ctx", ToyPlugin(ContextDomain(tasks=TASKS[:2]))), ("asking", AgentPlugin())])
    return run(RunConfig(**config), tmp_path / "r.db", plugins=plugins).run_id


def test_an_async_tool_is_awaited_in_a_conversation_and_sees_task_profile_and_models(tmp_path: Path) -> None:
    run_id = go(tmp_path)
    store = Store(tmp_path / "r.db")
    try:
        tool_rows = list(store.db.query("select content from messages where role = 'tool'"))
        record = store.run(run_id)
    finally:
        store.close()
    assert [r["content"] for r in tool_rows] == ["inc-a profile=bench models=True"]
    assert record is not None and record.config["retrieval"] == "plain"  # the variant in effect is part of the identity even when not asked for


def test_the_run_identity_changes_with_the_retrieval_variant(tmp_path: Path) -> None:
    assert go(tmp_path) != go(tmp_path, retrieval="fancy")


def test_a_domain_without_variants_refuses_retrieval_options(tmp_path: Path) -> None:
    plugins = get_plugin_manager([], extra=[("toy", ToyPlugin())])
    for config in ({"retrieval": "bm25"}, {"retrieval_options": {"top_k": 3}}):
        with pytest.raises(ConfigError, match="has no knowledge-retrieval variants"):
            run(RunConfig(domain="toy", baseline=False, **config), tmp_path / "r.db", plugins=plugins)


def test_outside_a_conversation_an_async_tool_is_an_error_message_not_a_crash() -> None:
    data = ContextDomain().load(DomainOptions())
    env = build_environment(data, data.tasks[0])
    message = env.execute(ToolCall(id="x", name="which_task", arguments={}))
    assert message.error and "runs only inside a conversation" in (message.content or "")


def test_the_users_toolkit_writes_into_the_agents_state_when_shared() -> None:
    data = ContextDomain().load(DomainOptions())
    env = build_environment(data, data.tasks[0])
    assert env.user_tools is not None and env.user_tools.state is env.agent_tools.state
    env.execute(ToolCall(id="u", name="bump", arguments={"name": "a"}, requestor="user"))
    assert env.agent_tools.state.counters["a"]["value"] == 1
    fresh = build_environment(data, data.tasks[0])
    assert fresh.agent_tools.state.counters["a"]["value"] == 0  # each environment forks the pristine state


def test_the_policy_is_the_tasks_own_when_the_domain_says_so() -> None:
    data = ContextDomain().load(DomainOptions(retrieval="fancy"))
    assert data.policy_for(Mode.DEFAULT, data.tasks[1]) == "Policy for read-b (fancy)."
    assert data.policy_for(Mode.DEFAULT) == "Help with counters."


def test_bench_profile_has_no_discoverable_texts() -> None:
    assert load_profile(None).discoverable_tools("ctx", "agent") is None  # a profile directory's: bench-profiles' tests


def test_a_state_built_for_both_sides_is_one_object() -> None:
    state = State.from_records({"counters": {"a": {"value": 0}}})
    tools = LedgerTools(state)
    assert tools.context.task is None and tools.context.models is None


def test_a_domain_whose_tools_call_a_model_role_refuses_to_start_without_it(tmp_path: Path) -> None:
    @attrs.define(kw_only=True)
    class Needy(ContextDomain):
        def load(self, options: DomainOptions) -> DomainData:
            return attrs.evolve(super().load(options), model_roles=("embeddings",))

    plugins = get_plugin_manager([], extra=[("ctx", ToyPlugin(Needy(tasks=TASKS[:2]))), ("asking", AgentPlugin())])
    with pytest.raises(ConfigError, match="domain 'ctx' with retrieval 'plain' needs a model for the embeddings role"):
        run(RunConfig(domain="ctx", agent="asking", baseline=False, mode=Mode.NO_USER), tmp_path / "r.db", plugins=plugins)
    assert not (tmp_path / "r.db").exists() or Store(tmp_path / "r.db").runs() == []


class SecretTools(CounterTools):
    """Counters with a hidden tool."""

    @tool(ToolKind.WRITE, offered=False)
    def reset_counter_7311(self, name: str) -> str:
        """Free-form text the model never sees as a schema."""
        self.state.counters[name] = {"value": 0}
        return "reset"


def test_a_hidden_tool_runs_when_named_and_replays_by_kind_but_is_never_offered() -> None:
    data = attrs.evolve(ToyDomain(tasks=TASKS[:1]).load(DomainOptions()), agent_toolkit=SecretTools)
    env = build_environment(data, None)
    assert "reset_counter_7311" not in {s["function"]["name"] for s in env.agent_schemas()}
    assert SecretTools.specs()["reset_counter_7311"].offered is False
    call = ToolCall(id="h", name="reset_counter_7311", arguments={"name": "b"})
    assert env.mutates(call) and env.execute(call).content == "reset"
    assert env.agent_tools.state.counters["b"]["value"] == 0
