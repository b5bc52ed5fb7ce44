"""The 44 hidden agent tools on a small bank of our own: records written, balance formats, ids, rules and texts.

Expected values are worked out by hand from tau2-bench 1.0.1's behaviour (the side-by-side comparison
against tau2's own code lives outside the repo, with tau2's data); ids are recomputed here from their seeds.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from typing import Any

import pytest
from bench_banking_knowledge.agent_discoverable import AgentDiscoverableTools
from bench_banking_knowledge.db import BankDB, state_from_json
from bench_banking_knowledge.discovery import discoverable_kind, discoverable_methods, parse_docstring
from bench_banking_knowledge.tools import BankingKnowledgeTools

from bench_kernel import ToolContext, ToolKind


def sha(seed: str, hex_chars: int) -> str:
    return hashlib.sha256(seed.encode()).hexdigest()[:hex_chars]


def acc(uid: str, cls: str | None, level: str, opened: str, holdings: str, status: str = "OPEN") -> dict[str, Any]:
    return {"user_id": uid, "class": cls, "level": level, "date_opened": opened, "status": status, "current_holdings": holdings}


def card(account_id: str, last4: str, status: str, reason: str | None = "new_account", **extra: Any) -> dict[str, Any]:
    rec = {"account_id": account_id, "user_id": "u1", "last_4_digits": last4, "cvv": "123", "status": status, "issue_date": "02/01/2025"}
    if reason is not None:
        rec["issue_reason"] = reason
    return {**rec, **extra}


def keyed(rows: dict[str, dict[str, Any]], field: str) -> dict[str, Any]:
    return {"data": {key: {field: key, **row} for key, row in rows.items()}}


BANK = {
    "users": keyed({"u1": {"name": "Nora Vale"}, "u2": {"name": "Otto Pike"}, "u3": {"name": "Pia Lund"}, "u4": {"name": "Quin Ash"}}, "user_id"),
    "accounts": keyed(
        {
            "chk": acc("u1", "checking", "Blue Account", "01/10/2020", "400.00"),
            "chk2": acc("u1", "checking", "Green Account", "03/01/2021", "1,000.00"),
            "chk_new": acc("u1", "checking", "Green Account", "10/01/2025", "25.00"),
            "chk_empty": acc("u1", "checking", "Light Blue Account", "01/10/2020", "0.00"),
            "chk_lost": acc("u1", "checking", "Blue Account", "01/10/2020", "300.00"),
            "chk_teen": acc("u1", "checking", "Light Green Account", "01/10/2020", "80.00"),
            "sav_s": acc("u1", "savings", "Bronze Account", "10/01/2025", "20.00"),
            "sav": acc("u1", "saving", "Bronze Account", "10/01/2025", "20.00"),
            "u2_chk": acc("u2", "checking", "Blue Account", "11/04/2025", "50.00"),
            "u3_chk": acc("u3", "checking", "Blue Account", "10/01/2025", "50.00"),
            "u3_old": acc("u3", "checking", "Blue Account", "01/01/2019", "0.00", status="CLOSED"),
            "u4_biz": acc("u4", "business_checking", "Navy Blue", "09/01/2025", "500.00"),
        },
        "account_id",
    ),
    "debit_cards": keyed(
        {
            "dc_on": card("chk", "1111", "ACTIVE"),
            "dc_new": card("chk", "2222", "PENDING"),
            "dc_repl": card("chk2", "3333", "PENDING", "stolen"),
            "dc_reissue": card("chk2", "4444", "PENDING", "expired"),
            "dc_on2": card("chk2", "5555", "ACTIVE"),
            "dc_lost": card("chk_lost", "6666", "CLOSED", closure_reason="fraud_suspected"),
            "dc_teen": card("chk_teen", "7777", "ACTIVE"),
            "dc_alert": card("chk2", "8888", "FROZEN", fraud_alert_active=True, alert_source="bank_initiated"),
        },
        "card_id",
    ),
    "bank_account_transaction_history": keyed(
        {
            "b_1": {"account_id": "chk", "date": "10/05/2025", "description": "FIRST", "amount": -1.0, "type": "bill_pay"},
            "b_2": {"account_id": "chk", "date": "10/05/2025", "description": "SECOND", "amount": -2.0, "type": "bill_pay"},
            "b_3": {"account_id": "chk", "date": "11/01/2025", "description": "NEWEST", "amount": 3.0, "type": "bill_pay"},
            "b_atm": {"account_id": "chk", "date": "11/02/2025", "description": "CORNER BANK ATM", "amount": 9.0, "type": "atm_deposit"},
            "b_rho": {"account_id": "chk", "date": "11/03/2025", "description": "Rho-Bank ATM #7", "amount": 12.5, "type": "atm_deposit"},
        },
        "transaction_id",
    ),
    "credit_card_accounts": keyed(
        {
            "cc": {"user_id": "u1", "current_balance": "$1,200.00", "credit_limit": "$3,000.00"},
            "cc_shipped": {"user_id": "u1", "current_balance": "$0.00"},
            "cc_ordered": {"user_id": "u1", "current_balance": "$0.00", "credit_limit": "$500.00"},
        },
        "account_id",
    ),
    "credit_card_orders": keyed(
        {
            "o1": {"credit_card_account_id": "cc_shipped", "status": "SHIPPED"},
            "o2": {"credit_card_account_id": "cc_ordered", "status": "ORDERED"},
        },
        "order_id",
    ),
    "payment_history": keyed(
        {
            "p1": {"credit_card_account_id": "cc", "payment_date": "10/15/2025", "amount": "$10.00", "status": "ON_TIME"},
            "p2": {"credit_card_account_id": "cc", "payment_date": "12/15/2024", "amount": "$20.00", "status": "LATE"},
            "p3": {"credit_card_account_id": "cc", "payment_date": "09/15/2025", "amount": "$30.00", "status": "ON_TIME"},
        },
        "payment_id",
    ),
}


@pytest.fixture
def bank() -> BankingKnowledgeTools:
    """The hidden tools over a fresh copy of our small bank."""
    state, _ = state_from_json(BANK)
    return BankingKnowledgeTools(state)


def rows(tools: BankingKnowledgeTools, table: str) -> dict[str, dict[str, Any]]:
    return dict(BankDB(tools.state).table_items(table))


# ---------------------------------------------------------------------- the tool set and its descriptions


def test_44_tools_with_tau2s_kinds_and_docstrings_the_unlock_output_can_read() -> None:
    methods = discoverable_methods(AgentDiscoverableTools)
    kinds = [discoverable_kind(m) for m in methods.values()]
    assert len(methods) == 44
    assert (kinds.count(ToolKind.WRITE), kinds.count(ToolKind.READ), kinds.count(ToolKind.GENERIC)) == (31, 10, 3)
    for name, method in methods.items():
        info = parse_docstring(name, inspect.getdoc(method) or "")
        signature = list(inspect.signature(method).parameters.values())[1:]
        assert [p.name for p in info.params] == [p.name for p in signature], name
        assert [p.optional for p in info.params] == [p.default is not p.empty for p in signature], name
        assert {p.type for p in info.params} <= {"string", "number", "boolean", "integer"}, name
        assert info.description and "Returns:" not in info.description, name


# ---------------------------------------------------------------------- money: formats and rules


def test_a_transfer_writes_both_balances_with_a_dollar_sign(bank: BankingKnowledgeTools) -> None:
    out = bank.transfer_funds_between_bank_accounts_7291("chk", "chk2", 100.0)
    assert out.splitlines()[0] == "Transfer completed successfully!"
    assert rows(bank, "accounts")["chk"]["current_holdings"] == "$300.00"
    assert rows(bank, "accounts")["chk2"]["current_holdings"] == "$1100.00"
    assert bank.transfer_funds_between_bank_accounts_7291("chk", "chk2", 301.0).startswith("Error: Insufficient funds.")
    assert bank.transfer_funds_between_bank_accounts_7291("chk", "u3_old", 1.0) == "Error: Destination account 'u3_old' is not active."


def test_a_card_payment_writes_checking_without_and_the_card_with_a_dollar_sign(bank: BankingKnowledgeTools) -> None:
    bank.pay_credit_card_from_checking_9182("u1", "chk", "cc", 150.5)
    assert rows(bank, "accounts")["chk"]["current_holdings"] == "249.50"
    assert rows(bank, "credit_card_accounts")["cc"]["current_balance"] == "$1049.50"
    assert bank.pay_credit_card_from_checking_9182("u2", "chk", "cc", 1.0) == "Error: Checking account 'chk' does not belong to user 'u2'."
    assert bank.pay_credit_card_from_checking_9182("u1", "sav", "cc", 1.0) == "Error: Account 'sav' is not a checking account."


def test_credits_post_a_transaction_and_write_checking_with_and_savings_without_a_dollar_sign(bank: BankingKnowledgeTools) -> None:
    bank.apply_checking_account_credit_5829("chk", 15.0, "fee_refund")
    bank.apply_savings_account_credit_6831("sav", 2.5, "interest_correction")
    assert rows(bank, "accounts")["chk"]["current_holdings"] == "$415.00"
    assert rows(bank, "accounts")["sav"]["current_holdings"] == "22.50"
    txn_id = "txn_" + sha("checking_credit:chk:fee_refund:15.0:11/14/2025", 16)
    assert rows(bank, "bank_account_transaction_history")[txn_id] == {
        "transaction_id": txn_id,
        "account_id": "chk",
        "date": "11/14/2025",
        "description": "FEE REFUND - CUSTOMER SERVICE",
        "amount": 15.0,
        "type": "fee_refund",
        "status": "posted",
    }
    assert bank.apply_savings_account_credit_6831("chk", 1.0, "fee_refund").startswith("Error: Account 'chk' is not a savings account.")
    assert bank.apply_checking_account_credit_5829("chk", 1.0, "goodwill_credit") == (
        "Error: Invalid credit_type. Must be one of: ['rebate_credit', 'fee_refund']"
    )


def test_a_statement_credit_is_a_negative_transaction_whose_id_takes_the_reason_as_merchant(bank: BankingKnowledgeTools) -> None:
    bank.apply_statement_credit_8472("u1", "cc", 25.0, "price_match")
    txn_id = "txn_" + sha("transaction:u1:STATEMENT_CREDIT:price_match:25.00:Statement Credit", 12)
    record = rows(bank, "credit_card_transaction_history")[txn_id]
    assert (record["transaction_amount"], record["merchant_name"], record["credit_reason"]) == ("-$25.00", "Rho-Bank Statement Credit", "price_match")
    assert bank.apply_statement_credit_8472("u1", "cc", 25.0, "price_match").startswith("Error: Failed to apply statement credit.")


@pytest.mark.parametrize(
    ("account", "waive", "expected", "closed"),
    [
        ("chk_new", False, "Bank account closed successfully!", True),  # Green: $25 fee inside 60 days takes the $25 balance
        ("chk_empty", False, "Bank account closed successfully!", True),
        ("chk", False, "Error: Account balance must be $0.00 before closing. Current balance: $400.00", False),
        ("sav_s", False, "Bank account closed successfully!", True),  # class "savings": Bronze $20 fee inside 60 days
        ("sav", False, "Error: Account balance must be $0.00 before closing. Current balance: $20.00", False),  # "saving": no fee
        ("chk_new", True, "Error: Account balance must be $0.00 before closing. Current balance: $25.00", False),
    ],
)
def test_closing_a_bank_account_takes_the_early_closure_fee_by_level_and_age(
    bank: BankingKnowledgeTools, account: str, waive: bool, expected: str, closed: bool
) -> None:
    assert bank.close_bank_account_7392(account, waive_early_closure_fee=waive).splitlines()[0] == expected
    record = rows(bank, "accounts")[account]
    assert (record["status"] == "CLOSED") is closed
    if closed:
        assert record["current_holdings"] == BANK["accounts"]["data"][account]["current_holdings"]  # the fee is not deducted
        assert (record["date_closed"], record["closure_reason"]) == ("11/14/2025", "Customer requested closure")


# ---------------------------------------------------------------------- opening accounts


@pytest.mark.parametrize(
    ("user", "kind", "opens"),
    [
        ("u1", "savings", True),  # a checking account older than 14 days
        ("u2", "savings", False),  # its checking account is 10 days old
        ("u2", "business_checking", True),
        ("u3", "business_checking", False),  # has a CLOSED account
        ("u4", "business_savings", True),  # business checking 74 days old, no negative balance
        ("u2", "business_savings", False),
    ],
)
def test_opening_follows_tau2s_eligibility_rules(bank: BankingKnowledgeTools, user: str, kind: str, opens: bool) -> None:
    out = bank.open_bank_account_4821(user, kind, "Some Class")
    account_id = sha(f"account:{user}:{kind}:Some Class", 16)
    assert out.startswith("Bank account opened successfully!") is opens
    assert (account_id in rows(bank, "accounts")) is opens
    if not opens:
        assert out == "Error: Account eligibility requirements not met."


def test_an_opened_account_has_type_and_class_fields_which_the_class_based_tools_do_not_recognise(bank: BankingKnowledgeTools) -> None:
    bank.open_bank_account_4821("u1", "checking", "Blue Account")
    account_id = sha("account:u1:checking:Blue Account", 16)
    assert rows(bank, "accounts")[account_id] == {
        "account_id": account_id,
        "user_id": "u1",
        "account_type": "checking",
        "account_class": "Blue Account",
        "current_holdings": "0.00",
        "status": "OPEN",
        "date_opened": "11/14/2025",
    }
    assert bank.apply_checking_account_credit_5829(account_id, 5.0, "fee_refund").endswith("Credits can only be applied to checking accounts.")
    assert bank.open_bank_account_4821("u1", "checking", "Blue Account") == (f"Failed to open account: Account ID '{account_id}' may already exist.")


# ---------------------------------------------------------------------- debit cards


def test_ordering_a_debit_card_charges_fees_and_adds_a_pending_card(bank: BankingKnowledgeTools) -> None:
    out = bank.order_debit_card_5739("chk_lost", "u1", "rush", 20, "custom", 5.0, "1 Elm St", excess_replacement_fee=10)
    order_id = "dcord_" + sha("debit_card_order:chk_lost:u1:RUSH", 12)
    card_id = "dbc_" + sha("debit_card:chk_lost:u1:11/14/2025", 12)
    assert f"Order ID: {order_id}" in out
    assert out.endswith(
        "Total Fees: $35.00 (Delivery: $20.0, Design: $5.0, Excess Replacement: $10) - CHARGED to account chk_lost\nNew Account Balance: $265.00"
    )
    assert rows(bank, "accounts")["chk_lost"]["current_holdings"] == "265.00"
    fee = rows(bank, "bank_account_transaction_history")[f"btxn_dcfee_{order_id[-8:]}"]
    assert (fee["description"], fee["amount"]) == ("DEBIT CARD ORDER FEE - Delivery $20.0, Design $5.0, Excess Replacement $10", -35.0)
    new = rows(bank, "debit_cards")[card_id]
    digits = "".join(c for c in sha(f"card_details:{card_id}:last4", 8) if c.isdigit())[:4].zfill(4)
    assert (new["status"], new["cardholder_name"], new["expiration_date"], new["last_4_digits"]) == ("PENDING", "NORA VALE", "11/30/2029", digits)
    assert new["issue_reason"] == "fraud"  # the account's closed card was closed as fraud_suspected
    assert bank.order_debit_card_5739("chk_lost", "u1", "RUSH", 0, "CLASSIC", 0, "x").startswith("Error: There is already a pending debit card order")


def test_a_debit_card_order_reads_a_dollar_balance_as_zero(bank: BankingKnowledgeTools) -> None:
    bank.transfer_funds_between_bank_accounts_7291("chk2", "chk_empty", 100.0)  # writes "$100.00"
    assert bank.order_debit_card_5739("chk_empty", "u1", "STANDARD", 0, "CLASSIC", 0, "x") == (
        "Error: Account must have a minimum balance of $25. Current balance: $0.00"
    )


@pytest.mark.parametrize(
    ("tool", "card_id", "last4", "expected"),
    [
        (
            "activate_debit_card_8292",
            "dc_new",
            "2222",
            "Error: Wrong activation tool. This card has issue_reason='new_account'. "
            "Please use activate_debit_card_8291 instead of activate_debit_card_8292.",
        ),
        ("activate_debit_card_8291", "dc_new", "2220", "Error: Card verification failed. The last 4 digits do not match our records."),
        ("activate_debit_card_8291", "dc_on", "1111", "Error: Debit card 'dc_on' is already active."),
    ],
)
def test_activation_refusals(bank: BankingKnowledgeTools, tool: str, card_id: str, last4: str, expected: str) -> None:
    assert getattr(bank, tool)(card_id, last4, "02/29", "123", "2580") == expected


@pytest.mark.parametrize(
    ("pin", "problem"),
    [
        ("123", "PIN must be exactly 4 digits."),
        ("12a4", "PIN must be exactly 4 digits."),
        ("4321", "PIN cannot be sequential (e.g., 1234). Please choose a more secure PIN."),
        ("0000", "PIN cannot be all the same digit (e.g., 1111). Please choose a more secure PIN."),
    ],
)
def test_pin_rules(bank: BankingKnowledgeTools, pin: str, problem: str) -> None:
    assert bank.activate_debit_card_8291("dc_new", "2222", "02/29", "123", pin) == f"Error: {problem}"
    assert bank.reset_debit_card_pin_6284("dc_on", "1111", pin) == f"Error: {problem}"


def test_activating_a_new_card_deactivates_the_others_and_a_reissued_one_gives_them_a_grace_period(bank: BankingKnowledgeTools) -> None:
    out = bank.activate_debit_card_8291("dc_new", "2222", "02/29", "123", "2580")
    assert out.endswith("\nNote: Previous card(s) have been deactivated: dc_on")
    cards = rows(bank, "debit_cards")
    assert (cards["dc_new"]["status"], cards["dc_new"]["activated_date"]) == ("ACTIVE", "11/14/2025")
    assert (cards["dc_on"]["status"], cards["dc_on"]["deactivation_reason"]) == ("DEACTIVATED", "New card activated")
    bank.activate_debit_card_8293("dc_reissue", "4444", "02/29", "123", "2580")
    cards = rows(bank, "debit_cards")
    assert (cards["dc_on2"]["status"], cards["dc_on2"]["grace_period_ends"]) == ("GRACE_PERIOD", "11/14/2025")
    assert cards["dc_on2"]["deactivation_reason"] == "Reissued card activated (expired)"


def test_card_states(bank: BankingKnowledgeTools) -> None:
    assert bank.freeze_debit_card_3892("dc_new").startswith("Error: Debit card 'dc_new' cannot be frozen. Current status: PENDING.")
    bank.freeze_debit_card_3892("dc_on")
    assert rows(bank, "debit_cards")["dc_on"]["frozen_date"] == "11/14/2025"
    bank.unfreeze_debit_card_3893("dc_on")
    assert rows(bank, "debit_cards")["dc_on"]["status"] == "ACTIVE"
    assert bank.close_debit_card_4721("dc_on", "STOLEN").startswith("Debit Card Closed Successfully")
    assert rows(bank, "debit_cards")["dc_on"]["closure_reason"] == "stolen"
    assert bank.clear_debit_card_fraud_alert_4892("dc_alert", "customer_verified").startswith("Error: BANK_INITIATED_ALERT")


def test_temporary_limits_default_by_level_and_stop_at_one_and_a_half_times(bank: BankingKnowledgeTools) -> None:
    assert bank.request_temporary_debit_card_limit_increase_8374("dc_on", "atm", 751) == (
        "Error: Requested limit $751 exceeds the maximum allowed temporary increase. Maximum temporary limit is $750 (150% of current $500 limit)."
    )
    bank.request_temporary_debit_card_limit_increase_8374("dc_on", "atm", 750.0)
    record = rows(bank, "debit_cards")["dc_on"]
    assert (record["daily_atm_limit"], record["original_atm_limit"], record["temporary_atm_limit_increase"]) == (750, 500, True)
    assert bank.request_temporary_debit_card_limit_increase_8374("dc_teen", "atm", 200).startswith("Error: Light Green Account")
    assert bank.request_temporary_debit_card_limit_increase_8374("dc_on", "atm", 600.5) == "Error: new_limit must be an integer, got '600.5'."


def test_the_card_listing_renames_fields_and_puts_the_newest_first(bank: BankingKnowledgeTools) -> None:
    listed = json.loads(bank.get_debit_cards_by_account_id_7823("chk2"))
    assert [c["card_id"] for c in listed] == ["dc_repl", "dc_reissue", "dc_on2", "dc_alert"]  # same dates keep stored order
    assert list(listed[0])[:2] == ["card_id", "account_id"] and listed[0]["card_number_last_4"] == "3333"
    assert "last_4_digits" not in listed[0] and listed[0]["date_issued"] == "02/01/2025"


# ---------------------------------------------------------------------- disputes, credit cards, credit limits


def test_a_credit_card_dispute_record(bank: BankingKnowledgeTools) -> None:
    args: dict[str, Any] = dict(
        transaction_id="t1",
        card_action="keep_active",
        card_last_4_digits="9999",
        full_name="Nora Vale",
        user_id="u1",
        phone="555",
        email="n@v.x",
        address="1 Elm St",
        contacted_merchant=False,
        purchase_date="11/01/2025",
        issue_noticed_date="11/02/2025",
        dispute_reason="incorrect_amount",
        resolution_requested="partial_refund",
        eligible_for_provisional_credit=False,
    )
    assert bank.file_credit_card_transaction_dispute_4829(**args) == (
        "Error: partial_refund_amount is required when resolution_requested is 'partial_refund'."
    )
    out = bank.file_credit_card_transaction_dispute_4829(**args, partial_refund_amount=7.0)
    dispute_id = "dsp_" + sha("dispute:u1:t1", 12)
    assert f"Dispute ID: {dispute_id}\n" in out and "\nPartial Refund Amount: $7.00\n" in out
    record = rows(bank, "transaction_disputes")[dispute_id]
    assert (record["status"], record["submitted_at"], record["provisional_credit_given"]) == ("SUBMITTED", "11/14/2025", False)
    assert bank.file_credit_card_transaction_dispute_4829(**args, partial_refund_amount=7.0) == (
        "Error: Dispute may have already been filed for this transaction."
    )


def test_a_debit_card_dispute_record_moves_no_money(bank: BankingKnowledgeTools) -> None:
    out = bank.file_debit_card_transaction_dispute_6281(
        "b_1",
        "chk",
        "dc_on",
        "u1",
        "unauthorized_transaction",
        "10/05/2025",
        "10/06/2025",
        600.0,
        "pin_purchase",
        True,
        "yes_shared",
        False,
        False,
        True,
        True,
        50.0,
        "keep_active",
    )
    assert out.splitlines()[-2:] == [
        "WARNING: Customer indicated PIN was shared voluntarily. This may affect liability determination.",
        "RECOMMENDATION: For fraud disputes over $500, filing a police report is recommended.",
    ]
    record = rows(bank, "debit_card_disputes")["dsp_" + sha("dispute:u1:b_1", 12)]
    assert (record["provisional_credit_amount"], record["is_fraud_category"], record["status"]) == (600.0, True, "OPEN")
    assert rows(bank, "accounts")["chk"]["current_holdings"] == "400.00"


def test_a_replacement_card_order_closes_the_account_and_does_not_block_a_limit_increase(bank: BankingKnowledgeTools) -> None:
    bank.order_replacement_credit_card_7291("cc", "u1", "1 Elm St", "damaged")
    assert rows(bank, "credit_card_orders")["ccord_" + sha("credit_card_order:cc:u1:damaged", 12)]["status"] == "ORDERED"
    assert (rows(bank, "credit_card_accounts")["cc"]["status"], rows(bank, "credit_card_accounts")["cc"]["closed_date"]) == ("CLOSED", "11/14/2025")
    assert bank.approve_credit_limit_increase_5847("cc_shipped", "u1", 900) == (
        "Error: Credit limit increase request cannot be approved at this time."
    )
    assert bank.approve_credit_limit_increase_5847("cc_ordered", "u1", 900).startswith("Credit limit increase approved!")
    request = rows(bank, "credit_limit_increase_requests")["cli_" + sha("cli_request:cc_ordered:u1:400.00", 12)]
    assert (request["previous_limit"], request["new_limit"], request["increase_amount"]) == ("$500.00", "$900.00", "$400.00")
    assert rows(bank, "credit_card_accounts")["cc_ordered"]["credit_limit"] == "$900.00"


def test_limit_requests_take_whole_dollars(bank: BankingKnowledgeTools) -> None:
    assert bank.submit_credit_limit_increase_request_7392("cc", "u1", 2.5) == (
        "Error: Invalid requested_increase_amount. Must be a whole number of dollars."
    )
    assert bank.submit_credit_limit_increase_request_7392("cc", "u1", 2500.0).endswith("  - Requested Increase: $2,500\n  - Status: PENDING")
    record = rows(bank, "credit_limit_increase_requests")["cli_" + sha("cli_request:cc:u1:2500.00", 12)]
    assert record["requested_increase_amount"] == 2500 and isinstance(record["requested_increase_amount"], int)


def test_payment_history_sorts_dates_as_text(bank: BankingKnowledgeTools) -> None:
    out = bank.get_payment_history_6183("cc", 2)
    assert out.splitlines()[:2] == ["Payment history for account 'cc' (last 2 months):", "Consecutive on-time payments: 0"]
    assert "Payment Date: 12/15/2024" in out.splitlines()[3]  # "12/..." sorts after "10/..." as text


def test_the_interest_report_stores_nothing(bank: BankingKnowledgeTools) -> None:
    before = {t: rows(bank, t) for t in BankDB(bank.state).state.tables}
    out = bank.submit_interest_discrepancy_report_7294("sav", "u1", 2.775, 2.5, 1.25)
    report_id = "IDR_" + sha("interest_report:sav:u1:2.775:2.5:11/14/2025", 16)
    assert f"  - Report ID: {report_id}\n" in out and "  - APY Difference: 0.275%\n" in out
    assert {t: rows(bank, t) for t in before} == before


# ---------------------------------------------------------------------- reads and canned texts


def test_bank_transactions_newest_first_with_same_day_rows_in_stored_order(bank: BankingKnowledgeTools) -> None:
    out = bank.get_bank_account_transactions_9173("chk")
    ids = [line.split(": ")[1] for line in out.splitlines() if ". Record ID: " in line]
    assert ids == ["b_rho", "b_atm", "b_3", "b_1", "b_2"]
    assert out.splitlines()[:5] == [
        "Bank account transactions retrieved successfully.",
        "",
        "Executed: get_bank_account_transactions_9173",
        "Transactions for account chk:",
        "Found 5 record(s) in 'bank_account_transaction_history':",
    ]


def test_listings_say_when_nothing_is_found(bank: BankingKnowledgeTools) -> None:
    assert bank.get_user_dispute_history_7291("u1").endswith("\n\nNo transaction disputes found for this user.")
    assert bank.get_all_user_accounts_by_user_id_3847("nobody").endswith(
        "Bank Accounts:\n  No bank accounts found.\n\nCredit Card Accounts:\n  No credit card accounts found."
    )


def test_atm_images_only_for_rho_bank_deposits(bank: BankingKnowledgeTools) -> None:
    assert bank.get_atm_deposit_images_8473("b_atm").startswith("Error: Transaction 'b_atm' is from a third-party ATM.")
    assert bank.get_atm_deposit_images_8473("b_1").startswith("Error: Transaction 'b_1' is not an ATM deposit.")
    out = bank.get_atm_deposit_images_8473("b_rho")
    assert "Amount Recorded: $12.50" in out and "Status: IMAGES NOT AVAILABLE" in out


class TextsProfile:
    """A profile carrying discoverable-tool texts as tau2's own parser makes them."""

    def discoverable_tools(self, domain: str, side: str) -> dict[str, Any] | None:
        text = "Start a transfer.\n\nReturns:\n    The lines are all busy."
        return {"initial_transfer_to_human_agent_0218": {"description": text, "params": [], "returns": "Action completed successfully."}}


def test_transfer_protocol_steps_answer_with_the_success_line_of_the_texts_in_use() -> None:
    state, _ = state_from_json(BANK)
    ours = BankingKnowledgeTools(state).initial_transfer_to_human_agent_0218()
    profiled = BankingKnowledgeTools(state, context=ToolContext(profile=TextsProfile())).initial_transfer_to_human_agent_0218()
    assert ours == (
        "Transfer started. Tell the customer that all lines are busy right now.\n\n"
        "Executed: initial_transfer_to_human_agent_0218\nArguments: (no arguments)"
    )
    assert profiled.splitlines()[0] == "The lines are all busy."
