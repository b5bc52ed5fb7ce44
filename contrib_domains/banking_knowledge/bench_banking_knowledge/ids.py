"""The bank's fixed clock and its deterministic ids (tau2-bench's seeds and formats, byte for byte).

Every id is a prefix of the sha256 of colon-joined seed parts, so replaying the same calls
writes the same records: the DB hash of a conversation depends on what was done, never on when.
Numbers enter the seeds as tau2 formats them (`%.2f` in some, Python's `str` of a float in others).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Mapping
from typing import Any

TODAY = "11/14/2025"
NOW = dt.datetime(2025, 11, 14, 3, 40, 0)
TODAY_DATE = dt.date(2025, 11, 14)


def deterministic_id(*parts: object, length: int = 16) -> str:
    """The first `length` hex characters (whole bytes) of sha256 over the colon-joined parts."""
    seed = ":".join(str(part) for part in parts)
    return hashlib.sha256(seed.encode()).digest()[: length // 2].hex()


def transaction_id(user_id: str, card_type: str, merchant: str, amount: float, category: str, date: str = "") -> str:
    """A credit-card transaction: `txn_` + 12 hex; the date joins the seed only when given."""
    parts: list[object] = ["transaction", user_id, card_type, merchant, f"{amount:.2f}", category]
    if date:
        parts.append(date)
    return "txn_" + deterministic_id(*parts, length=12)


def referral_id(referrer_id: str, account_type: str, date: str = "") -> str:
    """A referral a user submits: 16 hex."""
    parts: list[object] = ["referral", referrer_id, account_type]
    if date:
        parts.append(date)
    return deterministic_id(*parts)


def application_id(card_type: str, customer_name: str, annual_income: float, subscription: bool) -> str:
    """A credit-card application: 16 hex; the income enters as Python prints the float."""
    return deterministic_id("credit_card", card_type, customer_name, annual_income, subscription)


def verification_id(user_id: str, time_verified: str) -> str:
    """A verification record: the user id and the time with spaces as `_`, colons and dashes dropped."""
    suffix = time_verified.replace(" ", "_").replace(":", "").replace("-", "")
    return f"{user_id}_{suffix}"


def user_tool_id(tool_name: str) -> str:
    """The row of a user discoverable tool the agent gave (the name alone)."""
    return deterministic_id("user_discoverable_tool", tool_name)


def user_tool_call_id(tool_name: str, arguments: Mapping[str, Any]) -> str:
    """The row of one user discoverable tool call (name and sorted JSON arguments)."""
    return deterministic_id("user_discoverable_tool_call", tool_name, json.dumps(arguments, sort_keys=True))


def agent_tool_id(tool_name: str) -> str:
    """The row of an agent discoverable tool the agent called (the name alone)."""
    return deterministic_id("agent_discoverable_tool", tool_name)


def dispute_id(user_id: str, transaction_id: str) -> str:
    """A dispute (credit card, debit card or cash back): `dsp_` + 12 hex."""
    return "dsp_" + deterministic_id("dispute", user_id, transaction_id, length=12)


def referral_link_id(user_id: str, card_name: str) -> str:
    """A referral made through a referral link: 16 hex."""
    return deterministic_id("referral_link", user_id, card_name)


def credit_card_order_id(credit_card_account_id: str, user_id: str, reason: str) -> str:
    """A replacement credit-card order: `ccord_` + 12 hex."""
    return "ccord_" + deterministic_id("credit_card_order", credit_card_account_id, user_id, reason, length=12)


def closure_reason_id(credit_card_account_id: str, user_id: str) -> str:
    """A logged credit-card closure reason: `clsr_` + 12 hex."""
    return "clsr_" + deterministic_id("closure_reason", credit_card_account_id, user_id, length=12)


def account_flag_id(credit_card_account_id: str, flag_type: str, expiration_date: str) -> str:
    """A credit-card account flag: `ccflag_` + 12 hex."""
    return "ccflag_" + deterministic_id("account_flag", credit_card_account_id, flag_type, expiration_date, length=12)


def credit_limit_request_id(credit_card_account_id: str, user_id: str, amount: float) -> str:
    """A credit-limit increase request, approval or denial: `cli_` + 12 hex."""
    return "cli_" + deterministic_id("cli_request", credit_card_account_id, user_id, f"{amount:.2f}", length=12)


def bank_transaction_id(account_id: str, date: str, description: str, amount: float, kind: str) -> str:
    """A bank-account transaction: `btxn_` + 12 hex (tau2 defines it; no tool of its uses it)."""
    return "btxn_" + deterministic_id("bank_txn", account_id, date, description, f"{amount:.2f}", kind, length=12)


def debit_card_order_id(account_id: str, user_id: str, delivery_option: str) -> str:
    """A debit-card order: `dcord_` + 12 hex."""
    return "dcord_" + deterministic_id("debit_card_order", account_id, user_id, delivery_option, length=12)


def debit_card_fee_transaction_id(order_id: str) -> str:
    """The fee transaction of a debit-card order: `btxn_dcfee_` + the order id's last 8 characters."""
    return f"btxn_dcfee_{order_id[-8:]}"


def debit_card_id(account_id: str, user_id: str, issue_date: str) -> str:
    """A debit card: `dbc_` + 12 hex."""
    return "dbc_" + deterministic_id("debit_card", account_id, user_id, issue_date, length=12)


def _digits(text: str) -> str:
    return "".join(c for c in text if c.isdigit())


def debit_card_numbers(card_id: str) -> tuple[str, str]:
    """A new debit card's last 4 digits and CVV: the digits of two hashes, zero-filled on the left."""
    seed = f"card_details:{card_id}"
    last_4 = _digits(deterministic_id(seed + ":last4", length=8))[:4].zfill(4)
    cvv = _digits(deterministic_id(seed + ":cvv", length=6))[:3].zfill(3)
    return last_4, cvv


def credit_card_last_4(credit_card_account_id: str) -> str:
    """A credit card's last 4 digits: the first 4 digits of a hash, zero-padded on the right."""
    digest = hashlib.sha256(f"card_last4:{credit_card_account_id}".encode()).hexdigest()
    return _digits(digest)[:4].ljust(4, "0")


def bank_account_id(user_id: str, account_type: str, account_class: str) -> str:
    """A newly opened bank account: 16 hex."""
    return deterministic_id("account", user_id, account_type, account_class)


def checking_credit_transaction_id(account_id: str, credit_type: str, amount: float) -> str:
    """A credit posted to a checking account: `txn_` + 16 hex; the amount as Python prints it."""
    return "txn_" + deterministic_id("checking_credit", account_id, credit_type, amount, TODAY)


def savings_credit_transaction_id(account_id: str, credit_type: str, amount: float) -> str:
    """A credit posted to a savings account: `txn_` + 16 hex; the amount as Python prints it."""
    return "txn_" + deterministic_id("savings_credit", account_id, credit_type, amount, TODAY)


def interest_report_id(account_id: str, user_id: str, expected_apy: object, actual_apy: object) -> str:
    """An interest discrepancy report: `IDR_` + 16 hex (the report itself is never stored)."""
    return "IDR_" + deterministic_id("interest_report", account_id, user_id, expected_apy, actual_apy, TODAY)
