"""The carrier agent's tools: lookups, errors, and the tau2 quirks that decide a database's hash."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bench_kernel import DomainData, Environment, ToolCall, build_environment


@pytest.fixture
def env(own: DomainData) -> Environment:
    return build_environment(own, None)


def call(env: Environment, name: str, **arguments: Any) -> tuple[str, bool]:
    result = env.execute(ToolCall(name=name, arguments=arguments))
    return result.content or "", result.error


def test_lookups(env: Environment) -> None:
    assert json.loads(call(env, "get_customer_by_phone", phone_number="612-555-0142")[0])["customer_id"] == "C6001"
    assert call(env, "get_customer_by_phone", phone_number="000")[0] == "Error: Customer with phone number 000 not found"
    assert json.loads(call(env, "get_customer_by_name", full_name="priya RAMAN", dob="1987-03-22")[0])[0]["customer_id"] == "C6001"
    assert call(env, "get_customer_by_name", full_name="Priya Raman", dob="1987-03-23")[0] == "[]"
    assert call(env, "get_details_by_id", id="X1")[0] == "Error: Unknown ID format or type: X1"
    bills = json.loads(call(env, "get_bills_for_customer", customer_id="C6001", limit=2)[0])
    assert [b["bill_id"] for b in bills] == ["B5003", "B5002"]
    usage = json.loads(call(env, "get_data_usage", customer_id="C6001", line_id="L4002")[0])
    assert usage == {"line_id": "L4002", "data_used_gb": "11.4", "data_limit_gb": "20.0", "data_refueling_gb": "0.0", "cycle_end_date": "2025-02-28"}


def test_records_come_back_in_declaration_order_with_every_field(env: Environment) -> None:
    line = json.loads(call(env, "get_details_by_id", id="L4007")[0])
    assert list(line) == [
        "line_id",
        "phone_number",
        "status",
        "plan_id",
        "device_id",
        "data_used_gb",
        "data_refueling_gb",
        "roaming_enabled",
        "contract_end_date",
        "last_plan_change_date",
        "last_sim_replacement_date",
        "suspension_start_date",
    ]
    assert (line["status"], line["data_used_gb"], line["contract_end_date"]) == ("Pending Activation", 0.0, None)
    device = json.loads(call(env, "get_details_by_id", id="D3002")[0])
    assert device["last_esim_transfer_date"] == "2025-01-08 16:55:00"


def test_the_refuel_description_keeps_the_argument_as_sent(own: DomainData) -> None:
    """tau2 writes str(gb_amount): 2 and 2.0 leave different bills, so different database hashes."""
    hashes = []
    for amount in (2, 2.0):
        env = build_environment(own, None)
        content, error = call(env, "refuel_data", customer_id="C6001", line_id="L4002", gb_amount=amount)
        assert not error and json.loads(content)["charge"] == "5.0"
        item = env.agent_tools.state["bills"]["B5003"].line_items[-1]
        assert item.description == f"Data refueling: {amount} GB at $2.5/GB"
        hashes.append(own.reference_hash(env.agent_tools.state))  # type: ignore[misc]
    assert hashes[0] != hashes[1]
    assert call(build_environment(own, None), "refuel_data", customer_id="C6001", line_id="L4002", gb_amount=0) == (
        "Error: Refuel amount must be positive",
        True,
    )


def test_a_customer_without_a_draft_bill_gets_a_deterministic_one(own: DomainData) -> None:
    ids = []
    for _ in range(2):
        env = build_environment(own, None)
        call(env, "refuel_data", customer_id="C6002", line_id="L4004", gb_amount=1.0)
        ids.append(env.agent_tools.state["customers"]["C6002"].bill_ids[-1])
    assert ids[0] == ids[1] and ids[0].startswith("B") and len(ids[0]) == 9


def test_a_payment_request_ignores_the_bills_status_but_allows_one_at_a_time(env: Environment) -> None:
    assert call(env, "send_payment_request", customer_id="C6001", bill_id="B5001") == (
        "Payment request sent to the customer for bill B5001",
        False,
    )  # B5001 is already Paid: tau2 does not check
    assert call(env, "send_payment_request", customer_id="C6001", bill_id="B5002") == (
        "Error: A bill is already awaiting payment for this customer",
        True,
    )
    assert call(env, "send_payment_request", customer_id="C6002", bill_id="B5001") == ("Error: Bill B5001 not found for customer C6002", True)


def test_lines_suspend_resume_and_roaming(env: Environment) -> None:
    assert call(env, "resume_line", customer_id="C6001", line_id="L4002") == ("Error: Line must be suspended to resume", True)
    content, _ = call(env, "suspend_line", customer_id="C6001", line_id="L4002", reason="travel")
    assert json.loads(content)["line"]["suspension_start_date"] == "2025-02-25"
    assert call(env, "suspend_line", customer_id="C6001", line_id="L4002", reason="x")[0] == "Error: Line must be active to suspend"
    assert call(env, "suspend_line", customer_id="C6001", line_id="L4004", reason="x")[0] == ("Error: Line L4004 not found for customer C6001")
    assert call(env, "enable_roaming", customer_id="C6001", line_id="L4002")[0] == "Roaming was already enabled"
    assert call(env, "disable_roaming", customer_id="C6001", line_id="L4002")[0] == "Roaming disabled successfully"


def test_shared_records_are_never_changed_in_place(own: DomainData) -> None:
    env = build_environment(own, None)
    call(env, "refuel_data", customer_id="C6001", line_id="L4002", gb_amount=2.0)
    call(env, "suspend_line", customer_id="C6001", line_id="L4001", reason="x")
    assert own.agent_state.verify_untouched() == []
