"""llm-fc through real conversations on the mock domain, with a scripted agent model."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from bench_llm.testing import own_tool_turns, text_reply, tool_reply

from bench_kernel import (
    GREETING,
    ChatRequest,
    ChatResponse,
    ConfigError,
    DomainData,
    Mode,
    ModelResponseError,
    ModelUnavailableError,
    Task,
    build_environment,
)


def replay_gold(task: Task, closing: str = "Done: you are now on Fiber 1000.") -> Callable[[ChatRequest], ChatResponse]:
    """An agent model that makes the task's agent-side gold calls one per turn, then says `closing`."""
    actions = [a for a in task.gold_actions() if a.requestor == "assistant"]

    def answer(request: ChatRequest) -> ChatResponse:
        done = own_tool_turns(request)
        if done < len(actions):
            response = tool_reply(actions[done].name, actions[done].arguments, call_id=f"c{done}")
            return ChatResponse(content=None, tool_calls=response.tool_calls, reasoning=f"step {done}", prompt_tokens=50)
        return text_reply(closing, reasoning="all steps done")

    return answer


def test_replaying_the_gold_actions_scores_one(run_bench, data: DomainData) -> None:
    task = data.task("upgrade_by_email")
    out = run_bench({"agent": replay_gold(task)}, agent="llm-fc", task_ids=[task.id])
    row = out.conversation(task.id)
    assert (row["termination_reason"], row["error"], row["reward"]) == ("user_stop", None, 1.0)
    calls = out.tool_calls(task.id)
    assert [(c["name"], c["requestor"], c["error"]) for c in calls] == [("find_customer_by_email", "assistant", 0), ("change_plan", "assistant", 0)]


def test_the_model_sees_instructions_policy_tools_and_history_in_order(run_bench, data: DomainData) -> None:
    task = data.task("upgrade_by_email")
    out = run_bench({"agent": replay_gold(task)}, agent="llm-fc", task_ids=[task.id])
    first, *_, last = out.requests("agent")
    system = first.messages[0]
    assert system["role"] == "system"
    assert "<policy>\n" + data.policy + "\n</policy>" in system["content"]  # the policy as the domain has it
    assert "customer-service agent for the mock service" in system["content"]
    assert first.tools == build_environment(data, task).agent_schemas()
    assert first.tool_choice == "auto"
    assert first.seed == out.conversation(task.id)["seed"]
    assert [m["role"] for m in first.messages] == ["system", "assistant", "user"]
    assert first.messages[1]["content"] == GREETING
    assert [m["role"] for m in last.messages] == ["system", "assistant", "user", "assistant", "tool", "assistant", "tool"]
    call, result = last.messages[3], last.messages[4]
    arguments = json.dumps({"email": "ada.okafor@example.net"})
    assert call["tool_calls"][0]["function"] == {"name": "find_customer_by_email", "arguments": arguments}
    assert result["tool_call_id"] == call["tool_calls"][0]["id"] == "c0"
    assert "C-1001" in result["content"]


def test_reasoning_is_stored_but_not_sent_back(run_bench, data: DomainData) -> None:
    task = data.task("upgrade_by_email")
    out = run_bench({"agent": replay_gold(task)}, agent="llm-fc", task_ids=[task.id])
    stored = [m for m in out.messages(task.id) if m["role"] == "assistant" and m.get("raw_data")]
    assert [m["raw_data"]["reasoning"] for m in stored] == ["step 0", "step 1", "all steps done"]
    assert stored[-1]["usage"] == {"prompt_tokens": 100, "completion_tokens": 10}
    assert all("reasoning_content" not in m for r in out.requests("agent") for m in r.messages)


def test_keep_reasoning_sends_it_back(run_bench, data: DomainData) -> None:
    task = data.task("upgrade_by_email")
    out = run_bench({"agent": replay_gold(task)}, agent="llm-fc", task_ids=[task.id], agent_options={"keep_reasoning": True})
    kept = [m["reasoning_content"] for m in out.requests("agent")[-1].messages if "reasoning_content" in m]
    assert kept == ["step 0", "step 1"]


def test_oracle_plan_lists_the_gold_actions(run_bench, data: DomainData) -> None:
    task = data.task("speed_ticket_after_restart")
    out = run_bench({"agent": lambda r: text_reply("Could you restart your router?")}, agent="llm-fc", task_ids=[task.id], mode=Mode.ORACLE_PLAN)
    system = out.requests("agent")[0].messages[0]["content"]
    assert "<plan>" in system
    assert '1. Call `find_customer_by_email` with arguments {"email": "femi.adeyemi@example.net"}.' in system
    assert "2. Ask the customer to run `check_router_light` on their side with arguments {}." in system
    assert '4. Call `open_ticket` with arguments {"category": "slow_speed", "customer_id": "C-1006"}.' in system


def test_default_mode_has_no_plan_and_no_ticket(run_bench, data: DomainData) -> None:
    task = data.task("speed_ticket_after_restart")
    out = run_bench({"agent": lambda r: text_reply("Hello")}, agent="llm-fc", task_ids=[task.id])
    system = out.requests("agent")[0].messages[0]["content"]
    assert "<plan>" not in system and "<ticket>" not in system


def solo_gold(task: Task) -> Callable[[ChatRequest], ChatResponse]:
    """Every gold action (both sides: the solo agent holds the router's tools too), then `done`."""
    actions = task.gold_actions()

    def answer(request: ChatRequest) -> ChatResponse:
        done = own_tool_turns(request)
        if done < len(actions):
            return tool_reply(actions[done].name, actions[done].arguments)
        return tool_reply("done", {})

    return answer


def test_no_user_mode_ends_with_done(run_bench, data: DomainData) -> None:
    task = data.task("reactivate_and_restart")
    out = run_bench({"agent": solo_gold(task)}, agent="llm-fc", task_ids=[task.id], mode=Mode.NO_USER)
    row = out.conversation(task.id)
    assert (row["termination_reason"], row["reward"]) == ("agent_stop", 1.0)
    assert out.messages(task.id)[-1]["content"] == "###STOP###"
    first = out.requests("agent")[0]
    assert first.tool_choice == "required"
    assert [m["role"] for m in first.messages] == ["system"]
    assert f"<ticket>\n{task.ticket}\n</ticket>" in first.messages[0]["content"]
    assert data.solo_policy.strip() in first.messages[0]["content"]
    names = [t["function"]["name"] for t in first.tools]
    assert names[-1] == "done" and "restart_router" in names


def test_no_user_mode_text_reply_is_an_agent_error(run_bench, data: DomainData) -> None:
    out = run_bench({"agent": lambda r: text_reply("I will look into it.")}, agent="llm-fc", task_ids=["upgrade_by_email"], mode=Mode.NO_USER)
    row = out.conversation("upgrade_by_email")
    assert (row["termination_reason"], row["reward"]) == ("agent_error", 0.0)


def test_an_unreachable_model_is_an_infrastructure_error_of_that_conversation_only(run_bench) -> None:
    # Not the agent's fault: excluded from metrics and run again on resume.
    def fail(request: ChatRequest) -> ChatResponse:
        raise ModelUnavailableError("endpoint down after 5 attempts")

    out = run_bench({"agent": fail}, agent="llm-fc", task_ids=["upgrade_by_email", "plan_price_question"])
    for task_id in ("upgrade_by_email", "plan_price_question"):
        row = out.conversation(task_id)
        assert row["termination_reason"] == "infrastructure_error"
        assert "ModelUnavailableError: endpoint down" in row["error"]
    assert sum(r["errors"] for r in out.store.llm_costs(out.run_id)) == 2


def test_a_model_that_answers_garbage_is_the_agents_failure(run_bench) -> None:
    def garbage(request: ChatRequest) -> ChatResponse:
        raise ModelResponseError("the reply is not JSON")

    out = run_bench({"agent": garbage}, agent="llm-fc", task_ids=["upgrade_by_email"])
    row = out.conversation("upgrade_by_email")
    assert row["termination_reason"] == "agent_error" and "ModelResponseError" in row["error"]


def test_without_an_agent_model_the_run_is_refused_before_it_starts(run_bench) -> None:
    with pytest.raises(ConfigError, match="--agent-model") as caught:
        run_bench({}, agent="llm-fc", task_ids=["upgrade_by_email"])
    assert "llm-fc" in str(caught.value)
