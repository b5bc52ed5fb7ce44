"""The tools on the real database: searches, asynchronous bookings, enforced dependencies, banking, reminders."""

from __future__ import annotations

from typing import Any

import pytest
from bench_services.tools import ServicesTools

from bench_kernel import ToolError


def item(tools: ServicesTools, *, confirms: bool, service: str = "restaurants") -> dict[str, Any]:
    """The first catalogue item of a service that will (or will not) be confirmed."""
    return next(i for i in tools.state["catalog"].values() if i["service"] == service and i["confirms"] is confirms)


def book(tools: ServicesTools, confirms: bool = True, quantity: int = 2) -> tuple[dict[str, Any], dict[str, Any]]:
    chosen = item(tools, confirms=confirms)
    return chosen, tools.call_tool("book", {"item_id": chosen["item_id"], "quantity": quantity, "customer_id": "cust_01"})


def test_search_filters_by_service_city_and_date_and_hides_processing(tools: ServicesTools) -> None:
    found = tools.call_tool("search", {"service": "hotels", "city": "lisbon", "date": "2027-04-10"})
    assert found and all(i["service"] == "hotels" and i["city"] == "Lisbon" and i["date"] == "2027-04-10" for i in found)
    assert all("confirms" not in i and "confirm_delay" not in i for i in found)
    assert len(tools.call_tool("search", {"service": "hotels", "city": "Lisbon"})) == 3 * len(found)
    with pytest.raises(ToolError, match="Unknown service"):
        tools.call_tool("search", {"service": "spaceships", "city": "Lisbon"})


def test_a_booking_is_pending_then_confirmed_after_its_delay(tools: ServicesTools) -> None:
    chosen, booking = book(tools)
    assert booking["status"] == "pending" and booking["total"] == chosen["price"] * 2
    for _ in range(chosen["confirm_delay"] - 1):
        tools.tick()
    assert tools.state["bookings"][booking["booking_id"]]["status"] == "pending"
    status = tools.call_tool("get_booking_status", {"booking_id": booking["booking_id"]})  # this call is the last tick
    assert status["status"] == "confirmed" and booking["booking_id"] in tools.observed


def test_a_booking_of_an_item_that_cannot_be_confirmed_fails(tools: ServicesTools) -> None:
    chosen, booking = book(tools, confirms=False)
    for _ in range(chosen["confirm_delay"]):
        tools.tick()
    assert tools.call_tool("get_booking_status", {"booking_id": booking["booking_id"]})["status"] == "failed"
    with pytest.raises(ToolError, match="only a confirmed booking"):
        tools.call_tool("pay_booking", {"booking_id": booking["booking_id"], "account_id": "acc_01_chk"})


def test_paying_needs_an_existing_confirmed_booking_of_the_account_owner(tools: ServicesTools) -> None:
    with pytest.raises(ToolError, match="No booking"):
        tools.call_tool("pay_booking", {"booking_id": "BK0001", "account_id": "acc_01_chk"})
    chosen, booking = book(tools)
    with pytest.raises(ToolError, match="is pending"):
        tools.call_tool("pay_booking", {"booking_id": booking["booking_id"], "account_id": "acc_01_chk"})
    for _ in range(chosen["confirm_delay"]):
        tools.tick()
    with pytest.raises(ToolError, match="does not belong"):
        tools.call_tool("pay_booking", {"booking_id": booking["booking_id"], "account_id": "acc_02_chk"})
    before = tools.state["accounts"]["acc_01_chk"]["balance"]
    paid = tools.call_tool("pay_booking", {"booking_id": booking["booking_id"], "account_id": "acc_01_chk"})
    assert paid["amount"] == booking["total"]
    assert tools.state["accounts"]["acc_01_chk"]["balance"] == round(before - booking["total"], 2)
    assert tools.state["bookings"][booking["booking_id"]]["paid"] is True
    with pytest.raises(ToolError, match="already paid"):
        tools.call_tool("pay_booking", {"booking_id": booking["booking_id"], "account_id": "acc_01_chk"})
    with pytest.raises(ToolError, match="cannot be cancelled"):
        tools.call_tool("cancel_booking", {"booking_id": booking["booking_id"]})


def test_a_cancelled_booking_is_never_processed(tools: ServicesTools) -> None:
    chosen, booking = book(tools)
    tools.call_tool("cancel_booking", {"booking_id": booking["booking_id"]})
    for _ in range(chosen["confirm_delay"] + 2):
        tools.tick()
    assert tools.state["bookings"][booking["booking_id"]]["status"] == "cancelled"


def test_every_call_is_remembered_with_its_outcome(tools: ServicesTools) -> None:
    tools.call_tool("get_weather", {"city": "Osaka", "date": "2027-04-09"})
    with pytest.raises(ToolError):
        tools.call_tool("get_weather", {"city": "Atlantis", "date": "2027-04-09"})
    assert [(c["name"], c["ok"]) for c in tools.calls] == [("get_weather", True), ("get_weather", False)]
    assert tools.clock == 2


def test_transfers_stay_between_one_customers_accounts_and_need_funds(tools: ServicesTools) -> None:
    checking, savings = tools.state["accounts"]["acc_01_chk"]["balance"], tools.state["accounts"]["acc_01_sav"]["balance"]
    tools.call_tool("transfer_money", {"from_account": "acc_01_chk", "to_account": "acc_01_sav", "amount": 100.0})
    assert tools.state["accounts"]["acc_01_chk"]["balance"] == checking - 100
    assert tools.state["accounts"]["acc_01_sav"]["balance"] == savings + 100
    with pytest.raises(ToolError, match="same customer"):
        tools.call_tool("transfer_money", {"from_account": "acc_01_chk", "to_account": "acc_02_sav", "amount": 1.0})
    with pytest.raises(ToolError, match="not enough"):
        tools.call_tool("transfer_money", {"from_account": "acc_01_chk", "to_account": "acc_01_sav", "amount": 10**7})


def test_reminders_calendar_and_payment_requests_are_recorded(tools: ServicesTools) -> None:
    tools.call_tool("add_reminder", {"customer_id": "cust_02", "title": "Pack", "date": "2027-04-09", "time": "08:00"})
    assert [r["title"] for r in tools.call_tool("list_reminders", {"customer_id": "cust_02"})] == ["Water the plants", "Pack"]
    tools.call_tool("add_calendar_entry", {"customer_id": "cust_02", "title": "Lunch", "date": "2027-04-10", "time": "12:00"})
    assert [e["title"] for e in tools.call_tool("get_calendar", {"customer_id": "cust_02", "date": "2027-04-10"})] == ["Lunch"]
    request = tools.call_tool("request_payment", {"customer_id": "cust_02", "contact": "Grace", "amount": 20})
    assert request["request_id"] == "RQ0001"
    with pytest.raises(ToolError, match="No customer"):
        tools.call_tool("add_reminder", {"customer_id": "nobody", "title": "x", "date": "2027-04-09", "time": "08:00"})
