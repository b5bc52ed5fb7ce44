"""The banking database as attrs records (AgentChangeBench's data model), loaded from db.toml or our db.json.

Records are mutable but shared by every conversation of a run: a tool that changes one takes its
private copy first (`table.edit(key)`). Timestamps stay the ISO text the data gives
(`2025-06-05T13:45:00`). The `meta` table holds what AgentChangeBench keeps in tool-instance
memory (its clock, parked tasks, shift events), so a replay reproduces it.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from bench_kernel import BaseTable, ConfigError, State, Table, TaskFileError, read_json, structure

AccountType = Literal["checking", "savings", "credit_card"]
AccountStatus = Literal["Active", "Frozen", "Closed"]
CardStatus = Literal["Active", "Locked"]
StatementStatus = Literal["Issued", "Overdue", "Paid"]
TransactionType = Literal["deposit", "withdrawal", "transfer_out", "billpay", "card_purchase", "atm_withdrawal", "ach_debit", "ach_credit"]
TransactionStatus = Literal["Pending", "Posted", "Reversed", "Disputed"]
DeliverType = Literal["electronic", "check"]
RequestStatus = Literal["Awaiting Payment", "Authorized", "Settled", "Canceled", "Expired", "Failed"]
DisputeStatus = Literal["Draft", "Submitted", "Under Review", "Resolved-Customer Favor", "Resolved-Merchant Favor", "Closed"]


@attrs.define(kw_only=True)
class Address:
    """A postal address."""

    street: str
    city: str
    state: str
    postal_code: str


@attrs.define(kw_only=True)
class Customer:
    """A customer and the ids of everything they own."""

    customer_id: str
    full_name: str
    date_of_birth: str
    email: str
    phone_number: str
    address: Address
    created_at: str
    account_ids: list[str] = attrs.Factory(list)
    card_ids: list[str] = attrs.Factory(list)
    statement_ids: list[str] = attrs.Factory(list)
    payment_request_ids: list[str] = attrs.Factory(list)
    dispute_ids: list[str] = attrs.Factory(list)
    payee_ids: list[str] = attrs.Factory(list)


@attrs.define(kw_only=True)
class Account:
    """A deposit or credit account."""

    account_id: str
    customer_id: str
    type: AccountType
    masked_number: str
    status: AccountStatus
    current_balance: float
    available_balance: float


@attrs.define(kw_only=True)
class Card:
    """A card on an account."""

    card_id: str
    account_id: str
    type: Literal["debit", "credit"]
    last4: str
    status: CardStatus


@attrs.define(kw_only=True)
class Statement:
    """An account statement."""

    statement_id: str
    account_id: str
    period_start: str
    period_end: str
    issue_date: str
    total_due: float
    minimum_due: float | None = None
    due_date: str | None = None
    status: StatementStatus


@attrs.define(kw_only=True)
class Transaction:
    """A movement on an account (negative amounts leave it)."""

    tx_id: str
    account_id: str
    timestamp: str
    type: TransactionType
    amount: float
    merchant_or_payee: str | None = None
    status: TransactionStatus
    reference: str | None = None


@attrs.define(kw_only=True)
class Payee:
    """Someone a customer pays bills to."""

    payee_id: str
    customer_id: str
    name: str
    deliver_type: DeliverType
    verified: bool


@attrs.define(kw_only=True)
class PaymentRequest:
    """A bill payment on its way: Awaiting Payment, Authorized, then Settled (or Failed, Canceled)."""

    request_id: str
    origin: Literal["agent", "user", "autopay"]
    customer_id: str
    from_account_id: str
    to_payee_id: str
    amount: float
    status: RequestStatus
    created_at: str
    expires_at: str | None = None


@attrs.define(kw_only=True)
class Dispute:
    """A disputed transaction."""

    dispute_id: str
    account_id: str
    tx_id: str
    reason_code: str
    status: DisputeStatus
    opened_at: str


RECORDS: dict[str, tuple[type, str]] = {
    "customers": (Customer, "customer_id"),
    "accounts": (Account, "account_id"),
    "cards": (Card, "card_id"),
    "statements": (Statement, "statement_id"),
    "transactions": (Transaction, "tx_id"),
    "payees": (Payee, "payee_id"),
    "payment_requests": (PaymentRequest, "request_id"),
    "disputes": (Dispute, "dispute_id"),
}
META = "meta"


def read_db(path: Path) -> dict[str, Any]:
    """db.toml (AgentChangeBench's) or db.json (ours) as data; errors name the file."""
    if path.suffix == ".json":
        return read_json(path)
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskFileError(str(path), [f"not valid TOML: {exc}"]) from None


def state_from(data: Mapping[str, Any], source: str) -> State:
    """The pristine state: one table per record list (keyed by id, in file order) and the meta table."""
    unknown = sorted(set(data) - set(RECORDS))
    if unknown:
        raise TaskFileError(source, [f"unknown table {name!r} @ $.{name}" for name in unknown])
    tables = {}
    for name, (cls, key) in RECORDS.items():
        items = data.get(name, [])
        if not isinstance(items, list):
            raise TaskFileError(source, [f"expected a list of records @ $.{name}"])
        records: dict[str, Any] = {}
        for i, raw in enumerate(items):
            record: Any = structure(_timestamps_as_text(raw), cls, source=source, root=f"$.{name}[{i}]")
            records[getattr(record, key)] = record
        tables[name] = Table(BaseTable(records, cls))
    tables[META] = Table(BaseTable({"clock": {"ticks": 0}, "parked": {}, "shift_events": []}))
    return State(tables)


def _timestamps_as_text(raw: Any) -> Any:
    """TOML's native dates and datetimes as ISO text (the data usually quotes them already)."""
    if not isinstance(raw, dict):
        return raw
    return {k: (v.isoformat() if hasattr(v, "isoformat") and not isinstance(v, str) else v) for k, v in raw.items()}


def state_to_json(state: State) -> dict[str, list[dict[str, Any]]]:
    """The record tables as our db.json writes them (lists in order)."""
    return {name: [attrs.asdict(state[name][key]) for key in state[name]] for name in RECORDS}
