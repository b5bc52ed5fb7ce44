"""GSRT on hand-built conversations: no shift, a recovered shift, a transfer, a shift never acknowledged."""

from __future__ import annotations

import pytest
from bench_gsrt.recovery import Shift, recover

from bench_kernel import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage

GREETING = AssistantMessage(content="Hi! How can I help you today?")


def conversation(*after_shift: Message) -> list[Message]:
    """Greeting, a first goal handled, then the user's shift at index 3, then `after_shift`."""
    return [
        GREETING,
        UserMessage(content="Please cancel my reservation ABC123."),
        AssistantMessage(content="Your reservation ABC123 is cancelled."),
        UserMessage(content="Also, I need to add a checked baggage to my other booking."),
        *after_shift,
    ]


SHIFT = Shift(turn=3, goal_index=1, goal="baggage", tools=frozenset({"update_reservation_baggages"}))


def test_a_recovered_shift_counts_turns_from_the_true_shift_turn() -> None:
    messages = conversation(
        AssistantMessage(content="Sure, let me add a checked baggage to that booking."),  # 4: acknowledgement
        AssistantMessage(tool_calls=[ToolCall(id="b", name="update_reservation_baggages", arguments={})]),  # 5: tool, outcome
        ToolMessage(id="b", content="ok"),
    )
    r = recover(messages, SHIFT)
    assert (r.acknowledgment_turn, r.tool_turn, r.outcome_turn, r.transferred, r.recovered) == (4, 5, 5, False, True)
    assert (r.delta(r.acknowledgment_turn), r.delta(r.tool_turn), r.delta(r.outcome_turn)) == (1, 2, 2)


def test_a_transfer_is_not_a_recovery_even_when_acknowledged() -> None:
    messages = conversation(
        AssistantMessage(content="I see you need baggage changes."),
        AssistantMessage(tool_calls=[ToolCall(id="t", name="transfer_to_human_agents", arguments={"summary": "x"})]),
        ToolMessage(id="t", content="Transfer successful"),
        AssistantMessage(content="YOU ARE BEING TRANSFERRED TO A HUMAN AGENT. PLEASE HOLD ON."),
    )
    r = recover(messages, SHIFT)
    assert r.acknowledgment_turn == 4 and r.transferred and not r.recovered and r.outcome_turn is None


def test_a_shift_never_acknowledged() -> None:
    messages = conversation(AssistantMessage(content="Is there anything else I can help you with?"))
    r = recover(messages, SHIFT)
    assert (r.acknowledgment_turn, r.tool_turn, r.outcome_turn, r.recovered) == (None, None, None, False)


def test_a_goal_without_tools_has_its_outcome_at_the_acknowledgement() -> None:
    r = recover(conversation(AssistantMessage(content="Your checked baggage allowance is two bags.")), Shift(turn=3, goal_index=1, goal="ask"))
    assert (r.acknowledgment_turn, r.outcome_turn) == (4, 4)


def test_a_device_request_is_the_relevant_step_of_a_user_side_goal() -> None:
    shift = Shift(turn=3, goal_index=1, goal="data", tools=frozenset({"toggle_data"}))
    messages = conversation(
        AssistantMessage(content="Please do this on your device: toggle_data({})"),
        UserMessage(tool_calls=[ToolCall(id="u", name="toggle_data", requestor="user")]),
        ToolMessage(id="u", content="Mobile Data is now ON.", requestor="user"),
    )
    r = recover(messages, shift)
    assert (r.acknowledgment_turn, r.tool_turn, r.outcome_turn) == (4, 4, 5)


@pytest.mark.parametrize("until", [5, None])
def test_recovery_is_looked_for_only_until_the_next_shift(until: int | None) -> None:
    messages = conversation(
        AssistantMessage(content="One moment."), UserMessage(content="And my seat?"), AssistantMessage(content="Adding your checked baggage now.")
    )
    r = recover(messages, SHIFT, until)
    assert r.acknowledgment_turn == (None if until == 5 else 6)


def test_a_configured_judge_decides_the_acknowledgement() -> None:
    import asyncio

    from bench_gsrt.metric import judged

    from bench_kernel import Check, ConversationResult, EventLog, Judge, JudgeRequest, MetricContext, Task, TerminationReason, UserScenario

    class SaysFirst(Judge):
        """A judge that accepts only the first candidate message (the words alone would pick the second)."""

        async def judge(self, request: JudgeRequest) -> list[Check]:
            return [Check(subject=a, met=i == 0, detail="scripted") for i, a in enumerate(request.assertions)]

    messages = conversation(AssistantMessage(content="Sure."), AssistantMessage(content="Adding a checked baggage now."))
    task = Task(id="t", user_scenario=UserScenario(instructions="x"))
    result = ConversationResult(
        run_id="r",
        arm="agent",
        task_id="t",
        trial=0,
        seed=1,
        agent="a",
        user="u",
        termination_reason=TerminationReason.USER_STOP,
        messages=messages,
        reward_info=None,
        started_utc="",
        ended_utc="",
        duration_ms=0,
    )
    context = MetricContext(task=task, result=result, events=EventLog(), final_env=None, gold=None)  # type: ignore[arg-type]
    by_words = recover(messages, SHIFT)
    assert by_words.acknowledgment_turn == 5
    assert asyncio.run(judged(SaysFirst(name="scripted"), context, by_words, None)).acknowledgment_turn == 4
