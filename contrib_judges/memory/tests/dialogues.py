"""Hand-built annotated dialogues: messages, the goal.status events at the messages where statuses change, and the goals."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs
from bench_atod import Goal, GoalStatusChange, StatusEntry

from bench_kernel import AssistantMessage, Event, Message, ToolCall, ToolMessage, UserMessage, unstructure
from bench_kernel.testing import Reply


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


HOTEL = Goal(
    id="goal_1",
    domain="Hotels",
    intent="ReserveHotel",
    content="Book a hotel room in Paris from May 3 to May 5 for two guests",
    core_content="book a hotel room for a location and dates",
    slot_values={"location": "Paris", "check_in_date": "May 3"},
)
BALANCE = Goal(
    id="goal_2",
    domain="Banks",
    intent="CheckBalance",
    content="Check the balance of the checking account",
    core_content="check account balance",
    slot_values={"account_type": "checking"},
)
PAY_HOTEL = Goal(
    id="goal_3",
    domain="Payment",
    intent="MakePayment",
    content="Pay for the hotel booking once confirmed",
    core_content="make a payment",
    dependencies=["goal_1"],
)

MEDIUM = build(
    "medium-1",
    [HOTEL, BALANCE, PAY_HOTEL],
    [
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
    ],
)

FLIGHT = Goal(
    id="goal_1",
    domain="Flights",
    intent="ReserveOnewayFlight",
    content="Book a flight from Boston to Rome on June 10",
    core_content="book flight",
    slot_values={"origin": "Boston", "destination": "Rome", "date": "June 10"},
)
ROME_HOTEL = Goal(
    id="goal_2",
    domain="Hotels",
    intent="ReserveHotel",
    content="Book a hotel in Rome for the trip",
    core_content="book hotel",
    slot_values={"location": "Rome"},
)
WEATHER = Goal(
    id="goal_3",
    domain="Weather",
    intent="GetWeather",
    content="Check the weather in Rome that week",
    core_content="check weather",
    slot_values={"city": "Rome"},
)
FIND_FOOD = Goal(
    id="goal_4",
    domain="Restaurants",
    intent="FindRestaurants",
    content="Find a good restaurant in Rome near the Pantheon",
    core_content="search restaurant",
    slot_values={"city": "Rome"},
)
TABLE = Goal(
    id="goal_5",
    domain="Restaurants",
    intent="ReserveRestaurant",
    content="Book a table for two at the restaurant found",
    core_content="book restaurant",
    slot_values={"restaurant_name": "Da Enzo", "time": "8 pm", "party_size": 2},
    dependencies=["goal_4"],
)
PAY_FLIGHT = Goal(
    id="goal_6", domain="Payment", intent="MakePayment", content="Pay for the flight", core_content="make payment", dependencies=["goal_1"]
)
FLORENCE = Goal(
    id="goal_7",
    domain="Hotels",
    intent="ReserveHotel",
    content="Book a hotel in Florence on June 14",
    core_content="book hotel",
    slot_values={"location": "Florence", "check_in_date": "June 14"},
)
OPERA = Goal(
    id="goal_8",
    domain="Events",
    intent="BuyEventTickets",
    content="Buy two tickets for the opera concert in Rome on June 12",
    core_content="book ticket",
    slot_values={"city": "Rome", "number_of_tickets": 2},
)

COMPLEX_GOALS = [FLIGHT, ROME_HOTEL, WEATHER, FIND_FOOD, TABLE, PAY_FLIGHT, FLORENCE, OPERA]
COMPLEX_SCRIPT: list[tuple[Any, ...]] = [
    ("agent", "Hi, what can I do for you?", {}),
    ("user", "I need a flight from Boston to Rome on June 10.", {"goal_1": "open"}),
    ("agent", "I have submitted the flight booking from Boston to Rome; the airline is processing it.", {"goal_1": "pending"}),
    ("user", "While that is going on, book a hotel in Rome for the same dates.", {"goal_2": "open"}),
    ("agent", "Your hotel in Rome is reserved.", {"goal_2": "completed"}),
    ("user", "What will the weather be like in Rome that week?", {"goal_3": "open"}),
    ("agent", "The forecast for Rome shows sunny days around 28 degrees.", {"goal_3": "completed"}),
    ("user", "Also find me a good restaurant in Rome near the Pantheon.", {"goal_4": "open"}),
    ("agent", "I found a restaurant near the Pantheon: Da Enzo, with great reviews.", {"goal_4": "completed"}),
    ("user", "Then book a table for two at that restaurant at 8 pm on June 11.", {"goal_5": "open"}),
    ("agent", "Your table for two at Da Enzo is booked for 8 pm on June 11.", {"goal_5": "completed"}),
    ("user", "Please also pay for the flight.", {"goal_6": "open"}),
    ("agent", "The payment for the flight has to wait until the airline confirms your ticket.", {}),
    ("user", "I was also thinking about a hotel in Florence for June 14.", {"goal_7": "open"}),
    ("agent", "Sure, I can look for a hotel in Florence.", {}),
    ("user", "Actually, forget about the Florence hotel, I don't need it anymore.", {"goal_7": "abandoned"}),
    ("agent", "Okay, I have dropped the Florence hotel search.", {}),
    ("user", "One more thing: can you get two tickets for the opera concert in Rome on June 12?", {"goal_8": "open"}),
    ("agent", "Unfortunately the opera concert in Rome is sold out.", {"goal_8": "failed"}),
    ("user", "Too bad. Any news on my flight?", {}),
    ("tool", "check_flight_status", {"booking_id": "F-9"}, '{"status": "confirmed"}', {"goal_1": "completed"}),
    ("agent", "Your flight from Boston to Rome is now confirmed, so I am processing the payment.", {"goal_6": "pending"}),
    ("user", "Thanks, let me know when the payment goes through.", {}),
    ("agent", "The payment for your flight was successful.", {"goal_6": "completed"}),
    ("user", "Perfect, that is everything.", {}),
    ("agent", "Have a great trip!", {}),
]
COMPLEX = build("complex-1", COMPLEX_GOALS, COMPLEX_SCRIPT)


def reworded(dialogue: Dialogue, texts: dict[int, str]) -> Dialogue:
    """The same dialogue (same goals, same events) with some messages said differently."""
    messages = [attrs.evolve(m, content=texts[i]) if i in texts else m for i, m in enumerate(dialogue.messages)]  # type: ignore[misc]
    return Dialogue(id=f"{dialogue.id}-reworded", goals=dialogue.goals, messages=messages, events=dialogue.events)


def annotated(dialogue: Dialogue) -> Dialogue:
    """The dialogue as ATOD releases it: no events, each goal's status history in turns (turn t = message t-1)."""
    history: dict[str, list[StatusEntry]] = {g.id: [StatusEntry(turn=0, status="not_mentioned")] for g in dialogue.goals}
    for e in dialogue.events:
        history[e.data["goal_id"]].append(StatusEntry(turn=(e.message_index or 0) + 1, status=e.data["status"]))
    goals = [
        attrs.evolve(g, status_history=history[g.id], first_mentioned_turn=history[g.id][1].turn if len(history[g.id]) > 1 else None)
        for g in dialogue.goals
    ]
    return Dialogue(id=f"{dialogue.id}-annotated", goals=goals, messages=dialogue.messages, events=[])


# Synonyms and rewordings outside the rules judge's word lists (same goals, same status changes).
PARAPHRASED = reworded(
    COMPLEX,
    {
        1: "I need to get from Boston to Rome by air on June 10.",
        2: "I have put in the booking for your trip from Boston to Rome; the carrier is working on it.",
        3: "While that is going on, find me lodging in Rome for the same dates.",
        4: "Your lodging in Rome is secured.",
        5: "Will it be sunny in Rome that week?",
        6: "Expect clear skies in Rome, around 28 degrees.",
        7: "Also, where could I eat well in Rome near the Pantheon?",
        8: "Da Enzo, a trattoria near the Pantheon, has excellent reviews.",
        9: "Then reserve a table for two there at 8 pm on June 11.",
        10: "Your table for two at Da Enzo is set for 8 pm on June 11.",
        11: "Please also settle the bill for the plane ticket.",
        15: "Actually, I've changed my mind about Florence.",
        16: "Okay, Florence is off the list.",
        17: "One more thing: can you get two seats for the opera in Rome on June 12?",
        18: "Regrettably the opera in Rome has no seats left.",
        19: "Too bad. Any news on my trip?",
        22: "Your trip from Boston to Rome is locked in, so I am processing the payment.",
        23: "Thanks, tell me when the money has gone out.",
        24: "The charge for your trip went through.",
    },
)

# Goals raised together and their news given together, by position and pronoun rather than by name.
DENSE = build(
    "dense-1",
    [HOTEL, BALANCE, PAY_HOTEL],
    [
        ("agent", "Hello, how can I help you today?", {}),
        (
            "user",
            "Book a hotel in Paris for May 3, check my checking account balance, and pay for the hotel once it is confirmed.",
            {"goal_1": "open", "goal_2": "open", "goal_3": "open"},
        ),
        ("agent", "The first is pending, the balance is $2,400, and the last one will follow.", {"goal_1": "pending", "goal_2": "completed"}),
        ("user", "And the other two?", {}),
        ("agent", "Both went through: the room is confirmed and so is the charge.", {"goal_1": "completed", "goal_3": "completed"}),
        ("user", "Thanks, bye.", {}),
    ],
)


def hotel_model(body: dict[str, Any]) -> Reply:
    """A memory judge model: a hotel goal when the exchange names a hotel, otherwise nothing; nothing changes on audit."""
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    if "Read one exchange" in system:
        goals = [{"content": "book a hotel in Paris", "core_content": "book hotel paris", "domain": "Hotels", "status": None}]
        return Reply.text(json.dumps({"goals": goals if "hotel" in user.lower() else []}), prompt_tokens=200, completion_tokens=40)
    if "same task" in system:
        return Reply.text('{"same": true}')
    if "How does the new task relate" in system:
        return Reply.text('{"relation": "none"}')
    return Reply.text('{"status": null}')


def to_atod(dialogue: Dialogue, complexity: str, *, with_changes: bool = True) -> dict[str, Any]:
    """The dialogue in ATOD's released shape: one utterance per turn (tool steps dropped; their news moves to the next
    utterance), goal_status_changes per turn, each goal's status_history in turns."""
    kept = [i for i, m in enumerate(dialogue.messages) if not isinstance(m, ToolMessage) and m.content]
    position = {i: next(n for n, k in enumerate(kept) if k >= i) for i in range(len(dialogue.messages))}
    changes: dict[int, list[dict[str, Any]]] = {}
    history: dict[str, list[dict[str, Any]]] = {g.id: [{"turn": 0, "status": "not_mentioned"}] for g in dialogue.goals}
    for e in dialogue.events:
        turn = position[e.message_index or 0] + 1
        changes.setdefault(turn, []).append({"goal_id": e.data["goal_id"], "new_status": e.data["status"], "turn": turn})
        history[e.data["goal_id"]].append({"turn": turn, "status": e.data["status"]})
    turns = [
        {
            "turn_id": n + 1,
            "speaker": "USER" if isinstance(dialogue.messages[i], UserMessage) else "SYSTEM",
            "utterance": dialogue.messages[i].content,
            **({"goal_status_changes": changes.get(n + 1, [])} if with_changes else {}),
        }
        for n, i in enumerate(kept)
    ]
    goals = [{**unstructure(g), "status_history": history[g.id], "classification_method": "pre_defined"} for g in dialogue.goals]
    return {
        "dialogue_id": dialogue.id,
        "dialogue_index": 0,
        "complexity_class": complexity,
        "goal_list": goals,
        "turns": turns,
        "metadata": {"num_goals": len(goals), "estimated_turns": len(turns), "async_execution": True, "interleaving": True, "proactivity": False},
    }
