"""Hand-built annotated dialogues: messages, the goal.status events at the messages where statuses change, and the goals."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import AssistantMessage, Event, Goal, GoalStatusChange, Message, ToolCall, ToolMessage, UserMessage, unstructure


@attrs.frozen
class Dialogue:
    """One annotated dialogue."""

    id: str
    goals: list[Goal]
    messages: list[Message]
    events: list[Event]


def build(dialogue_id: str, goals: Sequence[Goal], script: Sequence[tuple[Any, ...]]) -> Dialogue:
    """Script lines: ("user"|"agent", text, {goal: status}) or ("tool", name, arguments, result, {goal: status})."""
    messages: list[Message] = []
    events: list[Event] = []
    current = {g.id: "not_mentioned" for g in goals}
    for line in script:
        if line[0] == "tool":
            _, name, arguments, result, changes = line
            call_id = f"c{len(messages)}"
            messages.append(AssistantMessage(tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments)]))
            messages.append(ToolMessage(id=call_id, content=result))
        else:
            speaker, text, changes = line
            messages.append(UserMessage(content=text) if speaker == "user" else AssistantMessage(content=text))
        for goal_id, status in changes.items():
            change = GoalStatusChange(goal_id=goal_id, status=status, previous_status=current[goal_id])
            events.append(Event(kind=change.kind, data=unstructure(change), message_index=len(messages) - 1, source="test"))
            current[goal_id] = status
    final = [attrs.evolve(g, status=current[g.id]) for g in goals]
    return Dialogue(id=dialogue_id, goals=final, messages=messages, events=events)


HOTEL = Goal(id="goal_1", domain="Hotels", intent="ReserveHotel", content="Book a hotel room in Paris from May 3 to May 5 for two guests",
             core_content="book a hotel room for a location and dates", slot_values={"location": "Paris", "check_in_date": "May 3"})
BALANCE = Goal(id="goal_2", domain="Banks", intent="CheckBalance", content="Check the balance of the checking account",
               core_content="check account balance", slot_values={"account_type": "checking"})
PAY_HOTEL = Goal(id="goal_3", domain="Payment", intent="MakePayment", content="Pay for the hotel booking once confirmed",
                 core_content="make a payment", dependencies=["goal_1"])

MEDIUM = build("medium-1", [HOTEL, BALANCE, PAY_HOTEL], [
    ("agent", "Hello, how can I help you today?", {}),
    ("user", "I'd like to book a hotel in Paris from May 3 to May 5 for two guests.", {"goal_1": "open"}),
    ("agent", "I've placed your hotel reservation request in Paris; it is pending confirmation from the property.", {"goal_1": "pending"}),
    ("user", "Great. Also, can you check my checking account balance?", {"goal_2": "open"}),
    ("agent", "Your checking account balance is $2,400.", {"goal_2": "completed"}),
    ("user", "Thanks. Has the hotel in Paris been confirmed yet?", {}),
    ("agent", "Not yet, it's still pending. I will let you know.", {}),
    ("user", "OK. I also want to pay for the hotel once it is confirmed.", {"goal_3": "open"}),
    ("agent", "Good news: your hotel reservation in Paris is now confirmed.", {"goal_1": "completed"}),
    ("user", "Great, please go ahead with the payment for the hotel.", {}),
    ("tool", "pay_booking", {"booking_id": "H-1"}, '{"status": "completed", "amount": 420}', {"goal_3": "completed"}),
    ("agent", "The payment for the hotel went through.", {}),
    ("user", "That's all, thanks!", {}),
])
