"""The airline agent's fourteen tools, with tau2-bench's semantics down to its quirks.

The behaviour (checks, their order, error texts, ids, arithmetic, what changes and what does not)
follows tau2-bench's airline toolkit, so a conversation ends in the database tau2 would hash.
Quirks kept on purpose: a booking deletes every certificate it uses; updates and cancellations
never touch seat counts; a cancellation appends the negation of every payment-history entry;
a flight or baggage update takes a certificate for no amount, not even $0; a negative price
difference credits a gift card and is logged as a negative payment; update arguments that are
assigned without a model (bag counts, cabin) are stored as the caller sent them.

Records are frozen and shared by every conversation: each write builds new records and assigns them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import attrs

from bench_kernel import ToolError, ToolKind, Toolkit, tool

from .records import (
    CABINS,
    PASSENGER_FIELDS,
    PAYMENT_FIELDS,
    AirportCode,
    CabinClass,
    Certificate,
    CoercionError,
    DirectFlight,
    Flight,
    FlightAvailable,
    FlightDateStatus,
    FlightInfo,
    FlightType,
    GiftCard,
    Insurance,
    Passenger,
    Payment,
    Reservation,
    ReservationFlight,
    User,
    as_float,
    as_int,
    field_errors,
    flight_info_from,
    passenger_from,
    payment_from,
)

NOW = "2024-05-15T15:00:00"
RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
INSURANCE_PER_PASSENGER = 30
NONFREE_BAG_PRICE = 50
CALCULATOR_CHARACTERS = frozenset("0123456789+-*/(). ")
TRANSFER_REPLY = "Transfer successful"
# The Reservation fields a booking takes from its arguments, in model order (the rest come from the tool).
RESERVATION_FIELDS = (
    ("origin", "str"),
    ("destination", "str"),
    ("flight_type", ("round_trip", "one_way")),
    ("cabin", CABINS),
    ("total_baggages", "int"),
    ("nonfree_baggages", "int"),
    ("insurance", ("yes", "no")),
)

AIRPORTS: tuple[tuple[str, str], ...] = (
    ("SFO", "San Francisco"),
    ("JFK", "New York"),
    ("LAX", "Los Angeles"),
    ("ORD", "Chicago"),
    ("DFW", "Dallas"),
    ("DEN", "Denver"),
    ("SEA", "Seattle"),
    ("ATL", "Atlanta"),
    ("MIA", "Miami"),
    ("BOS", "Boston"),
    ("PHX", "Phoenix"),
    ("IAH", "Houston"),
    ("LAS", "Las Vegas"),
    ("MCO", "Orlando"),
    ("EWR", "Newark"),
    ("CLT", "Charlotte"),
    ("MSP", "Minneapolis"),
    ("DTW", "Detroit"),
    ("PHL", "Philadelphia"),
    ("LGA", "LaGuardia"),
)

T = TypeVar("T")


def _models_if_all_dicts(items: Sequence[Any], build: Callable[[Any], T]) -> list[Any]:
    """tau2 builds models from a list only when every item is a dict; otherwise it keeps the list."""
    if not isinstance(items, list):
        raise ToolError(f"Input should be a valid list, got {items!r}")
    if all(isinstance(item, dict) for item in items):
        return [_coerced(build, item) for item in items]
    return list(items)


def _coerced(build: Callable[..., T], *args: Any) -> T:
    try:
        return build(*args)
    except CoercionError as exc:
        raise ToolError(str(exc)) from None


def _attribute(item: Any, name: str) -> Any:
    """An attribute of a list item, failing as tau2 does when the item is not a model."""
    if not hasattr(item, name):
        raise ToolError(f"'{type(item).__name__}' object has no attribute '{name}'")
    return getattr(item, name)


def _arithmetic(operation: Callable[[], T]) -> T:
    """Run arithmetic on raw arguments, reporting a wrong type with Python's own words."""
    try:
        return operation()
    except TypeError as exc:
        raise ToolError(str(exc)) from None


def _seats(status: FlightAvailable, cabin: Any) -> int:
    if cabin not in status.available_seats:
        raise ToolError(repr(cabin))
    return status.available_seats[cabin]


class AirlineTools(Toolkit):
    """Tools over the flights, users and reservations tables."""

    # ------------------------------------------------------------------ lookups

    def _user(self, user_id: str) -> User:
        if user_id not in self.state["users"]:
            raise ToolError(f"User {user_id} not found")
        return self.state["users"][user_id]

    def _reservation(self, reservation_id: str) -> Reservation:
        if reservation_id not in self.state["reservations"]:
            raise ToolError(f"Reservation {reservation_id} not found")
        return self.state["reservations"][reservation_id]

    def _flight(self, flight_number: str) -> Flight:
        if flight_number not in self.state["flights"]:
            raise ToolError(f"Flight {flight_number} not found")
        return self.state["flights"][flight_number]

    def _flight_date(self, flight_number: str, date: str) -> FlightDateStatus:
        flight = self._flight(flight_number)
        if date not in flight.dates:
            raise ToolError(f"Flight {flight_number} not found on date {date}")
        return flight.dates[date]

    def _bookable(self, info: FlightInfo | dict, cabin: str, travellers: int) -> tuple[Flight, FlightAvailable]:
        """The flight and its available date, or the error tau2 gives for it."""
        flight_number, date = _attribute(info, "flight_number"), _attribute(info, "date")
        flight = self._flight(flight_number)
        status = self._flight_date(flight_number, date)
        if not isinstance(status, FlightAvailable):
            raise ToolError(f"Flight {flight_number} not available on date {date}")
        if _seats(status, cabin) < travellers:
            raise ToolError(f"Not enough seats on flight {flight_number}")
        return flight, status

    def _new_reservation_id(self) -> str:
        for reservation_id in RESERVATION_IDS:
            if reservation_id not in self.state["reservations"]:
                return reservation_id
        raise ToolError("Too many reservations")

    def _direct_flights(self, date: str, origin: str | None, destination: str | None, leave_after: str | None = None) -> list[DirectFlight]:
        found = []
        for flight in self.state["flights"].values():
            status = flight.dates.get(date)
            if (
                (origin is None or flight.origin == origin)
                and (destination is None or flight.destination == destination)
                and isinstance(status, FlightAvailable)
                and (leave_after is None or flight.scheduled_departure_time_est >= leave_after)
            ):
                found.append(
                    DirectFlight(
                        flight_number=flight.flight_number,
                        origin=flight.origin,
                        destination=flight.destination,
                        scheduled_departure_time_est=flight.scheduled_departure_time_est,
                        scheduled_arrival_time_est=flight.scheduled_arrival_time_est,
                        available_seats=dict(status.available_seats),
                        prices=dict(status.prices),
                    )
                )
        return found

    # ------------------------------------------------------------------ writes on records

    def _put_user(self, user: User) -> None:
        self.state["users"][user.user_id] = user

    def _take_seats(self, taken: list[tuple[str, str]], cabin: str, travellers: int) -> None:
        """Decrement seats once per (flight, date) entry, repeats included."""
        for flight_number, date in taken:
            flight = self.state["flights"][flight_number]
            status = flight.dates[date]
            seats = {**status.available_seats, cabin: status.available_seats[cabin] - travellers}
            dates = {**flight.dates, date: attrs.evolve(status, available_seats=seats)}
            self.state["flights"][flight_number] = attrs.evolve(flight, dates=dates)

    def _charge_for_update(self, user: User, payment_id: str, total: Any) -> Payment | None:
        """Charge (or, when negative, credit) one saved method for an update; the payment to log."""
        method = user.payment_methods.get(payment_id)
        if method is None:
            raise ToolError("Payment method not found")
        if isinstance(method, Certificate):
            raise ToolError("Certificate cannot be used to update reservation")
        if isinstance(method, GiftCard):
            if _arithmetic(lambda: method.amount < total):
                raise ToolError("Gift card balance is not enough")
            credited = attrs.evolve(method, amount=method.amount - total)
            self._put_user(attrs.evolve(user, payment_methods={**user.payment_methods, payment_id: credited}))
        if total == 0:
            return None
        return Payment(payment_id=payment_id, amount=_coerced(as_int, total, "amount", "Payment"))

    # ------------------------------------------------------------------ tools

    @tool(ToolKind.WRITE)
    def book_reservation(
        self,
        user_id: str,
        origin: str,
        destination: str,
        flight_type: FlightType,
        cabin: CabinClass,
        flights: list[FlightInfo | dict],
        passengers: list[Passenger | dict],
        payment_methods: list[Payment | dict],
        total_baggages: int,
        nonfree_baggages: int,
        insurance: Insurance,
    ) -> Reservation:
        """Book a new reservation for a user and charge its saved payment methods.

        Args:
            user_id: The id of the user who books, for example 'ava_lopez_1234'.
            origin: IATA code of the trip's origin airport, for example 'BOS'.
            destination: IATA code of the trip's destination airport, for example 'SEA'.
            flight_type: 'one_way' or 'round_trip'.
            cabin: 'basic_economy', 'economy' or 'business'; the same cabin on every flight.
            flights: Every flight of the trip, each an object with flight_number and date ('YYYY-MM-DD').
            passengers: Every passenger, each an object with first_name, last_name and dob ('YYYY-MM-DD').
            payment_methods: The payments, each an object with payment_id (a method saved in the profile) and amount in dollars; they must add up to the total price.
            total_baggages: How many checked bags the reservation has in all.
            nonfree_baggages: How many of those bags are paid for.
            insurance: 'yes' or 'no' for travel insurance.
        """
        flights = _models_if_all_dicts(flights, flight_info_from)
        passengers = _models_if_all_dicts(passengers, passenger_from)
        payments = _models_if_all_dicts(payment_methods, payment_from)
        user = self._user(user_id)
        reservation_id = self._new_reservation_id()
        reservation = self._new_reservation(
            reservation_id, user_id, origin, destination, flight_type, cabin, passengers, payments, total_baggages, nonfree_baggages, insurance
        )
        travellers = len(passengers)
        booked, taken, total = [], [], 0
        for info in flights:
            flight, status = self._bookable(info, cabin, travellers)
            price = status.prices[cabin]
            booked.append(
                ReservationFlight(
                    flight_number=flight.flight_number,
                    origin=flight.origin,
                    destination=flight.destination,
                    date=_attribute(info, "date"),
                    price=price,
                )
            )
            taken.append((flight.flight_number, _attribute(info, "date")))
            total += price * travellers
        if insurance == "yes":
            total += INSURANCE_PER_PASSENGER * travellers
        try:
            total += NONFREE_BAG_PRICE * nonfree_baggages
        except TypeError as exc:
            raise ToolError(str(exc)) from None
        self._check_booking_payments(user, payments, total)
        self._spend(user, payments)
        self._take_seats(taken, cabin, travellers)
        reservation = attrs.evolve(reservation, flights=booked)
        self.state["reservations"][reservation_id] = reservation
        user = self.state["users"][user_id]
        self._put_user(attrs.evolve(user, reservations=[*user.reservations, reservation_id]))
        return reservation

    def _new_reservation(
        self,
        reservation_id: str,
        user_id: str,
        origin: Any,
        destination: Any,
        flight_type: Any,
        cabin: Any,
        passengers: list[Any],
        payments: list[Any],
        total_baggages: Any,
        nonfree_baggages: Any,
        insurance: Any,
    ) -> Reservation:
        """The reservation record, validated as tau2's model validates its fields (every error at once)."""
        given = {
            "origin": origin,
            "destination": destination,
            "flight_type": flight_type,
            "cabin": cabin,
            "total_baggages": total_baggages,
            "nonfree_baggages": nonfree_baggages,
            "insurance": insurance,
        }
        errors, fields = field_errors(RESERVATION_FIELDS[:4], given, "Reservation")
        items: dict[str, list[Any]] = {"passengers": [], "payment_history": []}
        for name, listed, cls, specs in (
            ("passengers", passengers, Passenger, PASSENGER_FIELDS),
            ("payment_history", payments, Payment, PAYMENT_FIELDS),
        ):
            for i, item in enumerate(listed):
                if isinstance(item, cls):
                    items[name].append(item)
                    continue
                item_errors, values = field_errors(specs, item, cls.__name__, f"{name}.{i}.")
                errors += item_errors
                items[name].append(None if item_errors else cls(**values))
        more_errors, more = field_errors(RESERVATION_FIELDS[4:], given, "Reservation")
        errors += more_errors
        if errors:
            raise ToolError(str(CoercionError("Reservation", errors)))
        return Reservation(
            reservation_id=reservation_id,
            user_id=user_id,
            flights=[],
            created_at=NOW,
            passengers=copy.deepcopy(items["passengers"]),
            payment_history=copy.deepcopy(items["payment_history"]),
            **fields,
            **more,
        )

    @staticmethod
    def _check_booking_payments(user: User, payments: list[Payment], total: Any) -> None:
        for payment in payments:
            method = user.payment_methods.get(payment.payment_id)
            if method is None:
                raise ToolError(f"Payment method {payment.payment_id} not found")
            if isinstance(method, GiftCard | Certificate) and method.amount < payment.amount:
                raise ToolError(f"Not enough balance in payment method {payment.payment_id}")
        paid = sum(payment.amount for payment in payments)
        if paid != total:
            raise ToolError(f"Payment amount does not add up, total price is {total}, but paid {paid}")

    def _spend(self, user: User, payments: list[Payment]) -> None:
        """Deduct gift cards and delete used certificates, in order, as tau2 does."""
        methods = dict(user.payment_methods)
        for payment in payments:
            method = methods.get(payment.payment_id)
            if method is None:
                # a certificate listed twice was deleted by its first use; tau2 fails here, keeping what it did
                self._put_user(attrs.evolve(user, payment_methods=methods))
                raise ToolError(repr(payment.payment_id))
            if isinstance(method, GiftCard):
                methods[payment.payment_id] = attrs.evolve(method, amount=method.amount - payment.amount)
            elif isinstance(method, Certificate):
                del methods[payment.payment_id]
        self._put_user(attrs.evolve(user, payment_methods=methods))

    @tool(ToolKind.GENERIC)
    def calculate(self, expression: str) -> str:
        """Evaluate an arithmetic expression and return the result rounded to two decimals.

        Args:
            expression: The expression, for example '(120 + 80) * 2'. Only digits, + - * /, parentheses, dots and spaces are allowed.
        """
        if not all(char in CALCULATOR_CHARACTERS for char in expression):
            raise ToolError("Invalid characters in expression")
        # The character check leaves only numbers and operators, so eval cannot reach names.
        return _arithmetic(lambda: str(round(float(eval(expression, {"__builtins__": None}, {})), 2)))

    @tool(ToolKind.WRITE)
    def cancel_reservation(self, reservation_id: str) -> Reservation:
        """Cancel a whole reservation; every payment is refunded to where it came from.

        Args:
            reservation_id: The reservation id, for example 'K7PQ2Z'.
        """
        reservation = self._reservation(reservation_id)
        refunds = [Payment(payment_id=p.payment_id, amount=-p.amount) for p in reservation.payment_history]
        cancelled = attrs.evolve(reservation, payment_history=[*reservation.payment_history, *refunds], status="cancelled")
        self.state["reservations"][reservation_id] = cancelled
        return cancelled

    @tool(ToolKind.READ)
    def get_flight_status(self, flight_number: str, date: str) -> str:
        """Get the status of a flight on a date (available, on time, delayed, flying, landed or cancelled).

        Args:
            flight_number: The flight number, for example 'HAT123'.
            date: The date, as 'YYYY-MM-DD'.
        """
        return self._flight_date(flight_number, date).status

    @tool(ToolKind.READ)
    def get_reservation_details(self, reservation_id: str) -> Reservation:
        """Get everything about a reservation: flights, passengers, payments, bags and insurance.

        Args:
            reservation_id: The reservation id, for example 'K7PQ2Z'.
        """
        return self._reservation(reservation_id)

    @tool(ToolKind.READ)
    def get_user_details(self, user_id: str) -> User:
        """Get a user's profile: name, address, membership, payment methods, saved passengers and reservation ids.

        Args:
            user_id: The user id, for example 'ava_lopez_1234'.
        """
        return self._user(user_id)

    @tool(ToolKind.READ)
    def list_all_airports(self) -> list[AirportCode]:
        """List every airport the airline serves, with its city."""
        return [AirportCode(iata=iata, city=city) for iata, city in AIRPORTS]

    @tool(ToolKind.READ)
    def search_direct_flight(self, origin: str, destination: str, date: str) -> list[DirectFlight]:
        """Find the bookable nonstop flights between two airports on a date.

        Args:
            origin: IATA code of the departure airport, for example 'BOS'.
            destination: IATA code of the arrival airport, for example 'SEA'.
            date: The travel date, as 'YYYY-MM-DD'.
        """
        return self._direct_flights(date, origin, destination)

    @tool(ToolKind.READ)
    def search_onestop_flight(self, origin: str, destination: str, date: str) -> list[list[DirectFlight]]:
        """Find bookable two-flight connections between two airports, leaving on a date.

        Args:
            origin: IATA code of the departure airport, for example 'BOS'.
            destination: IATA code of the final arrival airport, for example 'SEA'.
            date: The departure date of the first flight, as 'YYYY-MM-DD'.
        """
        pairs = []
        for first in self._direct_flights(date, origin, None):
            first = attrs.evolve(first, date=date)
            # tau2 moves to the next day by day number only, without padding or month rollover
            next_date = f"2024-05-{int(date[-2:]) + 1}" if "+1" in first.scheduled_arrival_time_est else date
            for second in self._direct_flights(next_date, first.destination, destination, leave_after=first.scheduled_arrival_time_est):
                pairs.append([first, attrs.evolve(second, date=next_date)])
        return pairs

    @tool(ToolKind.WRITE)
    def send_certificate(self, user_id: str, amount: int) -> str:
        """Give a user a travel certificate worth an amount, as compensation. Use only when the policy allows it.

        Args:
            user_id: The id of the user who receives the certificate, for example 'ava_lopez_1234'.
            amount: The certificate's value in dollars.
        """
        user = self._user(user_id)
        for certificate_id in CERTIFICATE_IDS:
            if certificate_id not in user.payment_methods:
                certificate = Certificate(id=certificate_id, amount=_coerced(as_float, amount, "amount", "Certificate"))
                self._put_user(attrs.evolve(user, payment_methods={**user.payment_methods, certificate_id: certificate}))
                return f"Certificate {certificate_id} added to user {user_id} with amount {amount}."
        raise ToolError("Too many certificates")

    @tool(ToolKind.GENERIC)
    def transfer_to_human_agents(self, summary: str) -> str:
        """Hand the conversation to a human agent, with a summary of the user's issue.

        Use it only when the user asks for a human, or when the request is outside what the policy and these tools allow.

        Args:
            summary: A short summary of what the user needs.
        """
        return TRANSFER_REPLY

    @tool(ToolKind.WRITE)
    def update_reservation_baggages(self, reservation_id: str, total_baggages: int, nonfree_baggages: int, payment_id: str) -> Reservation:
        """Change a reservation's checked bags; added paid bags are charged to one saved method.

        Args:
            reservation_id: The reservation id, for example 'K7PQ2Z'.
            total_baggages: The new total number of checked bags.
            nonfree_baggages: The new number of paid bags among them.
            payment_id: The saved payment method to charge, for example 'credit_card_1234567' or 'gift_card_1234567'.
        """
        reservation = self._reservation(reservation_id)
        user = self._user(reservation.user_id)
        total = _arithmetic(lambda: NONFREE_BAG_PRICE * max(0, nonfree_baggages - reservation.nonfree_baggages))
        payment = self._charge_for_update(user, payment_id, total)
        history = reservation.payment_history if payment is None else [*reservation.payment_history, payment]
        updated = attrs.evolve(reservation, payment_history=history, total_baggages=total_baggages, nonfree_baggages=nonfree_baggages)
        self.state["reservations"][reservation_id] = updated
        return updated

    @tool(ToolKind.WRITE)
    def update_reservation_flights(self, reservation_id: str, cabin: CabinClass, flights: list[FlightInfo | dict], payment_id: str) -> Reservation:
        """Replace a reservation's flights and/or cabin; the price difference is charged or refunded to one saved method.

        Args:
            reservation_id: The reservation id, for example 'K7PQ2Z'.
            cabin: The cabin for every flight after the change.
            flights: The complete new list of flights, unchanged ones included, each an object with flight_number and date ('YYYY-MM-DD').
            payment_id: The saved credit card or gift card that pays or receives the difference, for example 'credit_card_1234567'.
        """
        flights = _models_if_all_dicts(flights, flight_info_from)
        reservation = self._reservation(reservation_id)
        user = self._user(reservation.user_id)
        travellers = len(reservation.passengers)
        new_flights, total = [], 0
        for info in flights:
            kept = next(
                (
                    f
                    for f in reservation.flights
                    if cabin == reservation.cabin and f.flight_number == _attribute(info, "flight_number") and f.date == _attribute(info, "date")
                ),
                None,
            )
            if kept is None:
                flight, status = self._bookable(info, cabin, travellers)
                kept = ReservationFlight(
                    flight_number=_attribute(info, "flight_number"),
                    origin=flight.origin,
                    destination=flight.destination,
                    date=_attribute(info, "date"),
                    price=status.prices[cabin],
                )
            new_flights.append(kept)
            total += kept.price * travellers
        total -= sum(f.price for f in reservation.flights) * travellers
        payment = self._charge_for_update(user, payment_id, total)
        history = reservation.payment_history if payment is None else [*reservation.payment_history, payment]
        updated = attrs.evolve(reservation, payment_history=history, flights=new_flights, cabin=cabin)
        self.state["reservations"][reservation_id] = updated
        return updated

    @tool(ToolKind.WRITE)
    def update_reservation_passengers(self, reservation_id: str, passengers: list[Passenger | dict]) -> Reservation:
        """Replace the passengers of a reservation; their number cannot change.

        Args:
            reservation_id: The reservation id, for example 'K7PQ2Z'.
            passengers: Every passenger after the change, each an object with first_name, last_name and dob ('YYYY-MM-DD').
        """
        passengers = _models_if_all_dicts(passengers, passenger_from)
        reservation = self._reservation(reservation_id)
        if len(passengers) != len(reservation.passengers):
            raise ToolError("Number of passengers does not match")
        # As tau2: the passengers are stored as given, plain dicts included.
        updated = attrs.evolve(reservation, passengers=copy.deepcopy(passengers))  # type: ignore[arg-type]
        self.state["reservations"][reservation_id] = updated
        return updated
