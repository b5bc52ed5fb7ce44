"""The airline database as frozen attrs records, laid out field for field like tau2-bench's models.

Records are shared by every conversation of a run and never change: tools build new ones
(`attrs.evolve`, fresh dicts and lists) and assign them to their table. Field order follows
tau2's models, because a tool result is the record's fields in declaration order; every field
is always present (`Reservation.status` is None until cancelled), because tau2's DB hash dumps
every field. Numbers keep tau2's types: payment-method balances are floats, prices, seat counts,
payments and bag counts are ints.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import attrs

from bench_kernel import BaseTable, DumpHasher, State, Table, TaskFileError, converter, read_json

FlightType = Literal["round_trip", "one_way"]
CabinClass = Literal["business", "economy", "basic_economy"]
Insurance = Literal["yes", "no"]
Membership = Literal["gold", "silver", "regular"]

CABINS: tuple[str, ...] = ("business", "economy", "basic_economy")
TABLES: tuple[str, ...] = ("flights", "users", "reservations")


# --------------------------------------------------------------------------- people and payments


@attrs.frozen(kw_only=True)
class Name:
    """A person's name."""

    first_name: str
    last_name: str


@attrs.frozen(kw_only=True)
class Address:
    """A postal address; address2 may be None."""

    address1: str
    address2: str | None = None
    city: str
    country: str
    state: str
    zip: str


@attrs.frozen(kw_only=True)
class Passenger:
    """A traveller on a reservation, or saved on a profile."""

    first_name: str
    last_name: str
    dob: str


@attrs.frozen(kw_only=True)
class Payment:
    """One entry of a reservation's payment history (negative amounts are refunds)."""

    payment_id: str
    amount: int


@attrs.frozen(kw_only=True)
class CreditCard:
    """A saved credit card (no balance)."""

    source: Literal["credit_card"] = "credit_card"
    id: str
    brand: str
    last_four: str


@attrs.frozen(kw_only=True)
class GiftCard:
    """A saved gift card with its float balance."""

    source: Literal["gift_card"] = "gift_card"
    id: str
    amount: float


@attrs.frozen(kw_only=True)
class Certificate:
    """A travel certificate; it is used up whole by one booking."""

    source: Literal["certificate"] = "certificate"
    id: str
    amount: float


PaymentMethod = CreditCard | GiftCard | Certificate


@attrs.frozen(kw_only=True)
class User:
    """A customer profile."""

    user_id: str
    name: Name
    address: Address
    email: str
    dob: str
    payment_methods: dict[str, PaymentMethod]
    saved_passengers: list[Passenger]
    membership: Membership
    reservations: list[str]


# --------------------------------------------------------------------------- flights


@attrs.frozen(kw_only=True)
class FlightAvailable:
    """A bookable flight date: seats left and price per cabin."""

    status: Literal["available"] = "available"
    available_seats: dict[str, int]
    prices: dict[str, int]


@attrs.frozen(kw_only=True)
class FlightLanded:
    """A flight date that has landed."""

    status: Literal["landed"] = "landed"
    actual_departure_time_est: str
    actual_arrival_time_est: str


@attrs.frozen(kw_only=True)
class FlightCancelled:
    """A flight date the airline cancelled."""

    status: Literal["cancelled"] = "cancelled"


@attrs.frozen(kw_only=True)
class FlightDelayed:
    """A flight date running late, not yet departed."""

    status: Literal["delayed"] = "delayed"
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


@attrs.frozen(kw_only=True)
class FlightFlying:
    """A flight date in the air."""

    status: Literal["flying"] = "flying"
    actual_departure_time_est: str
    estimated_arrival_time_est: str


@attrs.frozen(kw_only=True)
class FlightOnTime:
    """A flight date expected on time, not yet departed."""

    status: Literal["on time"] = "on time"
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


FlightDateStatus = FlightAvailable | FlightLanded | FlightCancelled | FlightDelayed | FlightFlying | FlightOnTime
_STATUS_TYPES: dict[str, type] = {
    "available": FlightAvailable,
    "landed": FlightLanded,
    "cancelled": FlightCancelled,
    "delayed": FlightDelayed,
    "flying": FlightFlying,
    "on time": FlightOnTime,
}


@attrs.frozen(kw_only=True)
class Flight:
    """A scheduled flight and its status on each date."""

    flight_number: str
    origin: str
    destination: str
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    dates: dict[str, FlightDateStatus]


@attrs.frozen(kw_only=True)
class ReservationFlight:
    """One flight of a reservation, at the price paid per passenger."""

    flight_number: str
    origin: str
    destination: str
    date: str
    price: int


@attrs.frozen(kw_only=True)
class Reservation:
    """A booking. status is None, or "cancelled"."""

    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: FlightType
    cabin: CabinClass
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Insurance
    status: Literal["cancelled"] | None = None


# --------------------------------------------------------------------------- tool-only shapes


@attrs.frozen(kw_only=True)
class FlightInfo:
    """A flight on a date, as tools take it."""

    flight_number: str
    date: str


@attrs.frozen(kw_only=True)
class DirectFlight:
    """A search result: a flight with its seats and prices on the searched date."""

    flight_number: str
    origin: str
    destination: str
    status: Literal["available"] = "available"
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    date: str | None = None
    available_seats: dict[str, int]
    prices: dict[str, int]


@attrs.frozen(kw_only=True)
class AirportCode:
    """An airport and its city."""

    iata: str
    city: str


# --------------------------------------------------------------------------- lax coercion

PYDANTIC_ERRORS_URL = "https://errors.pydantic.dev/2.13/v/"


@attrs.frozen
class FieldError:
    """One field a tau2 model would refuse, in pydantic's terms."""

    field: str
    kind: str
    message: str
    value: Any


class CoercionError(ValueError):
    """A model a tau2 tool would fail to build; str() reads like pydantic's ValidationError."""

    def __init__(self, model: str, errors: list[FieldError]) -> None:
        self.model, self.errors = model, errors
        lines = [f"{len(errors)} validation error{'s' if len(errors) > 1 else ''} for {model}"]
        for e in errors:
            lines += [
                e.field,
                f"  {e.message} [type={e.kind}, input_value={e.value!r}, input_type={type(e.value).__name__}]",
                f"    For further information visit {PYDANTIC_ERRORS_URL}{e.kind}",
            ]
        super().__init__("\n".join(lines))


def _int_error(value: Any, field: str) -> FieldError | None:
    if isinstance(value, int):
        return None
    if isinstance(value, float):
        if value.is_integer():
            return None
        return FieldError(field, "int_from_float", "Input should be a valid integer, got a number with a fractional part", value)
    if isinstance(value, str):
        try:
            int(value.strip())
        except ValueError:
            return FieldError(field, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", value)
        return None
    return FieldError(field, "int_type", "Input should be a valid integer", value)


def _float_error(value: Any, field: str) -> FieldError | None:
    if isinstance(value, (int, float)):
        return None
    if isinstance(value, str):
        try:
            float(value.strip())
        except ValueError:
            return FieldError(field, "float_parsing", "Input should be a valid number, unable to parse string as a number", value)
        return None
    return FieldError(field, "float_type", "Input should be a valid number", value)


def _str_error(value: Any, field: str) -> FieldError | None:
    return None if isinstance(value, str) else FieldError(field, "string_type", "Input should be a valid string", value)


def _choice_error(value: Any, choices: tuple[str, ...], field: str) -> FieldError | None:
    if isinstance(value, str) and value in choices:
        return None
    options = ", ".join(repr(c) for c in choices[:-1]) + f" or {choices[-1]!r}"
    return FieldError(field, "literal_error", f"Input should be {options}", value)


def as_int(value: Any, field: str = "value", model: str = "Model") -> int:
    """An int as a lax pydantic int field takes it: bools, ints, integral floats, integer strings."""
    if type(value) is int:  # nearly every number of a database: settled without the checks (7 MB to load)
        return value
    error = _int_error(value, field)
    if error is not None:
        raise CoercionError(model, [error])
    return int(value.strip()) if isinstance(value, str) else int(value)


def as_float(value: Any, field: str = "value", model: str = "Model") -> float:
    """A float as a lax pydantic float field takes it."""
    error = _float_error(value, field)
    if error is not None:
        raise CoercionError(model, [error])
    return float(value.strip()) if isinstance(value, str) else float(value)


# A field spec is (name, kind): kind is "str", "int", "float", "any", or a tuple of Literal choices.
FieldSpecs = tuple[tuple[str, Any], ...]
_CHECKS: dict[str, Any] = {"str": _str_error, "int": _int_error, "float": _float_error, "any": lambda value, field: None}
_COERCE: dict[str, Any] = {"int": as_int, "float": as_float}


def field_errors(specs: FieldSpecs, values: Any, model: str, prefix: str = "") -> tuple[list[FieldError], dict[str, Any]]:
    """The errors a tau2 model with these fields would report for values, and the coerced values."""
    if not isinstance(values, Mapping):
        message = f"Input should be a valid dictionary or instance of {model}"
        return [FieldError(prefix.rstrip(".") or model, "model_type", message, values)], {}
    errors, result = [], {}
    for name, kind in specs:
        if name not in values:
            errors.append(FieldError(prefix + name, "missing", "Field required", dict(values)))
            continue
        value = values[name]
        error = _choice_error(value, kind, prefix + name) if isinstance(kind, tuple) else _CHECKS[kind](value, prefix + name)
        if error is not None:
            errors.append(error)
        else:
            result[name] = _COERCE[kind](value) if kind in _COERCE else value
    return errors, result


def validated(model: str, specs: FieldSpecs, values: Any) -> dict[str, Any]:
    """Check and coerce values as a tau2 model with these fields would, reporting every error at once."""
    errors, result = field_errors(specs, values, model)
    if errors:
        raise CoercionError(model, errors)
    return result


PASSENGER_FIELDS: FieldSpecs = (("first_name", "str"), ("last_name", "str"), ("dob", "str"))
FLIGHT_INFO_FIELDS: FieldSpecs = (("flight_number", "str"), ("date", "str"))
PAYMENT_FIELDS: FieldSpecs = (("payment_id", "str"), ("amount", "int"))


# --------------------------------------------------------------------------- building records from JSON


def passenger_from(raw: Mapping[str, Any]) -> Passenger:
    """A Passenger from a dict (extra keys ignored)."""
    if type(raw) is dict:  # the common case, settled without the checks: three strings
        first, last, dob = raw.get("first_name"), raw.get("last_name"), raw.get("dob")
        if type(first) is str and type(last) is str and type(dob) is str:
            return Passenger(first_name=first, last_name=last, dob=dob)
    return Passenger(**validated("Passenger", PASSENGER_FIELDS, raw))


def flight_info_from(raw: Mapping[str, Any]) -> FlightInfo:
    """A FlightInfo from a dict (extra keys ignored)."""
    return FlightInfo(**validated("FlightInfo", FLIGHT_INFO_FIELDS, raw))


def payment_from(raw: Mapping[str, Any]) -> Payment:
    """A Payment from a dict; the amount becomes an int."""
    if type(raw) is dict:  # the common case, settled without the checks: a string and an int
        payment_id, amount = raw.get("payment_id"), raw.get("amount")
        if type(payment_id) is str and type(amount) is int:
            return Payment(payment_id=payment_id, amount=amount)
    return Payment(**validated("Payment", PAYMENT_FIELDS, raw))


def payment_method_from(raw: Mapping[str, Any]) -> PaymentMethod:
    """A saved payment method, by its source."""
    source = raw["source"]
    if source == "credit_card":
        return CreditCard(id=raw["id"], brand=raw["brand"], last_four=raw["last_four"])
    if source == "gift_card":
        return GiftCard(id=raw["id"], amount=as_float(raw["amount"], "amount"))
    if source == "certificate":
        return Certificate(id=raw["id"], amount=as_float(raw["amount"], "amount"))
    raise ValueError(f"unknown payment method source {source!r}")


def date_status_from(raw: Mapping[str, Any]) -> FlightDateStatus:
    """A flight date's status record, chosen by its status field."""
    status = raw["status"]
    if status == "available":
        return FlightAvailable(available_seats=_ints(raw["available_seats"]), prices=_ints(raw["prices"]))
    cls = _STATUS_TYPES.get(status)
    if cls is None:
        raise ValueError(f"unknown flight status {status!r}")
    return cls(**{name: raw[name] for name in _status_fields(cls)})


def _ints(raw: Mapping[str, Any]) -> dict[str, int]:
    """{cabin: count or price} with every value an int, as as_int takes them."""
    if type(raw) is dict and all(type(n) is int for n in raw.values()):  # nearly always: no call per value
        return dict(raw)
    return {c: as_int(n, c) for c, n in raw.items()}


@functools.cache
def _status_fields(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in attrs.fields(cls) if f.name != "status")


def flight_from(raw: Mapping[str, Any]) -> Flight:
    """A Flight from its JSON."""
    return Flight(
        flight_number=raw["flight_number"],
        origin=raw["origin"],
        destination=raw["destination"],
        scheduled_departure_time_est=raw["scheduled_departure_time_est"],
        scheduled_arrival_time_est=raw["scheduled_arrival_time_est"],
        dates={d: date_status_from(s) for d, s in raw["dates"].items()},
    )


def user_from(raw: Mapping[str, Any]) -> User:
    """A User from its JSON."""
    address = raw["address"]
    return User(
        user_id=raw["user_id"],
        name=Name(first_name=raw["name"]["first_name"], last_name=raw["name"]["last_name"]),
        address=Address(
            address1=address["address1"],
            address2=address.get("address2"),
            city=address["city"],
            country=address["country"],
            state=address["state"],
            zip=address["zip"],
        ),
        email=raw["email"],
        dob=raw["dob"],
        payment_methods={k: payment_method_from(v) for k, v in raw["payment_methods"].items()},
        saved_passengers=[passenger_from(p) for p in raw["saved_passengers"]],
        membership=raw["membership"],
        reservations=list(raw["reservations"]),
    )


def reservation_from(raw: Mapping[str, Any]) -> Reservation:
    """A Reservation from its JSON (status defaults to None)."""
    return Reservation(
        reservation_id=raw["reservation_id"],
        user_id=raw["user_id"],
        origin=raw["origin"],
        destination=raw["destination"],
        flight_type=raw["flight_type"],
        cabin=raw["cabin"],
        flights=[
            ReservationFlight(
                flight_number=f["flight_number"], origin=f["origin"], destination=f["destination"], date=f["date"], price=as_int(f["price"], "price")
            )
            for f in raw["flights"]
        ],
        passengers=[passenger_from(p) for p in raw["passengers"]],
        payment_history=[payment_from(p) for p in raw["payment_history"]],
        created_at=raw["created_at"],
        total_baggages=as_int(raw["total_baggages"], "total_baggages"),
        nonfree_baggages=as_int(raw["nonfree_baggages"], "nonfree_baggages"),
        insurance=raw["insurance"],
        status=raw.get("status"),
    )


_BUILDERS = {"flights": flight_from, "users": user_from, "reservations": reservation_from}
RECORD_TYPES: dict[str, type] = {"flights": Flight, "users": User, "reservations": Reservation}


_HOOKS_INSTALLED: list[bool] = []


def install_structure_hooks() -> None:
    """Make the kernel converter build our records as tau2 validates them (extra keys ignored, lax numbers).

    The kernel structures records when it applies a task's initialization_data patch. Once per process: registering
    again would clear the converter's dispatch cache under another thread (a run builds its records in one).
    """
    if _HOOKS_INSTALLED:
        return
    _HOOKS_INSTALLED.append(True)
    for cls, build in ((Flight, flight_from), (User, user_from), (Reservation, reservation_from)):
        converter.register_structure_hook(cls, lambda raw, _, build=build: build(raw))


def records_from_json(data: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """{table: {key: record}} from a db.json object (unknown top-level tables are refused)."""
    install_structure_hooks()
    unknown = sorted(set(data) - set(TABLES))
    missing = sorted(set(TABLES) - set(data))
    if unknown or missing:
        raise ValueError(f"airline db: unknown tables {unknown}, missing tables {missing}")
    return {name: {key: _BUILDERS[name](raw) for key, raw in data[name].items()} for name in TABLES}


def state_from_json(data: Mapping[str, Any]) -> State:
    """The pristine airline state from a db.json object, built now."""
    return State({name: Table(BaseTable(records, RECORD_TYPES[name])) for name, records in records_from_json(data).items()})


def deferred_state(path: Path) -> State:
    """The pristine airline state of a db.json file, read and built when first needed (see State.deferred)."""
    install_structure_hooks()  # the kernel structures records for task patches before the file may have been read
    if not path.is_file():  # what is cheap to find out is found out now
        raise TaskFileError(str(path), ["file not found" if not path.exists() else "is not a file"])
    return State.deferred(RECORD_TYPES, lambda: records_from_json(read_json(path)))


# --------------------------------------------------------------------------- tau2's dump and DB hash


def dump(record: Any) -> Any:
    """A record as tau2's model_dump gives it (every field, declaration order)."""
    return attrs.asdict(record, recurse=True)


def dump_json(record: Any) -> str:
    """One record's JSON exactly as tau2's hash serialises it."""
    return json.dumps(dump(record), sort_keys=True, default=str)


def state_to_json(state: State) -> dict[str, dict[str, Any]]:
    """The whole DB as tau2 dumps it (for writing db.json files)."""
    return {name: {key: dump(state[name][key]) for key in state[name]} for name in TABLES}


# tau2's DB hash: sha256 of json.dumps(db.model_dump(), sort_keys=True, default=str), per-record fragments cached.
ReferenceHasher = functools.partial(DumpHasher, dump)
