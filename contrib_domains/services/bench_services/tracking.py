"""Goal status from the database and the tool results, reported as `GoalStatusChange` events.

After every conversation step the domain's `advance` ticks the world's clock (bookings are
processed) and compares each goal of the task with what the database and the tool calls show:

- a search or a read goal is completed by a successful call of its tool with the goal's values;
- a booking goal is pending while its booking (the goal's item, for the goal's customer) is
  pending, failed when it failed or was cancelled, and completed once it is confirmed **and** a
  status tool has shown the agent so (the agent cannot tell the user before that);
- a payment goal is completed by a payment of the booking of its item from its account;
- a write goal is completed by the record its tool creates with the goal's values.

Only changes are reported (source `services`), so the user's own `open` and `abandoned` events
interleave with them; a goal the domain has no evidence for yet is not reported.
"""

from __future__ import annotations

from typing import Any

from bench_atod import GoalStatusChange

from bench_kernel import Environment, EventLog

from .tools import ServicesTools
from .world import INTENTS

SOURCE = "services"
READ_TOOLS = {"CheckBalance": "get_balance", "GetWeather": "get_weather", "GetAlarms": "list_reminders", "GetEvents": "get_calendar"}
WRITE_TABLES = {
    "TransferMoney": ("transfers", ("from_account", "to_account", "amount")),
    "RequestPayment": ("payment_requests", ("customer_id", "contact", "amount")),
    "AddAlarm": ("reminders", ("customer_id", "title", "date", "time")),
    "AddEvent": ("calendar", ("customer_id", "title", "date", "time")),
}


def advance(env: Environment, position: int, events: EventLog) -> None:
    """The world moves on one step; every goal whose status the database now shows differently is reported."""
    tools = env.agent_tools
    if not isinstance(tools, ServicesTools):
        return
    tools.tick()
    report_changes(tools, events)


def report_changes(tools: ServicesTools, events: EventLog) -> None:
    """Emit a `GoalStatusChange` for every goal whose derived status differs from the last one reported."""
    for goal in tools.goals:
        status = goal_status(goal, tools)
        if status is None or tools.reported.get(goal["id"]) == status:
            continue
        tools.reported[goal["id"]] = status
        events.emit(GoalStatusChange(goal_id=goal["id"], status=status, previous_status=current_status(events, goal["id"])), source=SOURCE)


def current_status(events: EventLog, goal_id: str) -> str:
    """A goal's status as the conversation's events say (user's and domain's): not_mentioned before any."""
    changes = [c.status for _, c in events.typed(GoalStatusChange) if c.goal_id == goal_id]
    return changes[-1] if changes else "not_mentioned"


def goal_status(goal: dict[str, Any], tools: ServicesTools) -> str | None:
    """What the database and the tool results say of one goal (None: nothing yet)."""
    intent = INTENTS[goal["intent"]]
    values = goal.get("slot_values", {})
    if intent.kind == "search":
        return _completed(_called(tools, "search", values, ("service", "city"), optional=("date",)))
    if intent.kind == "book":
        return _booking_status(tools, values)
    if intent.kind == "pay":
        return _completed(_paid(tools, values))
    if intent.name in READ_TOOLS:
        keys = tuple(k for k in ("account_id", "city", "date", "customer_id") if k in values)
        return _completed(_called(tools, READ_TOOLS[intent.name], values, keys))
    table, keys = WRITE_TABLES[intent.name]
    return _completed(any(_same(record, values, keys) for record in tools.state[table].values()))


def booking_of(tools: ServicesTools, values: dict[str, Any]) -> dict[str, Any] | None:
    """The latest booking of the goal's item for the goal's customer (the goal a booking serves)."""
    found = [b for b in tools.state["bookings"].values() if b["item_id"] == values.get("item_id") and b["customer_id"] == values.get("customer_id")]
    return max(found, key=lambda b: b["booking_id"]) if found else None


def _booking_status(tools: ServicesTools, values: dict[str, Any]) -> str | None:
    booking = booking_of(tools, values)
    if booking is None:
        return None
    if booking["status"] == "confirmed":
        return "completed" if booking["booking_id"] in tools.observed else "pending"
    return {"pending": "pending", "failed": "failed", "cancelled": "failed"}[booking["status"]]


def _paid(tools: ServicesTools, values: dict[str, Any]) -> bool:
    bookings = tools.state["bookings"]
    return any(
        p["account_id"] == values.get("account_id") and bookings[p["booking_id"]]["item_id"] == values.get("item_id")
        for p in tools.state["payments"].values()
    )


def _called(tools: ServicesTools, name: str, values: dict[str, Any], keys: tuple[str, ...], optional: tuple[str, ...] = ()) -> bool:
    for call in tools.calls:
        if call["name"] != name or not call["ok"] or not _same(call["arguments"], values, keys):
            continue
        if all(not call["arguments"].get(k) or _equal(call["arguments"][k], values.get(k)) for k in optional):
            return True
    return False


def _same(record: dict[str, Any], values: dict[str, Any], keys: tuple[str, ...]) -> bool:
    return all(_equal(record.get(k), values.get(k)) for k in keys)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.strip().casefold() == b.strip().casefold()
    if isinstance(a, int | float) and isinstance(b, int | float) and not isinstance(a, bool):
        return abs(float(a) - float(b)) < 0.005
    return bool(a == b)


def _completed(done: bool) -> str | None:
    return "completed" if done else None
