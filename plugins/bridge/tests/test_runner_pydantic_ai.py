"""PydanticAIRunner with real pydantic-ai agents against the kernel's fake OpenAI server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from bench_kernel.testing import FakeOpenAIServer, Reply

INSTALL = "pydantic-ai is not installed: pip install 'bench-bridge[pydantic-ai]' (pydantic-ai-slim[openai]==2.62.*)"
pytest.importorskip("pydantic_ai", reason=INSTALL)
pytest.importorskip("openai", reason=INSTALL)

from bench_bridge.runners.pydantic_ai import PydanticAIRunner  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402
from pydantic import BaseModel  # noqa: E402
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.models.openai import OpenAIChatModel  # noqa: E402
from pydantic_ai.providers.openai import OpenAIProvider  # noqa: E402

INSTRUCTIONS = "You are a shop assistant."


class Shop:
    """The conversation's tools as the bridge hands them over: async callables with signatures and docstrings."""

    def __init__(self, *, delay_s: float = 0.0) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.running = self.most_running = 0
        self.delay_s = delay_s

    async def _run(self, name: str, arguments: dict[str, Any]) -> None:
        self.calls.append((name, arguments))
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            await asyncio.sleep(self.delay_s)
        finally:
            self.running -= 1

    def tools(self) -> list[Any]:
        async def get_order(order_id: str) -> str:
            """Look up an order by its id."""
            await self._run("get_order", {"order_id": order_id})
            if order_id == "missing":
                raise LookupError("Error: order missing not found")
            return f"order {order_id}: shipped"

        async def cancel_order(order_id: str, reason: str = "") -> str:
            """Cancel an order."""
            await self._run("cancel_order", {"order_id": order_id, "reason": reason})
            return f"order {order_id}: cancelled"

        return [get_order, cancel_order]


def make_agent(ctx: Any) -> Any:
    """The factory of docs/frameworks.md, word for word (RUNNERS.md)."""
    model = OpenAIChatModel(ctx.model, provider=OpenAIProvider(openai_client=ctx.client))
    return Agent(model, instructions=ctx.instructions, tools=ctx.tools)


def agent_for(server: FakeOpenAIServer, shop: Shop, **options: Any) -> Any:
    client = AsyncOpenAI(base_url=server.base_url, api_key="test-key")
    if not options:
        return make_agent(SimpleNamespace(model="fake-model", client=client, tools=shop.tools(), instructions=INSTRUCTIONS))
    model = OpenAIChatModel("fake-model", provider=OpenAIProvider(openai_client=client))
    return Agent(model, instructions=INSTRUCTIONS, tools=shop.tools(), **options)


def roles(body: dict[str, Any]) -> list[str]:
    return [m["role"] for m in body["messages"]]


def tool_contents(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


def test_a_tool_call_then_a_final_text() -> None:
    async def scenario() -> None:
        shop = Shop()
        replies = [Reply.tool_call("get_order", {"order_id": "A1"}), Reply.text("Your order has shipped.")]
        async with FakeOpenAIServer(replies=replies) as server:
            text, state = await PydanticAIRunner().turn(agent_for(server, shop), None, "Where is order A1?")
        assert text == "Your order has shipped."
        assert shop.calls == [("get_order", {"order_id": "A1"})]
        assert [m.kind for m in state] == ["request", "response", "request", "response"]
        first, second = server.completions
        assert first["messages"] == [{"role": "system", "content": INSTRUCTIONS}, {"role": "user", "content": "Where is order A1?"}]
        assert {t["function"]["name"] for t in first["tools"]} == {"get_order", "cancel_order"}
        assert first["tools"][0]["function"]["description"] == "Look up an order by its id."
        assert list(tool_contents(second).values()) == ["order A1: shipped"]

    asyncio.run(scenario())


def test_the_second_turn_sees_the_first_turns_history() -> None:
    async def scenario() -> None:
        shop, runner = Shop(), PydanticAIRunner()
        replies = [Reply.tool_call("get_order", {"order_id": "A1"}), Reply.text("It shipped."), Reply.text("Bye!")]
        async with FakeOpenAIServer(replies=replies) as server:
            agent = agent_for(server, shop)
            _, state = await runner.turn(agent, None, "Where is order A1?")
            text, state = await runner.turn(agent, state, "Thanks.")
        assert text == "Bye!"
        last = server.completions[-1]
        assert roles(last) == ["system", "user", "assistant", "tool", "assistant", "user"]
        assert [last["messages"][i]["content"] for i in (1, 4, 5)] == ["Where is order A1?", "It shipped.", "Thanks."]
        assert last["messages"][2]["tool_calls"][0]["function"]["name"] == "get_order"
        assert len(state) == 6

    asyncio.run(scenario())


def test_parallel_tool_calls_run_concurrently_and_an_error_reaches_the_model() -> None:
    async def scenario() -> None:
        shop = Shop(delay_s=0.2)
        calls = [("get_order", {"order_id": "missing"}), ("cancel_order", {"order_id": "B2", "reason": "late"})]
        replies = [Reply.tool_calls(calls), Reply.text("B2 is cancelled; I could not find the other order.")]
        async with FakeOpenAIServer(replies=replies) as server:
            text, _ = await PydanticAIRunner().turn(agent_for(server, shop), None, "Cancel B2 and find my other order.")
        assert text.startswith("B2 is cancelled")
        assert sorted(name for name, _ in shop.calls) == ["cancel_order", "get_order"]
        assert shop.most_running == 2
        sent = server.completions[1]
        assert roles(sent) == ["system", "user", "assistant", "tool", "tool"]
        proposed = [call["id"] for call in sent["messages"][2]["tool_calls"]]
        contents = tool_contents(sent)
        assert "Error: order missing not found" in contents[proposed[0]]  # pydantic-ai wraps it as {"error": ...}
        assert contents[proposed[1]] == "order B2: cancelled"

    asyncio.run(scenario())


def test_a_tool_error_does_not_end_the_turn_nor_spend_retries() -> None:
    async def scenario() -> None:
        shop, runner = Shop(), PydanticAIRunner()
        # Three failures in a row: more than the tool's retry budget (1), which ToolFailed does not spend.
        replies = [Reply.tool_call("get_order", {"order_id": "missing"}) for _ in range(3)] + [Reply.text("No such order.")]
        async with FakeOpenAIServer(replies=replies) as server:
            text, state = await runner.turn(agent_for(server, shop), None, "Find order missing.")
        assert text == "No such order."
        assert len(shop.calls) == 3
        assert all("Error: order missing not found" in c for c in tool_contents(server.completions[-1]).values())
        outcomes = [part.outcome for message in state for part in message.parts if part.part_kind == "tool-return"]
        assert outcomes == ["failed"] * 3

    asyncio.run(scenario())


def test_a_structured_output_comes_back_as_json() -> None:
    class Answer(BaseModel):
        status: str

    async def scenario() -> None:
        replies = [Reply.tool_call("final_result", {"status": "shipped"})]
        async with FakeOpenAIServer(replies=replies) as server:
            text, _ = await PydanticAIRunner().turn(agent_for(server, Shop(), output_type=Answer), None, "Status?")
        assert text == '{"status":"shipped"}'

    asyncio.run(scenario())


def test_matches_pydantic_ai_agents_only() -> None:
    runner = PydanticAIRunner()
    with FakeOpenAIServer() as server:
        agent = agent_for(server, Shop())
    assert runner.matches(agent)
    assert not runner.matches(Agent)  # the class, not an agent
    assert not runner.matches(object())
    assert not runner.matches(type("AbstractAgent", (), {})())


def test_does_not_match_a_langgraph_agent() -> None:
    pytest.importorskip("langgraph", reason="LangGraph is not installed")
    from langgraph.graph import MessagesState, StateGraph

    builder = StateGraph(MessagesState)
    builder.add_node("echo", lambda state: {"messages": []})
    builder.set_entry_point("echo")
    assert not PydanticAIRunner().matches(builder.compile())


def test_matches_without_importing_pydantic_ai() -> None:
    code = (
        "import sys; from bench_bridge.runners.pydantic_ai import PydanticAIRunner; r = PydanticAIRunner();"
        "assert not r.matches(object()) and r.distribution;"
        "assert 'pydantic_ai' not in sys.modules"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_names_the_installed_distribution() -> None:
    runner = PydanticAIRunner()
    assert runner.name == "pydantic-ai"
    assert runner.distribution in ("pydantic-ai", "pydantic-ai-slim")
    assert metadata.version(runner.distribution).startswith("2.")
