"""LangGraphRunner with real LangGraph agents against the kernel's fake OpenAI server on 127.0.0.1."""

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

INSTALL = "LangGraph is not installed: pip install 'bench-bridge[langgraph]' (langgraph==1.2.*, langchain, langchain-openai)"
pytest.importorskip("langgraph", reason=INSTALL)
pytest.importorskip("langchain", reason=INSTALL)
pytest.importorskip("langchain_openai", reason=INSTALL)

from bench_bridge.runners.langgraph import LangGraphRunner  # noqa: E402
from langchain.agents import create_agent  # noqa: E402
from langchain_core.messages import SystemMessage  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt import ToolNode, create_react_agent, tools_condition  # noqa: E402
from pydantic import SecretStr  # noqa: E402
from typing_extensions import TypedDict  # noqa: E402

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
    model = ChatOpenAI(model=ctx.model, base_url=ctx.base_url, api_key=ctx.api_key)
    return create_agent(model, ctx.tools, system_prompt=ctx.instructions)


def context(server: FakeOpenAIServer, shop: Shop) -> SimpleNamespace:
    """What the bridge's factory context holds, as far as these factories read it."""
    return SimpleNamespace(model="fake-model", base_url=server.base_url, api_key="test-key", tools=shop.tools(), instructions=INSTRUCTIONS)


def agent_for(server: FakeOpenAIServer, shop: Shop, **options: Any) -> Any:
    if not options:
        return make_agent(context(server, shop))
    model = ChatOpenAI(model="fake-model", base_url=server.base_url, api_key=SecretStr("test-key"))
    return create_agent(model, shop.tools(), system_prompt=INSTRUCTIONS, **options)


def react_agent_for(server: FakeOpenAIServer, shop: Shop) -> Any:
    """The older prebuilt factory (deprecated in LangGraph 1.x, still common)."""
    model = ChatOpenAI(model="fake-model", base_url=server.base_url, api_key=SecretStr("test-key"))
    return create_react_agent(model, shop.tools(), prompt=INSTRUCTIONS)


def hand_built_graph_for(server: FakeOpenAIServer, shop: Shop) -> Any:
    """A graph of the user's own: a model node, a ToolNode and LangGraph's tools_condition."""
    tools = shop.tools()
    model = ChatOpenAI(model="fake-model", base_url=server.base_url, api_key=SecretStr("test-key")).bind_tools(tools)

    async def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke([SystemMessage(INSTRUCTIONS), *state["messages"]])]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", tools_condition)
    builder.add_edge("tools", "model")
    return builder.compile()


BUILDERS = pytest.mark.parametrize(
    "build", [agent_for, react_agent_for, hand_built_graph_for], ids=["create_agent", "create_react_agent", "hand-built"]
)


def roles(body: dict[str, Any]) -> list[str]:
    return [m["role"] for m in body["messages"]]


def tool_contents(body: dict[str, Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in body["messages"] if m["role"] == "tool"}


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@BUILDERS
def test_a_tool_call_then_a_final_text(build: Any) -> None:
    async def scenario() -> None:
        shop = Shop()
        replies = [Reply.tool_call("get_order", {"order_id": "A1"}), Reply.text("Your order has shipped.")]
        async with FakeOpenAIServer(replies=replies) as server:
            text, state = await LangGraphRunner().turn(build(server, shop), None, "Where is order A1?")
        assert text == "Your order has shipped."
        assert shop.calls == [("get_order", {"order_id": "A1"})]
        assert [m.type for m in state] == ["human", "ai", "tool", "ai"]
        first, second = server.completions
        assert first["messages"][0] == {"role": "system", "content": INSTRUCTIONS}
        assert {t["function"]["name"] for t in first["tools"]} == {"get_order", "cancel_order"}
        assert first["tools"][0]["function"]["description"] == "Look up an order by its id."
        assert list(tool_contents(second).values()) == ["order A1: shipped"]

    asyncio.run(scenario())


def test_the_second_turn_sees_the_first_turns_history() -> None:
    async def scenario() -> None:
        shop, runner = Shop(), LangGraphRunner()
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
        assert [m.type for m in state] == ["human", "ai", "tool", "ai", "human", "ai"]

    asyncio.run(scenario())


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@BUILDERS
def test_parallel_tool_calls_run_concurrently_and_an_error_reaches_the_model(build: Any) -> None:
    async def scenario() -> None:
        shop = Shop(delay_s=0.2)
        calls = [("get_order", {"order_id": "missing"}), ("cancel_order", {"order_id": "B2", "reason": "late"})]
        replies = [Reply.tool_calls(calls), Reply.text("B2 is cancelled; I could not find the other order.")]
        async with FakeOpenAIServer(replies=replies) as server:
            text, state = await LangGraphRunner().turn(build(server, shop), None, "Cancel B2 and find my other order.")
        assert text.startswith("B2 is cancelled")
        assert sorted(name for name, _ in shop.calls) == ["cancel_order", "get_order"]
        assert shop.most_running == 2
        sent = server.completions[1]
        assert roles(sent) == ["system", "user", "assistant", "tool", "tool"]
        proposed = [call["id"] for call in sent["messages"][2]["tool_calls"]]
        assert tool_contents(sent) == {proposed[0]: "Error: order missing not found", proposed[1]: "order B2: cancelled"}
        assert [getattr(m, "status", None) for m in state if m.type == "tool"] == ["error", "success"]

    asyncio.run(scenario())


def test_a_tool_error_does_not_end_the_turn_even_alone() -> None:
    async def scenario() -> None:
        shop, runner = Shop(), LangGraphRunner()
        replies = [
            Reply.tool_call("get_order", {"order_id": "missing"}),
            Reply.text("No such order."),
            Reply.tool_call("get_order", {"order_id": "missing"}),
            Reply.text("Still none."),
        ]
        async with FakeOpenAIServer(replies=replies) as server:
            agent = agent_for(server, shop)
            text, state = await runner.turn(agent, None, "Find order missing.")
            assert text == "No such order."
            text, state = await runner.turn(agent, state, "Try again.")  # the tools are wrapped once, not twice
        assert text == "Still none."
        assert list(tool_contents(server.completions[-1]).values()) == ["Error: order missing not found"] * 2

    asyncio.run(scenario())


def test_a_graph_compiled_with_a_checkpointer_keeps_the_runners_history() -> None:
    async def scenario() -> None:
        runner = LangGraphRunner()
        async with FakeOpenAIServer(replies=[Reply.text("Hi."), Reply.text("Fine.")]) as server:
            agent = agent_for(server, Shop(), checkpointer=InMemorySaver())
            _, state = await runner.turn(agent, None, "Hello")
            text, state = await runner.turn(agent, state, "How are you?")
        assert text == "Fine."
        assert roles(server.completions[-1]) == ["system", "user", "assistant", "user"]
        assert len(state) == 4

    asyncio.run(scenario())


def test_matches_compiled_graphs_with_messages_only() -> None:
    runner = LangGraphRunner()
    with FakeOpenAIServer() as server:
        agent = agent_for(server, Shop())

    class Counter(TypedDict):
        count: int

    builder = StateGraph(Counter)
    builder.add_node("step", lambda state: {"count": state["count"] + 1})
    builder.set_entry_point("step")
    assert runner.matches(agent)
    assert not runner.matches(builder.compile())  # no `messages` in its state
    assert not runner.matches(builder)  # not compiled
    assert not runner.matches(object())
    assert not runner.matches(type("CompiledStateGraph", (), {"channels": {"messages": None}})())


def test_does_not_match_a_pydantic_ai_agent() -> None:
    pydantic_ai = pytest.importorskip("pydantic_ai", reason="pydantic-ai is not installed")
    from pydantic_ai.models.test import TestModel

    assert not LangGraphRunner().matches(pydantic_ai.Agent(TestModel()))


def test_matches_without_importing_langgraph() -> None:
    code = (
        "import sys; from bench_bridge.runners.langgraph import LangGraphRunner; r = LangGraphRunner();"
        "assert not r.matches(object()) and not r.matches({'messages': []});"
        "loaded = [m for m in ('langgraph', 'langchain', 'langchain_core') if m in sys.modules];"
        "assert not loaded, loaded"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parents[1]), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_names_an_installed_distribution() -> None:
    runner = LangGraphRunner()
    assert (runner.name, runner.distribution) == ("langgraph", "langgraph")
    assert metadata.version(runner.distribution).startswith("1.")
