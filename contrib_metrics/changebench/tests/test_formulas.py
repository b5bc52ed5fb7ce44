"""Each AgentChangeBench formula on hand-built conversations, edge cases included."""

from __future__ import annotations

from typing import Any

import pytest
from bench_changebench.scoring import action_score, communicate_score, pooled_tcrr, tcrr, tool_calls, tsr, tue

from bench_kernel import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage


def agent_calls(*calls: tuple[str, dict[str, Any]], text: str | None = None, error: str | None = None, start: int = 0) -> list[Message]:
    """One assistant message making these calls, then their results (the last one failing with `error`)."""
    made = [ToolCall(id=f"c{start + i}", name=name, arguments=args) for i, (name, args) in enumerate(calls)]
    out: list[Message] = [AssistantMessage(content=text, tool_calls=made)]
    for i, call in enumerate(made):
        failed = error is not None and i == len(made) - 1
        out.append(ToolMessage(id=call.id, content=f"Error: {error}" if failed else "ok", error=failed))
    return out


def test_communicate_is_case_insensitive_and_needs_agent_text() -> None:
    messages = [AssistantMessage(content="Your charge of $89.99 on TX_101 is disputed."), UserMessage(content="tx_202?")]
    assert communicate_score(["tx_101", "$89.99", "tx_202"], messages) == pytest.approx(2 / 3)
    assert communicate_score(["tx_101"], [UserMessage(content="tx_101")]) == 0.0


def test_an_action_set_scores_half_for_the_tool_and_half_for_the_listed_parameters() -> None:
    calls = tool_calls(
        agent_calls(("get_customer_by_phone", {"phone_number": "+1555"}), ("get_transactions", {"account_id": "a2", "limit": 5}))
        + agent_calls(("get_transactions", {"account_id": "a1"}), start=2)
    )
    identify = [("get_customer_by_id", {"customer_id": "c1"}), ("get_customer_by_phone", {"phone_number": "+1555"})]
    transactions = [("get_transactions", {"account_id": "a1"})]  # only the FIRST call of a name counts: a2 -> 0.5
    dispute = [("file_dispute", {"tx_id": "t1"})]
    assert action_score([identify, transactions, dispute], calls) == pytest.approx((1.0 + 0.5 + 0.0) / 3)
    assert action_score([[("get_transactions", {})]], calls) == 1.0  # no listed parameters: any call matches


def test_tsr_renormalises_over_the_channels_a_task_has() -> None:
    assert tsr({"communicate": 1.0, "action": 0.5, "nl": 0.0}) == pytest.approx(0.25 + 0.225)
    assert tsr({"communicate": None, "action": 0.5, "nl": 1.0}) == pytest.approx((0.45 * 0.5 + 0.30) / 0.75)
    assert tsr({"communicate": None, "action": 1.0, "nl": None}) == 1.0  # a task with no NL assertions
    assert tsr({"communicate": None, "action": None, "nl": None}) is None


def test_tue_counts_errors_and_only_parameter_errors_against_validity() -> None:
    messages = agent_calls(("lookup", {"id": 1}), ("lookup", {"id": 2}), error="Customer X not found") + agent_calls(
        ("pay", {}), error="Invalid parameter: amount", start=2
    )
    scores = tue(tool_calls(messages))
    assert scores["tool_correctness"] == pytest.approx(1 / 3)
    assert scores["param_validity"] == pytest.approx(2 / 3)
    assert scores[""] == pytest.approx(0.6 / 3 + 0.4 * 2 / 3)
    assert tue([]) == {"": 0.0, "tool_correctness": 0.0, "param_validity": 0.0}


def test_tcrr_window_of_three_previous_turns_and_batches_beyond_two() -> None:
    lookup = ("lookup", {"id": 1})
    messages = (
        agent_calls(lookup)  # turn 1
        + agent_calls(lookup, start=1)  # turn 2: repeat within the window
        + [AssistantMessage(content="thinking"), AssistantMessage(content="still")]  # turns 3 and 4, no calls
        + agent_calls(("lookup", {"id": 1}), start=2)  # turn 5: turns 2-4 in the window: repeat
        + agent_calls(("x", {"a": [2, 1]}), ("x", {"a": [1, 2]}), ("x", {"a": [1, 2]}), start=3)
    )  # turn 6: batch of 3
    calls = tool_calls(messages)
    assert [c.turn for c in calls] == [1, 2, 5, 6, 6, 6]
    scores = tcrr(calls)
    assert scores["window"] == pytest.approx(2 / 6)
    assert scores["batch"] == pytest.approx(1 / 6)
    assert scores[""] == pytest.approx(3 / 6)
    assert tcrr([]) == {"": None, "window": None, "batch": None}


def test_the_older_batch_rule_counts_by_tool_name() -> None:
    calls = tool_calls(agent_calls(("x", {"a": 1}), ("x", {"a": 2}), ("x", {"a": 3})))
    assert tcrr(calls)["batch"] == 0.0
    assert tcrr(calls, batch_by_name=True)["batch"] == pytest.approx(1 / 3)


def test_pooling_conversations_inflates_tcrr_as_published() -> None:
    """Per conversation nothing below is redundant; pooled, turn numbers of different conversations share buckets."""
    first = tool_calls(agent_calls(("lookup", {"id": 1})))
    second = tool_calls(agent_calls(("other", {})) + agent_calls(("lookup", {"id": 1}), start=1))
    assert tcrr(first)[""] == 0.0 and tcrr(second)[""] == 0.0
    assert pooled_tcrr([first, second]) == pytest.approx(1 / 3)  # second's turn-2 lookup repeats first's turn-1 one
    assert pooled_tcrr([first, first, first]) == pytest.approx(1 / 3)  # three trials' turn-1 calls: a batch of three


def test_user_tool_calls_count_with_the_current_assistant_turn() -> None:
    messages: list[Message] = [
        AssistantMessage(content="Please toggle it."),
        UserMessage(tool_calls=[ToolCall(id="u1", name="toggle", requestor="user")]),
        ToolMessage(id="u1", content="ok", requestor="user"),
    ]
    assert [(c.name, c.requestor, c.turn) for c in tool_calls(messages)] == [("toggle", "user", 1)]
