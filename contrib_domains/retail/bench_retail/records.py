"""The retail records (tau2-bench's retail data model), loading them, and tau2's exact database hash.

Records are mutable attrs classes so a tool can change a private copy in place, exactly as
tau2's tools change their pydantic models; the copy comes from `table.edit(key)`. Records read
with `table[key]` are shared by every conversation of a run and must never be changed.

Field order follows tau2's model declarations, so a tool result reads the same as there. Every
field is always present, and numbers keep the type tau2 keeps (prices, amounts and balances are
floats; a price difference an exchange computes from no items stays the int 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from bench_kernel import BaseTable, DumpHasher, State, Table, TaskFileError, converter, read_json

OrderStatus = Literal[
    "processed",
    "pending",
    "pending (item modified)",
    "delivered",
    "cancelled",
    "exchange requested",
    "return requested",
]
CANCEL_REASONS = ("no longer needed", "ordered by mistake")


@attrs.define(kw_only=True)
class Variant:
    """One purchasable version of a product: its options, stock and price."""

    item_id: str
    options: dict[str, str]
    available: bool
    price: float


@attrs.define(kw_only=True)
class Product:
    """A product type and its variants, by item id."""

    name: str
    product_id: str
    variants: dict[str, Variant]


@attrs.define(kw_only=True)
class UserName:
    """A customer's first and last name."""

    first_name: str
    last_name: str


@attrs.define(kw_only=True)
class UserAddress:
    """A postal address; address2 may be empty."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


@attrs.define(kw_only=True)
class CreditCard:
    """A stored credit card."""

    source: Literal["credit_card"] = "credit_card"
    id: str
    brand: str
    last_four: str


@attrs.define(kw_only=True)
class GiftCard:
    """A gift card with a spendable balance."""

    source: Literal["gift_card"] = "gift_card"
    id: str
    balance: float


@attrs.define(kw_only=True)
class Paypal:
    """A linked PayPal account."""

    source: Literal["paypal"] = "paypal"
    id: str


PaymentMethod = CreditCard | GiftCard | Paypal
PAYMENT_METHOD_TYPES: dict[str, type] = {"credit_card": CreditCard, "gift_card": GiftCard, "paypal": Paypal}


@attrs.define(kw_only=True)
class User:
    """A customer: name, default address, email, payment methods and order ids."""

    user_id: str
    name: UserName
    address: UserAddress
    email: str
    payment_methods: dict[str, PaymentMethod]
    orders: list[str]


@attrs.define(kw_only=True)
class Fulfillment:
    """A shipment: its tracking ids and the items in it."""

    tracking_id: list[str]
    item_ids: list[str]


@attrs.define(kw_only=True)
class OrderItem:
    """One item of an order, at the price it was bought for."""

    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


@attrs.define(kw_only=True)
class OrderPayment:
    """A payment or refund on an order."""

    transaction_type: Literal["payment", "refund"]
    amount: float
    payment_method_id: str


@attrs.define(kw_only=True)
class Order:
    """An order, with the fields that cancellations, exchanges and returns fill in."""

    order_id: str
    user_id: str
    address: UserAddress
    items: list[OrderItem]
    status: OrderStatus
    fulfillments: list[Fulfillment]
    payment_history: list[OrderPayment]
    cancel_reason: str | None = None
    exchange_items: list[str] | None = None
    exchange_new_items: list[str] | None = None
    exchange_payment_method_id: str | None = None
    exchange_price_difference: float | None = None
    return_items: list[str] | None = None
    return_payment_method_id: str | None = None


TABLE_TYPES: dict[str, type] = {"products": Product, "users": User, "orders": Order}


def _structure_payment_method(data: Any, _: Any) -> PaymentMethod:
    if isinstance(data, (CreditCard, GiftCard, Paypal)):
        return data
    source = data.get("source") if isinstance(data, Mapping) else None
    if source not in PAYMENT_METHOD_TYPES:
        raise ValueError(f"unknown payment method source {source!r}")
    return converter.structure(data, PAYMENT_METHOD_TYPES[source])


# The kernel converter structures records when a task patches them (initialization_data).
converter.register_structure_hook(PaymentMethod, _structure_payment_method)

_BASES: dict[tuple[str, int, int], dict[str, BaseTable]] = {}


def load_state(db_path: Path) -> State:
    """A pristine state over db.json, read and built when first needed (see State.deferred); the base tables are
    shared by every load of the same file in a process."""
    try:
        stat = db_path.stat()
    except OSError as exc:  # what is cheap to find out is found out now
        raise TaskFileError(str(db_path), ["file not found" if isinstance(exc, FileNotFoundError) else str(exc)]) from exc
    key = (str(db_path.resolve()), stat.st_mtime_ns, stat.st_size)
    bases = _BASES.get(key)
    if bases is None:
        state = State.deferred(TABLE_TYPES, lambda: {name: base.records for name, base in base_tables(read_json(db_path)).items()})
        bases = _BASES[key] = {name: table.base for name, table in state.tables.items()}
    return State({name: Table(base) for name, base in bases.items()})


def base_tables(raw: Mapping[str, Mapping[str, Any]]) -> dict[str, BaseTable]:
    """Structure a db.json object into the three shared tables, refusing unknown tables as tau2 does."""
    unknown = sorted(set(raw) - set(TABLE_TYPES))
    missing = sorted(set(TABLE_TYPES) - set(raw))
    if unknown or missing:
        raise ValueError(f"retail db: unknown tables {unknown}, missing tables {missing}")
    return {name: BaseTable({k: converter.structure(v, rtype) for k, v in raw[name].items()}, rtype) for name, rtype in TABLE_TYPES.items()}


def dump_record(record: Any) -> Any:
    """A record as tau2's model_dump gives it: every field, numbers as they are."""
    return attrs.asdict(record, recurse=True)


def dump_state(state: State) -> dict[str, dict[str, Any]]:
    """The whole database as tau2's RetailDB.model_dump() (for files and tests, not hot paths)."""
    return {name: {k: dump_record(v) for k, v in state[name].items()} for name in TABLE_TYPES}


# tau2's db hash: sha256 of json.dumps(db.model_dump(), sort_keys=True, default=str); shared records' JSON cached.
reference_hash = DumpHasher(dump_record)
