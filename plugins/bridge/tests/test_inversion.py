"""The tool side and the turn side with a tiny hand-written framework (no real framework needed)."""

from __future__ import annotations

import asyncio
import inspect
import typing
from typing import Any, Literal

import attrs
import pytest
from bench_bridge.agent import FrameworkAgent
from bench_bridge.tools import CallsTurn, ToolExchange, ToolFailed, tool_function, tool_spec

from bench_kernel import ConfigError, Mode, ModelUnavailableError, ToolCall, ToolMessage
from bench_kernel.testing import plan_change_world

SCHEMA = {
    "type": "function",
    "function": {
        "name": "open_ticket",
        "description": "Open a support ticket for a customer.",
        "parameters": {
            "type": "object",
            "required": ["customer_id", "category"],
            "properties": {
                "customer_id": {"type": "string", "description": 'The customer id, such as "C-1001".'},
                "category": {"type": "string", "enum": ["billing", "equipment"], "description": "What the ticket is about."},
                "tags": {"type": "array", "items": {"type": "string"}},
                "priority": {"type": ["integer", "null"]},
                "details": {"type": "object"},
                "from": {"type": "boolean", "description": "A keyword as a name."},
            },
        },
    },
}


def test_tool_functions_have_real_signatures_and_docstrings() -> None:
    seen: list[tuple[str, dict[str, Any]]] = []

    async def invoke(name: str, arguments: dict[str, Any]) -> str:
        seen.append((name, arguments))
        return "ok"

    function = tool_function(tool_spec(SCHEMA), invoke)
    signature = inspect.signature(function)
    assert function.__name__ == "open_ticket" and list(signature.parameters) == ["customer_id", "category", "tags", "priority", "details", "from_"]
    assert [p.default for p in signature.parameters.values()][:2] == [inspect.Parameter.empty] * 2
    hints = typing.get_type_hints(function)
    assert hints["customer_id"] is str and hints["category"] == Literal["billing", "equipment"]
    assert hints["tags"] == list[str] | None and hints["priority"] == int | None
    assert hints["details"] == dict[str, Any] | None and hints["return"] is str
    assert function.__doc__ == (
        'Open a support ticket for a customer.\n\nArgs:\n    customer_id: The customer id, such as "C-1001".\n'
        "    category: What the ticket is about.\n    tags:\n    priority:\n    details:\n"
        "    from_: A keyword as a name."
    )
    assert asyncio.run(function("C-1", "billing", tags=("a",), from_=True)) == "ok"
    assert seen == [("open_ticket", {"customer_id": "C-1", "category": "billing", "tags": ["a"], "from": True})]
    with pytest.raises(TypeError):
        asyncio.run(function(category="billing"))


def test_invocations_match_proposals_by_name_and_arguments_in_order() -> None:
    async def go() -> None:
        exchange = ToolExchange(tool_names=frozenset({"get", "put"}), wait_s=5)
        exchange.proposed(
            [
                ToolCall(id="a", name="get", arguments={"k": 1}),
                ToolCall(id="b", name="get", arguments={"k": 2}),
                ToolCall(id="c", name="hallucinated", arguments={}),
            ]
        )
        second = asyncio.ensure_future(exchange.invoke("get", {"k": 2}))
        first = asyncio.ensure_future(exchange.invoke("get", {"k": 1, "optional": None}))
        step = await exchange.steps.get()
        # All the turn's calls of known tools at once, ids and arguments as the model gave them.
        assert isinstance(step, CallsTurn) and [(c.id, c.arguments) for c in step.calls] == [("a", {"k": 1}), ("b", {"k": 2})]
        exchange.deliver([ToolMessage(id="a", content="one"), ToolMessage(id="b", content="No such key.", error=True)])
        assert await first == "one" and await second == "No such key."
        # A call nobody proposed is its own turn, with an id of the bridge's.
        alone = asyncio.ensure_future(exchange.invoke("put", {"k": 3}))
        step = await exchange.steps.get()
        assert isinstance(step, CallsTurn) and [(c.id, c.name) for c in step.calls] == [("bridge-call-1", "put")]
        exchange.deliver([ToolMessage(id="bridge-call-1", content="done")])
        assert await alone == "done" and exchange.steps.empty()

    asyncio.run(go())


def test_tool_errors_can_raise() -> None:
    async def go() -> None:
        exchange = ToolExchange(tool_names=frozenset({"get"}), raise_errors=True, wait_s=5)
        exchange.proposed([ToolCall(id="a", name="get")])
        call = asyncio.ensure_future(exchange.invoke("get", {}))
        await exchange.steps.get()
        exchange.deliver([ToolMessage(id="a", content="Unknown customer.", error=True)])
        with pytest.raises(ToolFailed, match="Unknown customer"):
            await call

    asyncio.run(go())


def test_a_multi_turn_conversation_with_parallel_calls(run_bridge: Any) -> None:
    outcome = run_bridge()
    row = outcome.conversation()
    assert (row["termination_reason"], row["reward"]) == ("user_stop", 1.0)
    # Parallel calls are one assistant turn, with the ids the model gave them; bench's environment ran every call.
    assert outcome.turns() == [
        [("call_1_0_0", "find_customer_by_email")],
        [("call_1_1_0", "get_customer"), ("call_1_1_1", "list_plans")],
        [("call_1_2_0", "change_plan")],
    ]
    messages = outcome.messages()
    results = [m for m in messages if m["role"] == "tool"]
    assert [m["id"] for m in results] == ["call_1_0_0", "call_1_1_0", "call_1_1_1", "call_1_2_0"]
    assert '"plan_id": "fiber-1000"' in results[-1]["content"]
    said = [(m["role"], m["content"]) for m in messages if m.get("content") and m["role"] in ("user", "assistant")]
    assert said[1:3] == [
        ("user", "Hi, I'd like faster internet: please move me to the Fiber 1000 plan."),
        ("assistant", "Sure. What is the email address on your account?"),
    ]
    # Every model call of the framework is in the ledger as the agent's, with its tokens; usage lands on the messages.
    agent_calls = outcome.calls("agent")
    assert len(agent_calls) == 5 and all(c["prompt_tokens"] == 10 and c["completion_tokens"] == 5 for c in agent_calls)
    final = [m for m in messages if m["role"] == "assistant"][-1]
    assert final["content"] == "Done: you are now on Fiber 1000." and final["usage"] == {"prompt_tokens": 10, "completion_tokens": 5}
    assert row["agent_cost"] is None or row["agent_cost"] >= 0


def test_conversations_at_once_share_the_endpoint(run_bridge: Any) -> None:
    outcome = run_bridge(trials=4, concurrency=4)
    rows = outcome.store.conversations(outcome.run_id)
    assert len(rows) == 4 and all(r["reward"] == 1.0 for r in rows)
    assert len(outcome.calls("agent")) == 20


def test_calls_run_one_after_the_other_are_still_one_turn(run_bridge: Any) -> None:
    outcome = run_bridge(options={"sequential": True, "stream": True})
    assert outcome.conversation()["reward"] == 1.0
    assert [len(turn) for turn in outcome.turns()] == [1, 2, 1]


def test_sequential_proposals_and_a_call_nobody_proposed(run_bridge: Any) -> None:
    outcome = run_bridge(world=plan_change_world(parallel=False), options={"extra_call": ["list_plans", {}]})
    assert outcome.conversation()["reward"] == 1.0
    turns = outcome.turns()
    assert turns[0] == [("bridge-call-1", "list_plans")]
    assert [len(turn) for turn in turns] == [1, 1, 1, 1, 1]


@pytest.mark.parametrize("solo_done", [False, True])
def test_no_user_mode_from_the_ticket_to_a_stop(run_bridge: Any, solo_done: bool) -> None:
    outcome = run_bridge(world=plan_change_world(solo_done=solo_done), mode=Mode.NO_USER)
    row = outcome.conversation()
    assert (row["termination_reason"], row["reward"]) == ("agent_stop", 1.0)
    messages = outcome.messages()
    assert messages[-1]["content"] == "###STOP###"
    if not solo_done:
        assert messages[-1]["raw_data"]["final_output"] == "Moved ada.okafor@example.net to Fiber 1000."
    assert [len(turn) for turn in outcome.turns()] == [1, 2, 1]


def test_a_framework_exception_is_an_agent_error(run_bridge: Any) -> None:
    outcome = run_bridge(options={"fail_with": "the graph is broken"})
    row = outcome.conversation()
    assert row["termination_reason"] == "agent_error"
    assert row["error"] == "agent: ParticipantError: mini: RuntimeError: the graph is broken"


def test_factories_are_checked_before_the_run(mini_runner: None) -> None:
    agent = FrameworkAgent()
    for options, problem in [
        ({}, "needs --agent-option factory"),
        ({"factory": "nocolon"}, "MODULE:FUNCTION"),
        ({"factory": "no_such_module_xyz:make"}, "cannot import"),
        ({"factory": "bridge_mini_framework:missing"}, "has no 'missing'"),
        ({"factory": "bridge_mini_framework:not_an_agent"}, "no bridge runner plays"),
    ]:
        with pytest.raises(ConfigError, match=problem):
            agent.fingerprint(options)
    fingerprint = agent.fingerprint({"factory": "bridge_mini_framework:make"})
    assert fingerprint["factory"] == "bridge_mini_framework:make" and fingerprint["framework"] == "mini"
    assert len(fingerprint["factory_sha256"]) == 64 and fingerprint["framework_version"] != "unknown"


def test_an_unavailable_model_is_an_infrastructure_error_not_the_agents(run_bridge: Any) -> None:
    world = plan_change_world()

    def flaky(request: Any) -> Any:
        if request.tools and any(m["role"] == "tool" for m in request.messages):
            raise ModelUnavailableError("HTTP 503 after 5 attempts")
        return world.respond(request)

    outcome = run_bridge(world=_Scripted(flaky))
    row = outcome.conversation()
    assert row["termination_reason"] == "infrastructure_error" and "503 after 5 attempts" in row["error"]
    assert [c["error"] is not None for c in outcome.calls("agent")] == [False, False, True]


def test_a_conversation_cut_short_cancels_the_framework_turn(run_bridge: Any) -> None:
    outcome = run_bridge(max_steps=6)
    assert outcome.conversation()["termination_reason"] == "max_steps"


def test_every_wait_is_bounded(run_bridge: Any) -> None:
    outcome = run_bridge(options={"hang": True, "timeout_s": 0.3})
    row = outcome.conversation()
    assert row["termination_reason"] == "agent_error" and "no tool call and no answer within 0.3 s" in row["error"]


@attrs.define
class _Scripted:
    """A world stand-in: any function of the request, as the conftest's `world.respond`."""

    respond: Any
