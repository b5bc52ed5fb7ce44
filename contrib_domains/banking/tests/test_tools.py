"""The banking tools: lookups, bill payments, cards, disputes (fixed, and AgentChangeBench's defect on request), parking."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bench_banking import BankingDomain

from bench_kernel import DomainData, DomainOptions, Environment, ToolCall, build_environment


@pytest.fixture(scope="module")
def data() -> DomainData:
    return BankingDomain().load(DomainOptions())


@pytest.fixture(scope="module")
def compat() -> DomainData:
    return BankingDomain(compat=True).load(DomainOptions())


def call(env: Environment, name: str, **arguments: Any) -> tuple[Any, bool]:
    result = env.execute(ToolCall(name=name, arguments=arguments))
    try:
        return json.loads(result.content or ""), result.error
    except json.JSONDecodeError:
        return result.content, result.error


def test_lookups_and_their_errors(data: DomainData) -> None:
    env = build_environment(data, None)
    customer, _ = call(env, "get_customer_by_id", customer_id="cust_500")
    assert call(env, "get_customer_by_phone", phone_number=customer["phone_number"])[0]["customer_id"] == "cust_500"
    assert call(env, "get_customer_by_id", customer_id="cust_x") == (
        "Error: Customer cust_x not found. Have you tried asking the customer for their id?",
        True,
    )
    assert call(env, "get_customer_by_name", full_name=customer["full_name"].upper(), dob="1900-01-01") == ([], False)
    accounts, _ = call(env, "get_accounts", customer_id="cust_500")
    assert [a["account_id"] for a in accounts] == customer["account_ids"]


def test_transactions_filter_by_iso_dates_and_the_compat_switch_keeps_the_crash(data: DomainData, compat: DomainData) -> None:
    env = build_environment(data, None)
    every, _ = call(env, "get_transactions", account_id="acc_500")
    assert [t["timestamp"] for t in every] == sorted((t["timestamp"] for t in every), reverse=True)
    day = every[0]["timestamp"][:10]
    assert [t["tx_id"] for t in call(env, "get_transactions", account_id="acc_500", start_time=day, end_time=day)[0]] == [every[0]["tx_id"]]
    assert call(env, "get_transactions", account_id="acc_500", start_time="last week")[1] is True
    crashed, error = call(build_environment(compat, None), "get_transactions", account_id="acc_500", start_time=day)
    assert error and "'>=' not supported" in crashed


def test_a_dispute_is_filed_and_the_compat_switch_keeps_agentchangebenchs_failure(data: DomainData, compat: DomainData) -> None:
    env = build_environment(data, None)
    filed, error = call(env, "file_dispute", account_id="acc_500", tx_id="tx_500_1", reason_code="unauthorized")
    assert not error and filed == {"dispute_id": "DP_00000001", "status": "Submitted"}
    assert call(env, "get_dispute", dispute_id="DP_00000001")[0]["opened_at"] == "2025-08-21T08:00:01"
    assert env.agent_tools.state["transactions"]["tx_500_1"].status == "Disputed"
    assert call(env, "file_dispute", account_id="acc_501", tx_id="tx_500_1", reason_code="x")[0] == (
        "Error: Transaction tx_500_1 not found for account acc_501"
    )
    assert call(build_environment(compat, None), "file_dispute", account_id="acc_500", tx_id="tx_500_1", reason_code="x") == ("Error: DISPUTED", True)


def test_a_bill_payment_goes_through_its_three_steps(data: DomainData) -> None:
    env = build_environment(data, None)
    before = env.agent_tools.state["accounts"]["acc_500"].available_balance
    made, _ = call(env, "create_payment_request", customer_id="cust_500", from_account_id="acc_500", to_payee_id="payee_500", amount=40.0)
    assert made == {"request_id": "PR_00000001", "status": "Awaiting Payment"}
    assert (
        call(env, "create_payment_request", customer_id="cust_500", from_account_id="acc_500", to_payee_id="payee_500", amount=5.0)[0]
        == "Error: Another payment request is already Awaiting Payment for this customer"
    )
    assert call(env, "make_payment", request_id="PR_00000001")[0] == "Error: Request must be AUTHORIZED before payment"
    call(env, "authorize_payment_request", request_id="PR_00000001")
    paid, _ = call(env, "make_payment", request_id="PR_00000001")
    assert paid == {"request_id": "PR_00000001", "status": "Settled", "tx_id": "TX_00000001"}
    assert env.agent_tools.state["accounts"]["acc_500"].available_balance == pytest.approx(before - 40.0)
    assert call(env, "cancel_payment_request", request_id="PR_00000001")[0] == "Error: Cannot cancel a settled payment"
    assert data.agent_state.verify_untouched() == []


def test_cards_and_task_parking(data: DomainData) -> None:
    env = build_environment(data, None)
    assert call(env, "lock_card", card_id="card_500", reason="lost")[0] == {"card_id": "card_500", "status": "Locked"}
    assert call(env, "lock_card", card_id="card_500")[0] == {"card_id": "card_500", "status": "Locked"}
    parked, _ = call(env, "park_task", current_task_id="dispute", resume_hint="file it")
    assert call(env, "resume_task", parked_task_id=parked["parked_task_id"])[0]["metadata"]["task_id"] == "dispute"
    assert call(env, "resume_task", parked_task_id="PT_x")[0] == "Error: Parked task PT_x not found"
