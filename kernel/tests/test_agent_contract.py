"""Agents that make their own model calls (issue 23): why a conversation ended, unknown costs, fingerprints."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from seam_plugins import Registers
from toy_domain import ToyPlugin

from bench_kernel import Agent, AgentSession, ConversationSetup, TerminationReason
from bench_kernel.builtin.participants import OracleSession
from bench_kernel.errors import ConfigError, ModelUnavailableError, ResumeConflictError
from bench_kernel.modelhub.hub import ConversationModels, LedgerEntry, ModelHub
from bench_kernel.plugins import get_plugin_manager, load_profile
from bench_kernel.run.playing import agent_cost
from bench_kernel.run.runner import RunConfig, RunSummary, run
from bench_kernel.schema.messages import AssistantMessage, Message
from bench_kernel.store.store import Store


@attrs.define
class WatchedSession(AgentSession):
    """The oracle, failing or hanging when told to, and keeping the termination the kernel set before close()."""

    inner: AgentSession
    closed: list[TerminationReason | None]
    fail: str | None
    reports: bool = False

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        if self.fail == "agent":
            raise RuntimeError("agent exploded")
        if self.fail == "infrastructure":
            raise ModelUnavailableError("the agent's endpoint is gone")
        if self.fail == "hang":
            await asyncio.sleep(30)
        message = await self.inner.respond(incoming)
        if self.reports:  # what bench-llm's adapters store from a reply's usage and model
            return attrs.evolve(message, usage={"prompt_tokens": 50, "completion_tokens": 5}, raw_data={"model": "acme-1"})
        return message

    def is_stop(self, message: AssistantMessage) -> bool:
        return self.inner.is_stop(message)

    async def close(self) -> None:
        self.closed.append(self.termination)


@attrs.define(kw_only=True)
class WatchedAgent(Agent):
    """An agent standing for one that calls its models itself (bench sees none of its calls)."""

    name: str = "watched"
    fail: str | None = None
    reports: bool = False
    closed: list[TerminationReason | None] = attrs.field(factory=list)
    prints: Any = attrs.field(factory=dict)
    """What fingerprint() returns (an exception instance is raised)."""

    def start(self, setup: ConversationSetup) -> AgentSession:
        return WatchedSession(OracleSession(setup), self.closed, self.fail, self.reports)

    def fingerprint(self, options: Mapping[str, Any]) -> dict[str, str]:
        if isinstance(self.prints, Exception):
            raise self.prints
        return self.prints  # type: ignore[no-any-return]


def go(tmp_path: Path, agent: Agent, **config: Any) -> RunSummary:
    plugins = get_plugin_manager([], extra=[("toy", ToyPlugin()), ("watched", Registers(agents=[agent]))])
    return run(RunConfig(domain="toy", agent=agent.name, **config), tmp_path / "runs.db", plugins=plugins)


def conversations(tmp_path: Path, run_id: str) -> list[dict[str, Any]]:
    store = Store(tmp_path / "runs.db")
    try:
        return store.conversations(run_id)
    finally:
        store.close()


# --------------------------------------------------------------------------- the termination close() sees


@pytest.mark.parametrize(
    ("fail", "expected"),
    [
        (None, TerminationReason.USER_STOP),
        ("agent", TerminationReason.AGENT_ERROR),
        ("infrastructure", TerminationReason.INFRASTRUCTURE_ERROR),
    ],
)
def test_close_is_told_why_the_conversation_ended(tmp_path: Path, fail: str | None, expected: TerminationReason) -> None:
    agent = WatchedAgent(fail=fail)
    summary = go(tmp_path, agent, task_ids=["inc-a"], baseline=False)
    assert agent.closed == [expected]
    assert [r["termination_reason"] for r in conversations(tmp_path, summary.run_id)] == [expected.value]


def test_a_cancelled_conversation_is_closed_with_no_termination(tmp_path: Path) -> None:
    agent = WatchedAgent(fail="hang")
    summary = go(tmp_path, agent, task_ids=["inc-a"], baseline=False, run_timeout_s=0.5)
    assert summary.status == "incomplete" and summary.finished == 0
    assert agent.closed == [None]


def test_sessions_that_never_heard_of_termination_still_close() -> None:
    assert AgentSession().termination is None  # the class default: participants written before it existed keep working


# --------------------------------------------------------------------------- agent cost


def _models(*entries: LedgerEntry) -> ConversationModels:
    return ConversationModels(ModelHub(configs={}, backends={}), ledger=list(entries))


def _call(role: str, cost: float | None) -> LedgerEntry:
    return LedgerEntry(role=role, model="m", request_hash=None, prompt_tokens=10, completion_tokens=2, latency_ms=1, cost=cost, cached=False)


def test_agent_cost_is_unknown_when_bench_saw_none_of_an_agents_own_calls() -> None:
    own, offline = WatchedAgent(), WatchedAgent(calls_models_itself=False)
    assert agent_cost(own, _models()) is None
    assert agent_cost(own, _models(_call("user", 0.5))) is None  # the user's calls say nothing about the agent's
    assert agent_cost(own, _models(_call("agent", 0.25), _call("agent", 0.5))) == 0.75  # its calls went through bench
    assert agent_cost(own, _models(_call("agent", None))) is None  # a call with an unknown price
    assert agent_cost(offline, _models()) == 0.0


def test_stored_agent_cost_is_none_for_an_unseen_agent_and_zero_for_the_oracle(tmp_path: Path) -> None:
    unseen = go(tmp_path, WatchedAgent(), task_ids=["inc-a"])
    costs = {r["arm"]: (r["agent_cost"], r["user_cost"]) for r in conversations(tmp_path, unseen.run_id)}
    assert costs == {"agent": (None, 0.0), "baseline": (0.0, 0.0)}
    oracle = run(
        RunConfig(domain="toy", task_ids=["inc-a"], baseline=False),
        tmp_path / "runs.db",
        plugins=get_plugin_manager([], extra=[("toy", ToyPlugin())]),
    )
    assert [r["agent_cost"] for r in conversations(tmp_path, oracle.run_id)] == [0.0]


def test_reported_usage_is_summed_for_the_report_with_an_unknown_cost(tmp_path: Path) -> None:
    summary = go(tmp_path, WatchedAgent(reports=True), task_ids=["inc-a"])
    store = Store(tmp_path / "runs.db")
    try:  # what the report's header and costs show (bench-report's)
        models, [row] = store.reported_models(summary.run_id), store.reported_usage(summary.run_id)
        replies = store.db.execute("select count(*) from messages where usage_json is not null").fetchone()[0]
    finally:
        store.close()
    assert models == ["acme-1"]
    assert (row["arm"], row["role"], row["model"], row["calls"]) == ("agent", "agent (reported)", "acme-1", replies)
    assert (row["prompt_tokens"], row["completion_tokens"], row["cost"]) == (50 * replies, 5 * replies, None)


# --------------------------------------------------------------------------- fingerprints


def _record(tmp_path: Path, run_id: str) -> Any:
    store = Store(tmp_path / "runs.db")
    try:
        return store.run(run_id)
    finally:
        store.close()


def test_a_fingerprint_is_part_of_the_identity_and_the_run_id(tmp_path: Path) -> None:
    first = go(tmp_path, WatchedAgent(prints={"framework": "acme 1.0", "sha256": "a" * 64}), task_ids=["inc-a"])
    edited = go(tmp_path, WatchedAgent(prints={"framework": "acme 1.0", "sha256": "b" * 64}), task_ids=["inc-a"])
    assert first.run_id != edited.run_id
    record = _record(tmp_path, first.run_id)
    assert record.config["agent_fingerprint"] == {"framework": "acme 1.0", "sha256": "a" * 64}
    config = RunConfig(domain="toy", agent="watched", task_ids=["inc-a"])
    profile = load_profile(None)
    assert record.config_hash == config.config_hash(record.task_sets, profile, record.config["agent_fingerprint"])
    assert record.config_hash != config.config_hash(record.task_sets, profile)


def test_resuming_with_edited_agent_code_is_refused(tmp_path: Path) -> None:
    go(tmp_path, WatchedAgent(prints={"sha256": "a" * 64}), task_ids=["inc-a"], run_id="fixed")
    with pytest.raises(ResumeConflictError, match="agent_fingerprint"):
        go(tmp_path, WatchedAgent(prints={"sha256": "b" * 64}), task_ids=["inc-a"], run_id="fixed")
    again = go(tmp_path, WatchedAgent(prints={"sha256": "a" * 64}), task_ids=["inc-a"], run_id="fixed")
    assert again.resumed


def test_no_fingerprint_leaves_the_identity_and_the_run_id_as_they_were(tmp_path: Path) -> None:
    summary = go(tmp_path, WatchedAgent(), task_ids=["inc-a"])
    record = _record(tmp_path, summary.run_id)
    config = RunConfig(domain="toy", agent="watched", task_ids=["inc-a"])
    profile = load_profile(None)
    assert "agent_fingerprint" not in record.config
    assert record.config_hash == config.config_hash(record.task_sets, profile)
    assert summary.run_id == f"toy-watched-{record.config_hash[:8]}"
    assert config.config_hash(record.task_sets, profile, {}) == config.config_hash(record.task_sets, profile)
    assert config.recorded_identity(profile, {}) == config.recorded_identity(profile)


def test_the_stored_configuration_holds_the_fingerprint(tmp_path: Path) -> None:
    summary = go(tmp_path, WatchedAgent(prints={"acme-agents": "0.24.0", "factory": "mybot:make", "sha256": "abcdef" * 11}), task_ids=["inc-a"])
    store = Store(tmp_path / "runs.db")
    try:
        record = store.run(summary.run_id)
    finally:
        store.close()
    assert record is not None  # the report's header shows it (bench-report's)
    assert record.config["agent_fingerprint"] == {"acme-agents": "0.24.0", "factory": "mybot:make", "sha256": "abcdef" * 11}


@pytest.mark.parametrize(
    ("prints", "message"),
    [
        ({"sha256": 1}, "must return a dict of str to str"),
        (["sha256"], "must return a dict of str to str"),
        (OSError("no source"), "could not compute its fingerprint: OSError: no source"),
    ],
)
def test_a_broken_fingerprint_refuses_the_run_before_anything_is_stored(tmp_path: Path, prints: Any, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        go(tmp_path, WatchedAgent(prints=prints), task_ids=["inc-a"])
    assert "agent 'watched' (plugin 'watched')" in str(caught.value)
    assert not (tmp_path / "runs.db").exists()
