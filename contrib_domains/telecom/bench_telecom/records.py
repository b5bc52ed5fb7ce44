"""The telecom databases as attrs records, laid out field for field like tau2-bench's models.

Two databases: the carrier's (plans, devices, lines, customers, bills; the agent's tools) and the
customer's phone (device settings and the surroundings the phone lives in; the user's tools).
Records are mutable so that tools read like the simulation they are, but they are shared by every
conversation of a run: a tool that changes one first takes its private copy with `table.edit(key)`.

Field order follows tau2's models, because a tool result is a record's fields in declaration
order; every field is always present, because tau2's DB hash dumps every field. Dates are kept as
the text tau2's hash writes (`2025-02-25`, `2025-01-20 14:30:00`), enums as their values, and
numbers keep the types tau2 gives them (floats where its models say float).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from bench_kernel import BaseTable, ConfigError, State, Table, TaskFileError, structure

DeviceType = Literal["phone", "router", "tablet", "watch", "other"]
LineStatus = Literal["Active", "Suspended", "Pending Activation", "Closed"]
BillStatus = Literal["Draft", "Issued", "Awaiting Payment", "Paid", "Overdue", "Disputed"]
AccountStatus = Literal["Active", "Suspended", "Pending Verification", "Closed"]
PaymentMethodType = Literal["Credit Card", "Debit Card", "PayPal"]
SimStatus = Literal["active", "missing", "locked_pin", "locked_puk"]
NetworkTechnology = Literal["none", "2G", "3G", "4G", "5G"]
NetworkModePreference = Literal["4g_5g_preferred", "4g_only", "3g_only", "2g_only"]
SignalStrength = Literal["none", "poor", "fair", "good", "excellent"]
PerformanceLevel = Literal["unknown", "poor", "fair", "good", "excellent"]
NetworkStatus = Literal["connected", "searching", "no_service", "emergency_only"]
APNName = Literal["internet", "broken"]

NETWORK_MODES: tuple[str, ...] = ("4g_5g_preferred", "4g_only", "3g_only", "2g_only")
AGENT_TABLES: tuple[str, ...] = ("plans", "customers", "lines", "bills", "devices")
PHONE_TABLE = "phone"
DATE = {"kind": "date"}
DATETIME = {"kind": "datetime"}


# --------------------------------------------------------------------------- the carrier's database


@attrs.define(kw_only=True)
class Address:
    """A billing address."""

    street: str
    city: str
    state: str
    zip_code: str


@attrs.define(kw_only=True)
class Plan:
    """A service plan: data allowance, monthly price, and the price of extra data."""

    plan_id: str
    name: str
    data_limit_gb: float
    price_per_month: float
    data_refueling_price_per_gb: float


@attrs.define(kw_only=True)
class Device:
    """A device a line can be used in."""

    device_id: str
    device_type: DeviceType
    model: str
    imei: str | None = None
    is_esim_capable: bool
    activated: bool = False
    activation_date: str | None = attrs.field(default=None, metadata=DATETIME)
    last_esim_transfer_date: str | None = attrs.field(default=None, metadata=DATETIME)


@attrs.define(kw_only=True)
class Line:
    """A phone line: its number, plan, status, data used this cycle and roaming."""

    line_id: str
    phone_number: str
    status: LineStatus = "Pending Activation"
    plan_id: str
    device_id: str | None = None
    data_used_gb: float = 0.0
    data_refueling_gb: float = 0.0
    roaming_enabled: bool = False
    contract_end_date: str | None = attrs.field(default=None, metadata=DATE)
    last_plan_change_date: str | None = attrs.field(default=None, metadata=DATE)
    last_sim_replacement_date: str | None = attrs.field(default=None, metadata=DATE)
    suspension_start_date: str | None = attrs.field(default=None, metadata=DATE)


@attrs.define(kw_only=True)
class LineItem:
    """One charge or credit on a bill."""

    description: str
    amount: float
    date: str = attrs.field(metadata=DATE)
    item_type: str


@attrs.define(kw_only=True)
class Bill:
    """A customer's bill for one period."""

    bill_id: str
    customer_id: str
    period_start: str = attrs.field(metadata=DATE)
    period_end: str = attrs.field(metadata=DATE)
    issue_date: str = attrs.field(metadata=DATE)
    total_due: float
    due_date: str = attrs.field(metadata=DATE)
    line_items: list[LineItem] = attrs.Factory(list)
    status: BillStatus = "Draft"


@attrs.define(kw_only=True)
class PaymentMethod:
    """A stored payment method."""

    method_type: PaymentMethodType
    account_number_last_4: str
    expiration_date: str


@attrs.define(kw_only=True)
class Customer:
    """A customer account with its lines and bills (ids, in order)."""

    customer_id: str
    full_name: str
    date_of_birth: str
    email: str
    phone_number: str
    address: Address
    account_status: AccountStatus = "Pending Verification"
    payment_methods: list[PaymentMethod] = attrs.Factory(list)
    line_ids: list[str] = attrs.Factory(list)
    bill_ids: list[str] = attrs.Factory(list)
    # tau2's default is a date left unvalidated, so its hash writes it without a time.
    created_at: str = attrs.field(default="2025-01-01", metadata=DATETIME)
    last_extension_date: str | None = attrs.field(default=None, metadata=DATE)
    goodwill_credit_used_this_year: float = 0.0


AGENT_RECORDS: dict[str, type] = {"plans": Plan, "customers": Customer, "lines": Line, "bills": Bill, "devices": Device}
AGENT_KEYS: dict[str, str] = {"plans": "plan_id", "customers": "customer_id", "lines": "line_id", "bills": "bill_id", "devices": "device_id"}


# --------------------------------------------------------------------------- the customer's phone


@attrs.define(kw_only=True)
class APNSettings:
    """The phone's access point settings (data and picture messages)."""

    apn_name: APNName = "internet"
    reset_at_reboot: bool = False
    mms_apn: str | None = "mms"
    mmsc_url: str | None = "http://mms.carrier.com/mms/wapenc"
    mms_proxy: str | None = None
    mms_port: int | None = None


@attrs.define(kw_only=True)
class VpnDetails:
    """The VPN server the phone is connected to."""

    server_address: str | None = None
    protocol: str | None = None
    server_performance: PerformanceLevel = "unknown"


@attrs.define(kw_only=True)
class AppPermissions:
    """What an app may use."""

    sms: bool = False
    storage: bool = False
    phone: bool = False
    network: bool = False


@attrs.define(kw_only=True)
class AppStatus:
    """An installed app and its permissions."""

    app_name: str
    permissions: AppPermissions = attrs.Factory(AppPermissions)


def _default_apps() -> dict[str, AppStatus]:
    return {
        "messaging": AppStatus(app_name="messaging", permissions=AppPermissions(sms=True, storage=True, phone=True)),
        "browser": AppStatus(app_name="browser", permissions=AppPermissions(storage=True, network=True)),
    }


@attrs.define(kw_only=True)
class PhoneDevice:
    """The phone's settings and what its radio currently sees."""

    sim_card_status: SimStatus = "active"
    sim_card_missing: bool = False
    airplane_mode: bool = False
    network_signal_strength: SignalStrength = "good"
    network_technology_connected: NetworkTechnology = "5G"
    network_connection_status: NetworkStatus = "connected"
    battery_level: int = 80
    data_enabled: bool = True
    roaming_enabled: bool = False
    network_mode_preference: NetworkModePreference = "4g_5g_preferred"
    active_apn_settings: APNSettings = attrs.Factory(APNSettings)
    wifi_enabled: bool = False
    wifi_connected: bool = False
    wifi_ssid: str | None = None
    wifi_signal_strength: SignalStrength = "none"
    wifi_calling_enabled: bool = False
    wifi_calling_mms_over_wifi: bool = False
    data_saver_mode: bool = False
    vpn_enabled_setting: bool = False
    vpn_connected: bool = False
    vpn_details: VpnDetails | None = None
    app_statuses: dict[str, AppStatus] = attrs.Factory(_default_apps)


@attrs.define(kw_only=True)
class PaymentRequest:
    """A bill the carrier asked the customer to pay."""

    bill_id: str
    amount_due: float
    paid: bool = False


def _default_signal() -> dict[NetworkTechnology, SignalStrength]:
    return {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}


@attrs.define(kw_only=True)
class Surroundings:
    """Where the phone is and what the carrier's side says about its line (kept in step by the sync)."""

    name: str | None = None
    phone_number: str | None = None
    is_abroad: bool = False
    roaming_allowed: bool = False
    signal_strength: dict[NetworkTechnology, SignalStrength] = attrs.Factory(_default_signal)
    mobile_data_usage_exceeded: bool = False
    line_active: bool = True
    payment_request: PaymentRequest | None = None


PHONE_RECORDS: dict[str, type] = {"device": PhoneDevice, "surroundings": Surroundings}


# --------------------------------------------------------------------------- loading


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as data; a missing or malformed file is a clear error naming it."""
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise TaskFileError(str(path), [f"not valid TOML: {exc}"]) from None


def agent_state_from(data: Mapping[str, Any], source: str) -> State:
    """The carrier's pristine state from db.toml data: one table per list, keyed by id, in file order."""
    _check_tables(data, AGENT_TABLES, source)
    tables = {}
    for name in AGENT_TABLES:
        items = data.get(name, [])
        if not isinstance(items, list):
            raise TaskFileError(source, [f"expected a list of tables @ $.{name}"])
        records: dict[str, Any] = {}
        for i, raw in enumerate(items):
            record = _record(raw, AGENT_RECORDS[name], source, f"$.{name}[{i}]")
            key = getattr(record, AGENT_KEYS[name])
            if key in records:
                raise TaskFileError(source, [f"duplicate id {key!r} @ $.{name}[{i}]"])
            records[key] = record
        tables[name] = Table(BaseTable(records, AGENT_RECORDS[name]))
    return State(tables)


def phone_state_from(data: Mapping[str, Any], source: str) -> State:
    """The phone's pristine state from user_db.toml data (an absent table takes every default)."""
    _check_tables(data, tuple(PHONE_RECORDS), source)
    records = {name: _record(data.get(name, {}), cls, source, f"$.{name}") for name, cls in PHONE_RECORDS.items()}
    return State({PHONE_TABLE: Table(BaseTable(records))})


def _check_tables(data: Mapping[str, Any], known: tuple[str, ...], source: str) -> None:
    unknown = sorted(set(data) - set(known))
    if unknown:
        raise TaskFileError(source, [f"unknown table {name!r} @ $.{name} (known: {', '.join(known)})" for name in unknown])


def _record(raw: Any, cls: type, source: str, path: str) -> Any:
    return structure(_normalised(raw, cls, source, path), cls, source=source, root=path)


def _normalised(raw: Any, cls: type, source: str, path: str) -> Any:
    """Dates and datetimes turned into the text tau2's hash writes; nested records likewise."""
    if not isinstance(raw, dict):
        raise TaskFileError(source, [f"expected a table @ {path}"])
    out = dict(raw)
    for field in attrs.fields(cls):
        value = out.get(field.name)
        kind = field.metadata.get("kind")
        if value is None:
            continue
        if kind is not None:
            out[field.name] = _date_text(value, kind, source, f"{path}.{field.name}")
        elif field.name == "line_items" and isinstance(value, list):
            out[field.name] = [_normalised(item, LineItem, source, f"{path}.line_items[{i}]") for i, item in enumerate(value)]
    return out


def _date_text(value: Any, kind: str, source: str, path: str) -> str:
    try:
        if kind == "date":
            return str(
                value if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime) else datetime.date.fromisoformat(str(value))
            )
        if isinstance(value, datetime.datetime):
            return str(value)
        if isinstance(value, datetime.date):
            return str(datetime.datetime.combine(value, datetime.time()))
        return str(datetime.datetime.fromisoformat(str(value)))
    except ValueError:
        raise TaskFileError(source, [f"not a valid {kind}: {value!r} @ {path}"]) from None


# --------------------------------------------------------------------------- tau2's hashes


def dump(record: Any) -> Any:
    """A record as tau2's model_dump gives it (every field, declaration order)."""
    return attrs.asdict(record, recurse=True)


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def agent_reference_hash(state: State) -> str:
    """tau2's hash of the carrier's database: its lists of records, in order."""
    return _digest({name: [dump(state[name][key]) for key in state[name]] for name in AGENT_TABLES})


def phone_reference_hash(state: State) -> str:
    """tau2's hash of the phone's database: device and surroundings."""
    table = state[PHONE_TABLE]
    return _digest({name: dump(table[name]) for name in PHONE_RECORDS})
