"""The OpenAI Agents SDK through `bench run`, against the fake OpenAI server playing the scripted world.

The agent's factory is the ten-line file below; the SDK talks the Responses API (its default) to the bridge,
which sends every call through bench's model access to the fake server's chat completions.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench_kernel.testing import FakeOpenAIServer, plan_change_world

pytest.importorskip("agents", reason="pip install 'bench-bridge[agents-sdk]' (openai-agents==0.24.0)")

from bridge_runs import bench_run, rows, tool_turns

FACTORY = """\
from agents import Agent, function_tool


def make(ctx):
    return Agent(name="helpdesk", instructions=ctx.instructions, model=ctx.model,
                 tools=[function_tool(t) for t in ctx.tools])
"""


@pytest.fixture
def factory(tmp_path: Path) -> str:
    path = tmp_path / "sdk_agent.py"
    path.write_text(FACTORY)
    assert len(FACTORY.splitlines()) <= 10
    return f"{path}:make"


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(plan_change_world()) as fake:
        yield fake


def test_multi_turn_with_the_simulated_user_then_from_the_cache(server: FakeOpenAIServer, factory: str, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    user = ["--user", "llm-user", "--user-model", "fake-model", "--user-base-url", server.base_url]
    bench_run(server, factory, db, *user, "--cache", "--run-id", "first")
    conversation = rows(db, "select * from conversations where run_id = 'first'")[0]
    assert (conversation["termination_reason"], conversation["reward"]) == ("user_stop", 1.0)
    assert tool_turns(db, "first") == [["find_customer_by_email"], ["get_customer", "list_plans"], ["change_plan"]]
    calls = rows(db, "select * from llm_calls where run_id = 'first' and role = 'agent'")
    assert len(calls) == 5 and all((c["prompt_tokens"], c["completion_tokens"], c["cached"]) == (10, 5, 0) for c in calls)
    assert len(server.completions) == 8  # five agent calls and three of the customer's, all as chat completions upstream

    bench_run(server, factory, db, *user, "--cache", "--run-id", "again")
    again = rows(db, "select * from llm_calls where run_id = 'again' and role = 'agent'")
    assert len(again) == 5 and all(c["cached"] == 1 for c in again)
    assert len(server.completions) == 8  # nothing new reached the model server
    assert rows(db, "select reward from conversations where run_id = 'again'")[0]["reward"] == 1.0


def test_no_user_mode(server: FakeOpenAIServer, factory: str, tmp_path: Path) -> None:
    db = tmp_path / "solo.db"
    bench_run(server, factory, db, "--mode", "no-user", "--run-id", "solo")
    conversation = rows(db, "select * from conversations where run_id = 'solo'")[0]
    assert (conversation["termination_reason"], conversation["reward"]) == ("agent_stop", 1.0)
    assert tool_turns(db, "solo") == [["find_customer_by_email"], ["get_customer", "list_plans"], ["change_plan"]]
    first = server.completions[0]["messages"]
    assert first[-1] == {"role": "user", "content": "Customer ada.okafor@example.net asks to move to the Fiber 1000 plan."}
    assert "done" in [t["function"]["name"] for t in server.completions[0]["tools"]]


def test_the_chat_completions_model_through_the_in_process_client(server: FakeOpenAIServer, tmp_path: Path) -> None:
    """A factory on the SDK's chat-completions model, through the in-process client."""
    path = tmp_path / "chat_agent.py"
    path.write_text(
        FACTORY.replace("model=ctx.model", "model=OpenAIChatCompletionsModel(ctx.model, ctx.client)").replace(
            "import Agent,", "import Agent, OpenAIChatCompletionsModel,"
        )
    )
    db = tmp_path / "chat.db"
    bench_run(server, f"{path}:make", db, "--mode", "no-user", "--run-id", "chat")
    assert rows(db, "select reward from conversations where run_id = 'chat'")[0]["reward"] == 1.0
