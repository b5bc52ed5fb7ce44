"""llm-react and llm-act: reading actions out of text, and whole conversations with a scripted model."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from bench_llm.agents import action_text, parse_action
from bench_llm.testing import text_reply, tool_reply

from bench_kernel import ChatRequest, ChatResponse, DomainData, Mode, ModelResponseError, Task


@pytest.mark.parametrize(
    "text",
    [
        'Thought: I need the account.\nAction: {"name": "get_customer", "arguments": {"customer_id": "C-1"}}',
        'Thought: fenced this time\nAction:\n```json\n{"name": "get_customer", "arguments": {"customer_id": "C-1"}}\n```',
        '```json\n{"name": "get_customer", "arguments": {"customer_id": "C-1"}}\n```',
        '**Thought:** bold markdown\n**Action:** {"name": "get_customer", "arguments": "{\\"customer_id\\": \\"C-1\\"}"}',
        'Action: {"name": "get_customer", "arguments": {"customer_id": "C-1"}}\nAction: {"name": "list_plans", "arguments": {}}',
        'Thought: {braces} first\nAction: {"name": "get_customer", "arguments": {"customer_id": "C-1"}} trailing',
    ],
)
def test_parse_action_finds_the_first_action(text: str) -> None:
    assert parse_action(text) == ("get_customer", {"customer_id": "C-1"})


def test_parse_action_without_arguments_means_none() -> None:
    assert parse_action('Action: {"name": "list_plans"}') == ("list_plans", {})


@pytest.mark.parametrize(
    "text",
    [
        "I think I should look up the customer.",
        "Thought: hmm\nAction: get_customer(C-1)",
        'Action: {"arguments": {"customer_id": "C-1"}}',
        'Action: {"name": "get_customer", "arguments": ["C-1"]}',
        'Action: {"name": "get_customer", "arguments": "not json"}',
        "",
    ],
)
def test_parse_action_refuses_what_is_not_an_action(text: str) -> None:
    with pytest.raises(ModelResponseError):
        parse_action(text)


def react_gold(task: Task, *, thought: bool = True, fence_every: int = 2) -> Callable[[ChatRequest], ChatResponse]:
    """A text model taking the task's agent-side gold actions, then answering; some actions in ```json fences."""
    actions = [a for a in task.gold_actions() if a.requestor == "assistant"]

    def answer(request: ChatRequest) -> ChatResponse:
        done = sum(1 for m in request.messages if m["role"] == "user" and m["content"].startswith("Observation: "))
        if done < len(actions):
            action = {"name": actions[done].name, "arguments": actions[done].arguments}
        else:
            action = {"name": "respond", "arguments": {"content": "All set: you are on Fiber 1000 now."}}
        body = json.dumps(action)
        body = f"```json\n{body}\n```" if done % fence_every == 1 else body
        return text_reply((f"Thought: step {done}.\n" if thought else "") + f"Action: {body}")

    return answer


@pytest.mark.parametrize("agent", ["llm-react", "llm-act"])
def test_text_agents_solve_a_task_from_text_actions(run_bench, data: DomainData, agent: str) -> None:
    task = data.task("upgrade_by_email")
    out = run_bench({"agent": react_gold(task, thought=agent == "llm-react")}, agent=agent, task_ids=[task.id])
    row = out.conversation(task.id)
    assert (row["termination_reason"], row["error"], row["reward"]) == ("user_stop", None, 1.0)
    last = out.requests("agent")[-1]
    assert last.tools is None and last.tool_choice is None
    assert [m["role"] for m in last.messages] == ["system", "assistant", "user", "assistant", "user", "assistant", "user"]
    assert last.messages[1]["content"] == 'Action: {"name": "respond", "arguments": {"content": "Hi! How can I help you today?"}}'
    assert last.messages[4]["content"].startswith("Observation: {") and "C-1001" in last.messages[4]["content"]
    stored = out.messages(task.id)
    assert stored[-2]["content"] == "All set: you are on Fiber 1000 now."
    assert stored[-2]["raw_data"]["text"].endswith('"content": "All set: you are on Fiber 1000 now."}}')


def test_react_and_act_prompts_describe_tools_and_format(run_bench, data: DomainData) -> None:
    task = data.task("upgrade_by_email")
    prompts = {}
    for agent in ("llm-react", "llm-act"):
        out = run_bench({"agent": react_gold(task)}, agent=agent, task_ids=[task.id])
        prompts[agent] = out.requests("agent")[0].messages[0]["content"]
    for prompt in prompts.values():
        assert '"name": "find_customer_by_email"' in prompt and "Observation:" in prompt
        assert '"respond"' in prompt and data.policy.strip() in prompt
    assert "Thought:" in prompts["llm-react"]
    assert "Thought:" not in prompts["llm-act"]


def test_unparsable_reply_ends_as_agent_error_when_asked(run_bench) -> None:
    out = run_bench(
        {"agent": lambda r: text_reply("Sure, let me check that for you!")},
        agent="llm-react",
        task_ids=["upgrade_by_email", "plan_price_question"],
        agent_options={"on_parse_error": "error"},
    )
    for task_id in ("upgrade_by_email", "plan_price_question"):
        row = out.conversation(task_id)
        assert (row["termination_reason"], row["reward"]) == ("agent_error", 0.0)
        assert "ModelResponseError: no action in the reply" in row["error"]
        [event] = events(out, task_id)
        assert (event["problem"], event["handling"], event["text"]) == ("unparsed", "ended", "Sure, let me check that for you!")


def events(out: Any, task_id: str, kind: str = "llm.reply_problem") -> list[dict[str, Any]]:
    rows = out.store.conversation_events(f"{out.run_id}/agent/{task_id}/0")
    return [json.loads(r["data_json"]) for r in rows if r["kind"] == kind]


LONG = "Let me look into that for you. " * 40


def test_unparsable_reply_goes_to_the_user_and_is_stored_whole(run_bench) -> None:
    def answer(request: ChatRequest) -> ChatResponse:
        if sum(m["role"] == "assistant" for m in request.messages) == 1:
            return text_reply(f"Thought: no action this time\nAction: {LONG}")
        return text_reply('Action: {"name": "respond", "arguments": {"content": "Done."}}')

    out = run_bench({"agent": answer}, agent="llm-react", task_ids=["plan_price_question"])
    row = out.conversation("plan_price_question")
    assert row["error"] is None and row["termination_reason"] != "agent_error"
    [said] = [m for m in out.messages("plan_price_question") if "parse_error" in (m.get("raw_data") or {})]
    assert said["content"] == LONG.strip()
    assert said["raw_data"]["text"] == f"Thought: no action this time\nAction: {LONG}"
    assert said["raw_data"]["parse_error"].startswith("the action is not a JSON object")
    [event] = events(out, "plan_price_question")
    assert (event["problem"], event["handling"], event["llm_call"]) == ("unparsed", "sent_to_user", 0)
    assert event["text"] == said["raw_data"]["text"]
    # The conversation went on: the customer answered the text.
    stored = out.messages("plan_price_question")
    assert stored[stored.index(said) + 1]["role"] == "user"


def test_a_second_action_is_not_run_and_not_in_the_history(run_bench) -> None:
    first = 'Thought: look up\nAction: {"name": "find_customer_by_email", "arguments": {"email": "ada@example.net"}}'
    extra = '\nObservation: ok\nAction: {"name": "change_plan", "arguments": {"customer_id": "C-1001", "plan_id": "fiber-1000"}}'

    def answer(request: ChatRequest) -> ChatResponse:
        if not any(m["content"].startswith("Observation:") for m in request.messages if m["role"] == "user"):
            return text_reply(first + extra)
        return text_reply('Action: {"name": "respond", "arguments": {"content": "Found you."}}')

    out = run_bench({"agent": answer}, agent="llm-act", task_ids=["upgrade_by_email"])
    assert [c["name"] for c in out.tool_calls("upgrade_by_email")] == ["find_customer_by_email"]
    later = out.requests("agent")[-1].messages
    assert first in [m["content"] for m in later] and not any("change_plan" in m["content"] for m in later[1:])
    [event] = events(out, "upgrade_by_email")
    assert (event["problem"], event["handling"]) == ("dropped_actions", "first_action_run")
    called = next(m for m in out.messages("upgrade_by_email") if m.get("tool_calls"))
    assert called["raw_data"]["dropped_actions"][0]["name"] == "change_plan"


def test_text_agents_accept_native_tool_calls(run_bench, data: DomainData) -> None:
    task = data.task("upgrade_by_email")
    actions = [a for a in task.gold_actions() if a.requestor == "assistant"]

    def answer(request: ChatRequest) -> ChatResponse:
        done = sum(1 for m in request.messages if m["role"] == "user" and m["content"].startswith("Observation: "))
        if done < len(actions):
            return tool_reply(actions[done].name, actions[done].arguments)
        return text_reply('Action: {"name": "respond", "arguments": {"content": "All set."}}')

    out = run_bench({"agent": answer}, agent="llm-react", task_ids=[task.id])
    row = out.conversation(task.id)
    assert (row["termination_reason"], row["reward"]) == ("user_stop", 1.0)
    history = out.requests("agent")[-1].messages
    assert history[3]["content"] == action_text(actions[0].name, actions[0].arguments)
    assert "tool_calls" not in history[3]


def test_an_unknown_on_parse_error_is_refused(run_bench) -> None:
    out = run_bench(
        {"agent": lambda r: text_reply("hi")}, agent="llm-react", task_ids=["plan_price_question"], agent_options={"on_parse_error": "ignore"}
    )
    assert "on_parse_error must be one of respond, error, not 'ignore'" in out.conversation("plan_price_question")["error"]


def test_unknown_tool_is_reported_back_as_an_observation(run_bench) -> None:
    def answer(request: ChatRequest) -> ChatResponse:
        seen = [m["content"] for m in request.messages if m["role"] == "user" and m["content"].startswith("Observation:")]
        if not seen:
            return text_reply('Thought: try it\nAction: {"name": "teleport", "arguments": {}}')
        return text_reply(json.dumps({"name": "respond", "arguments": {"content": seen[0]}}))

    out = run_bench({"agent": answer}, agent="llm-react", task_ids=["upgrade_by_email"])
    assert out.messages("upgrade_by_email")[-2]["content"] == "Observation: Error: Tool 'teleport' not found."


def test_react_no_user_mode_ends_with_the_done_action(run_bench, data: DomainData) -> None:
    task = data.task("upgrade_by_email")
    actions = task.gold_actions()

    def answer(request: ChatRequest) -> ChatResponse:
        done = sum(1 for m in request.messages if m["role"] == "user")
        action = actions[done] if done < len(actions) else None
        payload = {"name": action.name, "arguments": action.arguments} if action else {"name": "done", "arguments": {}}
        return text_reply(f"Thought: step {done}\nAction: {json.dumps(payload)}")

    out = run_bench({"agent": answer}, agent="llm-react", task_ids=[task.id], mode=Mode.NO_USER)
    row = out.conversation(task.id)
    assert (row["termination_reason"], row["reward"]) == ("agent_stop", 1.0)
    system = out.requests("agent")[0].messages[0]["content"]
    assert f"<ticket>\n{task.ticket}\n</ticket>" in system and '"done"' in system and '"respond"' not in system
