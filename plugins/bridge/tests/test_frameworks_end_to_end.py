"""LangGraph and pydantic-ai agents through `bench run`, each from a factory of at most ten lines.

The same scripted world as the Agents SDK's test plays the agent's model (sequential and parallel tool calls) and the
simulated user; every framework call goes through the bridge into bench's model access.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from bridge_runs import bench_run, rows, tool_turns

from bench_kernel.testing import FakeOpenAIServer, plan_change_world

FACTORIES = {
    "langgraph": (
        """\
from langchain.agents import create_agent
from langchain_openai import ChatOpenAI


def make(ctx):
    model = ChatOpenAI(model=ctx.model, base_url=ctx.base_url, api_key=ctx.api_key)
    return create_agent(model, ctx.tools, system_prompt=ctx.instructions)
""",
        "langchain_openai",
        "pip install 'bench-bridge[langgraph]'",
    ),
    "pydantic-ai": (
        """\
from pydantic_ai import Agent
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider


def make(ctx):
    model = OpenAIChatModel(ctx.model, provider=OpenAIProvider(openai_client=ctx.client))
    return Agent(model, instructions=ctx.instructions, tools=ctx.tools)
""",
        "pydantic_ai",
        "pip install 'bench-bridge[pydantic-ai]'",
    ),
}
PLAN_CHANGE = [["find_customer_by_email"], ["get_customer", "list_plans"], ["change_plan"]]


@pytest.fixture(params=sorted(FACTORIES))
def factory(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    source, module, install = FACTORIES[request.param]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{request.param} is not installed: {install}")
    assert len(source.splitlines()) <= 10
    path = tmp_path / f"{request.param.replace('-', '_')}_agent.py"
    path.write_text(source)
    return f"{path}:make"


def test_multi_turn_with_the_simulated_user_parallel_calls_then_from_the_cache(factory: str, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with FakeOpenAIServer(plan_change_world()) as server:
        user = ["--user", "llm-user", "--user-model", "fake-model", "--user-base-url", server.base_url]
        bench_run(server, factory, db, *user, "--cache", "--run-id", "first")
        sent = len(server.completions)
        bench_run(server, factory, db, *user, "--cache", "--run-id", "again")
        assert len(server.completions) == sent  # the second run was served from the cache
    conversation = rows(db, "select * from conversations where run_id = 'first'")[0]
    assert (conversation["termination_reason"], conversation["reward"]) == ("user_stop", 1.0)
    assert tool_turns(db, "first") == PLAN_CHANGE  # the parallel pair stored as one assistant turn
    calls = rows(db, "select * from llm_calls where run_id = 'first' and role = 'agent'")
    assert len(calls) >= 4 and all(c["prompt_tokens"] and c["completion_tokens"] for c in calls)
    again = rows(db, "select * from llm_calls where run_id = 'again' and role = 'agent'")
    assert len(again) == len(calls) and all(c["cached"] == 1 for c in again)
    assert rows(db, "select reward from conversations where run_id = 'again'")[0]["reward"] == 1.0


def test_no_user_mode(factory: str, tmp_path: Path) -> None:
    db = tmp_path / "solo.db"
    with FakeOpenAIServer(plan_change_world()) as server:
        bench_run(server, factory, db, "--mode", "no-user", "--run-id", "solo")
    conversation = rows(db, "select * from conversations where run_id = 'solo'")[0]
    assert (conversation["termination_reason"], conversation["reward"]) == ("agent_stop", 1.0)
    assert tool_turns(db, "solo") == PLAN_CHANGE
