"""Goal status from the database and the tool results, reported as events by `advance`."""

from __future__ import annotations

from typing import Any

from bench_atod import GoalStatusChange
from bench_services.tools import ServicesTools
from bench_services.tracking import advance, goal_status

from bench_kernel import DomainData, EventLog, build_environment


def goal(gid: str, intent: str, **values: Any) -> dict[str, Any]:
    return {"id": gid, "intent": intent, "slot_values": values}


def confirmable(tools: ServicesTools) -> dict[str, Any]:
    return next(i for i in tools.state["catalog"].values() if i["service"] == "hotels" and i["confirms"])


def test_search_and_read_goals_complete_on_a_matching_successful_call(tools: ServicesTools) -> None:
    search = goal("g1", "SearchHotel", service="hotels", city="Lisbon", date="2027-04-10")
    weather = goal("g2", "GetWeather", city="Osaka", date="2027-04-09")
    assert goal_status(search, tools) is None and goal_status(weather, tools) is None
    tools.call_tool("search", {"service": "hotels", "city": "Lisbon", "date": "2027-04-11"})  # another date: not this goal
    tools.call_tool("get_weather", {"city": "osaka", "date": "2027-04-09"})
    assert goal_status(search, tools) is None and goal_status(weather, tools) == "completed"
    tools.call_tool("search", {"service": "hotels", "city": "Lisbon"})  # every date includes the goal's
    assert goal_status(search, tools) == "completed"


def test_a_booking_goal_is_pending_until_the_agent_has_seen_it_confirmed(tools: ServicesTools) -> None:
    item = confirmable(tools)
    wanted = goal("g1", "ReserveHotel", item_id=item["item_id"], customer_id="cust_01", quantity=1)
    booking = tools.call_tool("book", {"item_id": item["item_id"], "quantity": 1, "customer_id": "cust_01"})
    assert goal_status(wanted, tools) == "pending"
    for _ in range(item["confirm_delay"]):
        tools.tick()
    assert tools.state["bookings"][booking["booking_id"]]["status"] == "confirmed"
    assert goal_status(wanted, tools) == "pending"  # confirmed in the world, unknown to the agent
    tools.call_tool("get_booking_status", {"booking_id": booking["booking_id"]})
    assert goal_status(wanted, tools) == "completed"


def test_a_failed_booking_fails_its_goal_without_being_seen(tools: ServicesTools) -> None:
    item = next(i for i in tools.state["catalog"].values() if i["service"] == "cars" and not i["confirms"])
    wanted = goal("g1", "ReserveCar", item_id=item["item_id"], customer_id="cust_03", quantity=1)
    tools.call_tool("book", {"item_id": item["item_id"], "quantity": 1, "customer_id": "cust_03"})
    for _ in range(item["confirm_delay"]):
        tools.tick()
    assert goal_status(wanted, tools) == "failed"


def test_payment_and_write_goals_complete_on_their_records(tools: ServicesTools) -> None:
    item = confirmable(tools)
    pay = goal("g2", "MakePayment", item_id=item["item_id"], account_id="acc_01_chk")
    transfer = goal("g3", "TransferMoney", from_account="acc_01_chk", to_account="acc_01_sav", amount=50.0)
    booking = tools.call_tool("book", {"item_id": item["item_id"], "quantity": 1, "customer_id": "cust_01"})
    for _ in range(item["confirm_delay"]):
        tools.tick()
    assert goal_status(pay, tools) is None
    tools.call_tool("pay_booking", {"booking_id": booking["booking_id"], "account_id": "acc_01_chk"})
    tools.call_tool("transfer_money", {"from_account": "acc_01_chk", "to_account": "acc_01_sav", "amount": 50})
    assert goal_status(pay, tools) == "completed" and goal_status(transfer, tools) == "completed"


def test_advance_ticks_and_reports_each_change_once_with_the_previous_status(data: DomainData) -> None:
    env = build_environment(data, None)
    tools = env.agent_tools
    assert isinstance(tools, ServicesTools)
    item = confirmable(tools)
    tools.track_goals([goal("g1", "ReserveHotel", item_id=item["item_id"], customer_id="cust_01", quantity=1)])
    events = EventLog()
    events.emit(GoalStatusChange(goal_id="g1", status="open", previous_status="not_mentioned"), source="user")
    booking = tools.call_tool("book", {"item_id": item["item_id"], "quantity": 1, "customer_id": "cust_01"})
    for position in range(1, item["confirm_delay"] + 2):
        advance(env, position, events)
    tools.call_tool("get_booking_status", {"booking_id": booking["booking_id"]})
    advance(env, 99, events)
    advance(env, 100, events)
    changes = [(e.source, c.previous_status, c.status) for e, c in events.typed(GoalStatusChange)]
    assert changes == [("user", "not_mentioned", "open"), ("services", "open", "pending"), ("services", "pending", "completed")]
