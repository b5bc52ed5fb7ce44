"""Our own airline suite, generated from a seed: a database of flights, users and reservations, and tasks.

Every task is composed from the database (a scenario in our words, gold actions, facts to
communicate), then kept only if its gold actions replay without an error and the do-nothing
agent fails it. Usage: `python -m bench_airline.generate --seed 7 --out DIR` or `bench airline generate`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Callable
from datetime import date, timedelta
from importlib.resources import files
from pathlib import Path
from random import Random
from typing import Any

from bench_kernel import DomainData, Task, TerminationReason, converter, evaluate, replay_gold

from .domain import AirlineDomain
from .records import ReferenceHasher, state_from_json
from .tools import AIRPORTS, AirlineTools

DEFAULT_SEED = 7
TODAY = date(2024, 5, 15)
FIRST_DAY, LAST_DAY = date(2024, 5, 10), date(2024, 5, 28)
FREE_BAGS = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
FIRST_NAMES = [
    "Ava",
    "Noah",
    "Mila",
    "Omar",
    "Lena",
    "Ravi",
    "Sofia",
    "Jonas",
    "Keiko",
    "Mateo",
    "Priya",
    "Tariq",
    "Ines",
    "Hugo",
    "Amara",
    "Felix",
    "Yara",
    "Diego",
    "Hana",
    "Bruno",
    "Zoe",
    "Idris",
    "Clara",
    "Kenji",
]
LAST_NAMES = [
    "Lopez",
    "Okafor",
    "Berg",
    "Haddad",
    "Novak",
    "Sharma",
    "Rossi",
    "Keller",
    "Tanaka",
    "Silva",
    "Moreau",
    "Nakamura",
    "Adeyemi",
    "Fischer",
    "Costa",
    "Larsen",
    "Ibrahim",
    "Walsh",
]
STREETS = ["Maple Avenue", "Harbor Road", "Cedar Lane", "Elm Street", "Lakeview Drive", "Station Road"]
CITIES = [("Portland", "OR", "97201"), ("Austin", "TX", "78701"), ("Denver", "CO", "80202"), ("Tampa", "FL", "33602")]
ID_CHARS = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
ACTIVE_AIRPORTS = 10


def day(d: date) -> str:
    return d.isoformat()


# --------------------------------------------------------------------------- database


def build_db(rng: Random) -> dict[str, Any]:
    """Flights, users and reservations in tau2's db.json layout."""
    flights = _flights(rng)
    users = {u["user_id"]: u for u in (_user(rng, i) for i in range(36))}
    reservations: dict[str, Any] = {}
    for user in users.values():
        for _ in range(rng.randint(1, 3)):
            res = _reservation(rng, user, flights, reservations)
            reservations[res["reservation_id"]] = res
            user["reservations"].append(res["reservation_id"])
    return {"flights": flights, "users": users, "reservations": reservations}


def _flights(rng: Random) -> dict[str, Any]:
    airports = [code for code, _ in AIRPORTS[:ACTIVE_AIRPORTS]]
    pairs: set[tuple[str, ...]] = set()
    while len(pairs) < 16:
        a, b = rng.sample(airports, 2)
        pairs.add(tuple(sorted((a, b))))
    flights: dict[str, Any] = {}
    for a, b in sorted(pairs):
        for origin, destination in ((a, b), (b, a)):
            number = f"HAT{len(flights) + 101}"
            flights[number] = _flight(rng, number, origin, destination)
    return flights


def _flight(rng: Random, number: str, origin: str, destination: str) -> dict[str, Any]:
    depart = rng.randint(5, 21) * 60 + rng.choice([0, 30])
    arrive = depart + rng.randint(2, 10) * 30
    base = {"basic_economy": rng.randint(45, 95), "economy": rng.randint(110, 190), "business": rng.randint(240, 480)}
    dates = {}
    d = FIRST_DAY
    while d <= LAST_DAY:
        dates[day(d)] = _date_status(rng, d, depart, arrive, base)
        d += timedelta(days=1)
    return {
        "flight_number": number,
        "origin": origin,
        "destination": destination,
        "scheduled_departure_time_est": _clock(depart),
        "scheduled_arrival_time_est": _clock(arrive),
        "dates": dates,
    }


def _clock(minutes: int) -> str:
    suffix = "+1" if minutes >= 24 * 60 else ""
    minutes %= 24 * 60
    return f"{minutes // 60:02d}:{minutes % 60:02d}:00{suffix}"


def _stamp(d: date, minutes: int) -> str:
    return f"{day(d + timedelta(days=minutes // (24 * 60)))}T{_clock(minutes % (24 * 60))}"


def _date_status(rng: Random, d: date, depart: int, arrive: int, base: dict[str, int]) -> dict[str, Any]:
    if d > TODAY:
        return {
            "status": "available",
            "available_seats": {c: rng.randint(4, 24) for c in ("basic_economy", "economy", "business")},
            "prices": {c: p + rng.randint(-20, 30) for c, p in base.items()},
        }
    if rng.random() < 0.1:
        return {"status": "cancelled"}
    shift = rng.randint(-10, 40)
    if d < TODAY or depart + shift + (arrive - depart) < 15 * 60 - 60:
        return {"status": "landed", "actual_departure_time_est": _stamp(d, depart + shift), "actual_arrival_time_est": _stamp(d, arrive + shift)}
    if depart + shift < 15 * 60:
        return {"status": "flying", "actual_departure_time_est": _stamp(d, depart + shift), "estimated_arrival_time_est": _stamp(d, arrive + shift)}
    if rng.random() < 0.5:
        late = rng.randint(60, 180)
        return {"status": "delayed", "estimated_departure_time_est": _stamp(d, depart + late), "estimated_arrival_time_est": _stamp(d, arrive + late)}
    return {"status": "on time", "estimated_departure_time_est": _stamp(d, depart), "estimated_arrival_time_est": _stamp(d, arrive)}


def _person(rng: Random) -> dict[str, str]:
    dob = date(1950, 1, 1) + timedelta(days=rng.randint(0, 50 * 365))
    return {"first_name": rng.choice(FIRST_NAMES), "last_name": rng.choice(LAST_NAMES), "dob": day(dob)}


def _method_id(rng: Random, source: str) -> str:
    return f"{source}_{rng.randint(1000000, 9999999)}"


def _user(rng: Random, index: int) -> dict[str, Any]:
    me = _person(rng)
    city, state, zip_code = rng.choice(CITIES)
    methods: dict[str, Any] = {}
    for _ in range(rng.randint(1, 2)):
        card = _method_id(rng, "credit_card")
        methods[card] = {"source": "credit_card", "id": card, "brand": rng.choice(["visa", "mastercard"]), "last_four": f"{rng.randint(0, 9999):04d}"}
    for source in ("gift_card", "certificate"):
        for _ in range(rng.choice([0, 1, 1, 2])):
            pid = _method_id(rng, source)
            methods[pid] = {"source": source, "id": pid, "amount": float(rng.randint(4, 60) * 10)}
    return {
        "user_id": f"{me['first_name'].lower()}_{me['last_name'].lower()}_{1000 + index * 37}",
        "name": {"first_name": me["first_name"], "last_name": me["last_name"]},
        "address": {
            "address1": f"{rng.randint(10, 999)} {rng.choice(STREETS)}",
            "address2": rng.choice([None, f"Apt {rng.randint(1, 40)}"]),
            "city": city,
            "country": "USA",
            "state": state,
            "zip": zip_code,
        },
        "email": f"{me['first_name'].lower()}.{me['last_name'].lower()}{index}@example.org",
        "dob": me["dob"],
        "payment_methods": methods,
        "saved_passengers": [_person(rng) for _ in range(rng.randint(0, 2))],
        "membership": rng.choice(["regular", "silver", "gold"]),
        "reservations": [],
    }


def _reservation(rng: Random, user: dict[str, Any], flights: dict[str, Any], existing: dict[str, Any]) -> dict[str, Any]:
    outbound = flights[rng.choice(sorted(flights))]
    back = next(f for f in flights.values() if f["origin"] == outbound["destination"] and f["destination"] == outbound["origin"])
    future = rng.random() < 0.75
    start = TODAY + timedelta(days=rng.randint(1, 9)) if future else TODAY - timedelta(days=rng.randint(0, 5))
    legs = [(outbound, start)]
    if rng.random() < 0.45:
        legs.append((back, start + timedelta(days=rng.randint(1, 4))))
    cabin = rng.choice(["basic_economy", "economy", "business"])
    travellers = [
        dict(p)
        for p in [{"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]}, *user["saved_passengers"]]
    ][: rng.randint(1, 3)]
    res_flights = []
    for flight, d in legs:
        status = flight["dates"][day(d)]
        price = status["prices"][cabin] if status["status"] == "available" else rng.randint(60, 400)
        res_flights.append(
            {
                "flight_number": flight["flight_number"],
                "origin": flight["origin"],
                "destination": flight["destination"],
                "date": day(d),
                "price": price,
            }
        )
    insurance = rng.choice(["yes", "no"])
    free = FREE_BAGS[user["membership"]][cabin] * len(travellers)
    total_bags = rng.randint(0, free + 1)
    nonfree = max(0, total_bags - free)
    total = sum(f["price"] for f in res_flights) * len(travellers) + 30 * len(travellers) * (insurance == "yes") + 50 * nonfree
    payer = rng.choice([m for m in user["payment_methods"].values() if m["source"] != "certificate"])
    created = (
        (datetime_of(TODAY) - timedelta(hours=rng.choice([3, 10, 20, 30, 200, 400])))
        if future
        else datetime_of(start) - timedelta(days=rng.randint(5, 20))
    )
    rid = ""
    while not rid or rid in existing or rid.startswith("HATHA"):
        rid = "".join(rng.choice(ID_CHARS) for _ in range(6))
    return {
        "reservation_id": rid,
        "user_id": user["user_id"],
        "origin": outbound["origin"],
        "destination": outbound["destination"],
        "flight_type": "round_trip" if len(legs) == 2 else "one_way",
        "cabin": cabin,
        "flights": res_flights,
        "passengers": travellers,
        "payment_history": [{"payment_id": payer["id"], "amount": total}],
        "created_at": created.strftime("%Y-%m-%dT%H:%M:%S"),
        "total_baggages": total_bags,
        "nonfree_baggages": nonfree,
        "insurance": insurance,
    }


def datetime_of(d: date) -> Any:
    from datetime import datetime

    return datetime(d.year, d.month, d.day, 15, 0, 0)


# --------------------------------------------------------------------------- tasks


class Composer:
    """Builds tasks over one database; each scenario returns a task dict or None when it does not fit."""

    def __init__(self, rng: Random, db: dict[str, Any]) -> None:
        self.rng, self.db = rng, db
        self.used: set[str] = set()

    # helpers -----------------------------------------------------------

    def _future(self, res: dict[str, Any]) -> bool:
        return all(f["date"] > day(TODAY) for f in res["flights"])

    def _pick_reservation(self, test: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        candidates = [r for rid, r in sorted(self.db["reservations"].items()) if rid not in self.used and test(r)]
        if not candidates:
            return None
        res = self.rng.choice(candidates)
        self.used.add(res["reservation_id"])
        return res

    def _user(self, res: dict[str, Any]) -> dict[str, Any]:
        return self.db["users"][res["user_id"]]

    def _card(self, user: dict[str, Any]) -> dict[str, Any]:
        return next(m for m in user["payment_methods"].values() if m["source"] == "credit_card")

    @staticmethod
    def _who(user: dict[str, Any]) -> str:
        return f"You are {user['name']['first_name']} {user['name']['last_name']}.\nYour user id is {user['user_id']}."

    @staticmethod
    def _task(
        kind: str,
        purpose: str,
        user: dict[str, Any],
        reason: str,
        instructions: str,
        actions: list[tuple[str, dict[str, Any]]],
        info: list[str],
        known: str | None = None,
    ) -> dict[str, Any]:
        return {
            "id": kind,
            "description": {"purpose": purpose, "relevant_policies": None, "notes": None},
            "user_scenario": {
                "persona": None,
                "instructions": {
                    "domain": "airline",
                    "reason_for_call": reason,
                    "known_info": known or Composer._who(user),
                    "unknown_info": None,
                    "task_instructions": instructions,
                },
            },
            "initial_state": None,
            "evaluation_criteria": {
                "actions": [{"action_id": f"{kind}_{i}", "name": name, "arguments": args, "info": None} for i, (name, args) in enumerate(actions)],
                "communicate_info": info,
                "nl_assertions": None,
                "reward_basis": ["DB", "COMMUNICATE"] if info else ["DB"],
            },
        }

    # scenarios ---------------------------------------------------------

    def book(self) -> dict[str, Any] | None:
        user = self.db["users"][self.rng.choice(sorted(self.db["users"]))]
        flight = self.db["flights"][self.rng.choice(sorted(self.db["flights"]))]
        when = day(TODAY + timedelta(days=self.rng.randint(2, 12)))
        cabin = self.rng.choice(["basic_economy", "economy", "business"])
        status = flight["dates"][when]
        people = [{"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]}, *user["saved_passengers"]][
            : self.rng.randint(1, 2)
        ]
        insurance = self.rng.choice(["yes", "no"])
        free = FREE_BAGS[user["membership"]][cabin] * len(people)
        bags = self.rng.randint(0, free + 2)
        nonfree = max(0, bags - free)
        total = status["prices"][cabin] * len(people) + 30 * len(people) * (insurance == "yes") + 50 * nonfree
        payments = self._booking_payments(user, total)
        names = " and ".join(f"{p['first_name']} {p['last_name']} (born {p['dob']})" for p in people)
        args = {
            "user_id": user["user_id"],
            "origin": flight["origin"],
            "destination": flight["destination"],
            "flight_type": "one_way",
            "cabin": cabin,
            "flights": [{"flight_number": flight["flight_number"], "date": when}],
            "passengers": people,
            "payment_methods": payments,
            "total_baggages": bags,
            "nonfree_baggages": nonfree,
            "insurance": insurance,
        }
        pay_text = " then ".join(f"{p['payment_id']} for {p['amount']} dollars" for p in payments)
        instructions = (
            f"Book a one-way {cabin.replace('_', ' ')} trip from {flight['origin']} to {flight['destination']} "
            f"on {when} on flight {flight['flight_number']} for {names}. You want {bags} checked bags and "
            f"{'do' if insurance == 'yes' else 'do not'} want travel insurance. Pay with {pay_text}. "
            f"Ask what the total price is."
        )
        return self._task(
            f"book_{flight['flight_number']}_{when}_{user['user_id']}",
            "Booking with the right bags and payments.",
            user,
            "You want to book a flight.",
            instructions,
            [
                ("get_user_details", {"user_id": user["user_id"]}),
                ("search_direct_flight", {"origin": flight["origin"], "destination": flight["destination"], "date": when}),
                ("book_reservation", args),
            ],
            [str(total)],
        )

    def _booking_payments(self, user: dict[str, Any], total: int) -> list[dict[str, Any]]:
        methods = user["payment_methods"].values()
        certificate = next((m for m in methods if m["source"] == "certificate"), None)
        gift = next((m for m in methods if m["source"] == "gift_card"), None)
        card = self._card(user)
        choice = self.rng.random()
        first = certificate if choice < 0.35 else gift if choice < 0.7 else None
        if first is None:
            return [{"payment_id": card["id"], "amount": total}]
        part = min(int(first["amount"]), total)
        rest = [{"payment_id": card["id"], "amount": total - part}] if total > part else []
        return [{"payment_id": first["id"], "amount": part}, *rest]

    def cancel_allowed(self) -> dict[str, Any] | None:
        def fits(r: dict[str, Any]) -> bool:
            recent = r["created_at"] >= "2024-05-14T15:00:00"
            return self._future(r) and (recent or r["cabin"] == "business" or r["insurance"] == "yes")

        res = self._pick_reservation(fits)
        if res is None:
            return None
        user = self._user(res)
        recent = res["created_at"] >= "2024-05-14T15:00:00"
        reason = (
            "you booked it by mistake yesterday" if recent else "you are ill and cannot travel" if res["insurance"] == "yes" else "your plans changed"
        )
        rid = res["reservation_id"]
        return self._task(
            f"cancel_{rid}",
            "Cancellation the policy allows.",
            user,
            f"You want to cancel reservation {rid} because {reason}.",
            "Confirm the cancellation when asked. Ask how much will be refunded in total.",
            [("get_reservation_details", {"reservation_id": rid}), ("cancel_reservation", {"reservation_id": rid})],
            [str(sum(p["amount"] for p in res["payment_history"]))],
        )

    def cancel_refused(self) -> dict[str, Any] | None:
        def fits(r: dict[str, Any]) -> bool:
            return self._future(r) and r["created_at"] < "2024-05-14T15:00:00" and r["cabin"] != "business" and r["insurance"] == "no"

        res = self._pick_reservation(fits)
        if res is None:
            return None
        user, rid = self._user(res), res["reservation_id"]
        paid = sum(p["amount"] for p in res["payment_history"])
        return self._task(
            f"cancel_refused_{rid}",
            "Cancellation the policy refuses: old booking, no insurance, not business.",
            user,
            f"You want to cancel reservation {rid} because your plans changed, and you want your money back.",
            "If the agent refuses, insist once, then accept and ask how much you paid for the reservation.",
            [("get_reservation_details", {"reservation_id": rid})],
            [str(paid)],
        )

    def cabin_change(self) -> dict[str, Any] | None:
        res = self._pick_reservation(lambda r: self._future(r) and r["cabin"] != "business" and len(r["flights"]) >= 1)
        if res is None:
            return None
        return self._reprice(res, "business", [(f["flight_number"], f["date"]) for f in res["flights"]], "cabin")

    def cabin_downgrade(self) -> dict[str, Any] | None:
        res = self._pick_reservation(
            lambda r: (
                self._future(r) and r["cabin"] == "business" and any(m["source"] == "gift_card" for m in self._user(r)["payment_methods"].values())
            )
        )
        if res is None:
            return None
        return self._reprice(res, "economy", [(f["flight_number"], f["date"]) for f in res["flights"]], "downgrade")

    def date_change(self) -> dict[str, Any] | None:
        res = self._pick_reservation(lambda r: self._future(r) and r["cabin"] != "basic_economy" and r["flight_type"] == "one_way")
        if res is None:
            return None
        leg = res["flights"][0]
        moved = day(date.fromisoformat(leg["date"]) + timedelta(days=self.rng.choice([1, 2])))
        if moved > day(LAST_DAY):
            moved = day(date.fromisoformat(leg["date"]) - timedelta(days=1))
        return self._reprice(res, res["cabin"], [(leg["flight_number"], moved)], "move")

    def _reprice(self, res: dict[str, Any], cabin: str, legs: list[tuple[str, str]], kind: str) -> dict[str, Any]:
        user, rid, travellers = self._user(res), res["reservation_id"], len(res["passengers"])
        new = 0
        for number, when in legs:
            kept = next((f for f in res["flights"] if cabin == res["cabin"] and (f["flight_number"], f["date"]) == (number, when)), None)
            new += kept["price"] if kept else self.db["flights"][number]["dates"][when]["prices"][cabin]
        diff = (new - sum(f["price"] for f in res["flights"])) * travellers
        gift = next((m for m in user["payment_methods"].values() if m["source"] == "gift_card" and m["amount"] >= diff), None)
        method = gift if gift is not None and (diff < 0 or self.rng.random() < 0.5) else self._card(user)
        if kind == "move":
            what = f"move your flight to {legs[0][1]}, same flight number, same cabin"
        else:
            what = f"change the cabin of the whole reservation to {cabin.replace('_', ' ')}"
        direction = "extra cost" if diff >= 0 else "refund"
        return self._task(
            f"{kind}_{rid}",
            f"Flight or cabin change with a price difference ({direction}).",
            user,
            f"You want to {what} on reservation {rid}.",
            f"Use {method['id']} for any payment or refund. Ask what the price difference is.",
            [
                ("get_reservation_details", {"reservation_id": rid}),
                (
                    "update_reservation_flights",
                    {
                        "reservation_id": rid,
                        "cabin": cabin,
                        "flights": [{"flight_number": n, "date": d} for n, d in legs],
                        "payment_id": method["id"],
                    },
                ),
            ],
            [str(abs(diff))],
        )

    def baggage(self) -> dict[str, Any] | None:
        res = self._pick_reservation(self._future)
        if res is None:
            return None
        user, rid = self._user(res), res["reservation_id"]
        free = FREE_BAGS[user["membership"]][res["cabin"]] * len(res["passengers"])
        added = self.rng.randint(1, 3)
        total = res["total_baggages"] + added
        nonfree = max(res["nonfree_baggages"], total - free)
        card = self._card(user)
        return self._task(
            f"bags_{rid}",
            "Adding checked bags; only bags beyond the allowance are paid.",
            user,
            f"You want to add {added} checked bag{'s' if added > 1 else ''} to reservation {rid}.",
            f"Pay with {card['id']} if anything is due. Ask how much you have to pay.",
            [
                ("get_user_details", {"user_id": user["user_id"]}),
                ("get_reservation_details", {"reservation_id": rid}),
                (
                    "update_reservation_baggages",
                    {"reservation_id": rid, "total_baggages": total, "nonfree_baggages": nonfree, "payment_id": card["id"]},
                ),
            ],
            [str(50 * (nonfree - res["nonfree_baggages"]))],
        )

    def passengers(self) -> dict[str, Any] | None:
        res = self._pick_reservation(self._future)
        if res is None:
            return None
        user, rid = self._user(res), res["reservation_id"]
        index = self.rng.randrange(len(res["passengers"]))
        newcomer = self.rng.choice([p for p in (_person(self.rng) for _ in range(3)) if p not in res["passengers"]] or [None])
        if newcomer is None:
            return None
        people = [dict(p) for p in res["passengers"]]
        old = people[index]
        people[index] = newcomer
        return self._task(
            f"passengers_{rid}",
            "Replacing one passenger; the count stays the same.",
            user,
            f"On reservation {rid}, {old['first_name']} {old['last_name']} cannot travel; "
            f"{newcomer['first_name']} {newcomer['last_name']} (born {newcomer['dob']}) will go instead.",
            "Keep everyone else as they are.",
            [("get_reservation_details", {"reservation_id": rid}), ("update_reservation_passengers", {"reservation_id": rid, "passengers": people})],
            [],
        )

    def status_question(self) -> dict[str, Any] | None:
        today = day(TODAY)
        numbers = [n for n, f in sorted(self.db["flights"].items()) if f["dates"][today]["status"] in ("delayed", "flying", "on time", "cancelled")]
        number = self.rng.choice(numbers)
        status = self.db["flights"][number]["dates"][today]["status"]
        user = self.db["users"][self.rng.choice(sorted(self.db["users"]))]
        return self._task(
            f"status_{number}",
            "Read-only: the status of a flight today.",
            user,
            f"You are meeting someone off flight {number} today ({today}) and want to know its status.",
            "You only want the status; do not change anything.",
            [("get_flight_status", {"flight_number": number, "date": today})],
            [status],
        )

    def cheapest_question(self) -> dict[str, Any] | None:
        flight = self.db["flights"][self.rng.choice(sorted(self.db["flights"]))]
        when = day(TODAY + timedelta(days=self.rng.randint(2, 12)))
        same_route = [f for f in self.db["flights"].values() if (f["origin"], f["destination"]) == (flight["origin"], flight["destination"])]
        cheapest = min(f["dates"][when]["prices"]["economy"] for f in same_route)
        user = self.db["users"][self.rng.choice(sorted(self.db["users"]))]
        return self._task(
            f"cheapest_{flight['origin']}_{flight['destination']}_{when}",
            "Read-only: a direct-flight price.",
            user,
            f"You are considering a trip from {flight['origin']} to {flight['destination']} on {when}.",
            "Ask for the lowest economy price of a direct flight that day. Do not book anything.",
            [("search_direct_flight", {"origin": flight["origin"], "destination": flight["destination"], "date": when})],
            [str(cheapest)],
        )

    def balance_question(self) -> dict[str, Any] | None:
        users = [u for _, u in sorted(self.db["users"].items()) if any(m["source"] == "gift_card" for m in u["payment_methods"].values())]
        user = self.rng.choice(users)
        total = sum(m["amount"] for m in user["payment_methods"].values() if m["source"] == "gift_card")
        return self._task(
            f"balance_{user['user_id']}",
            "Read-only: the sum of the user's gift card balances.",
            user,
            "You want to know how much money is left on your gift cards, all together.",
            "Ask for the combined balance of all your gift cards.",
            [("get_user_details", {"user_id": user["user_id"]})],
            [f"{total:g}"],
        )

    def compensation(self) -> dict[str, Any] | None:
        def fits(r: dict[str, Any]) -> bool:
            user = self._user(r)
            eligible = user["membership"] != "regular" or r["insurance"] == "yes" or r["cabin"] == "business"
            return eligible and any(
                self.db["flights"][f["flight_number"]]["dates"].get(f["date"], {}).get("status") == "cancelled" for f in r["flights"]
            )

        res = self._pick_reservation(fits)
        if res is None:
            return None
        user, rid = self._user(res), res["reservation_id"]
        leg = next(f for f in res["flights"] if self.db["flights"][f["flight_number"]]["dates"][f["date"]]["status"] == "cancelled")
        amount = 100 * len(res["passengers"])
        return self._task(
            f"compensation_{rid}",
            "Certificate for a flight the airline cancelled (eligible user).",
            user,
            f"Your flight {leg['flight_number']} on {leg['date']} (reservation {rid}) was cancelled by the airline and you are upset about it.",
            "Ask whether the airline can offer you anything for the trouble, and accept what is offered.",
            [
                ("get_user_details", {"user_id": user["user_id"]}),
                ("get_reservation_details", {"reservation_id": rid}),
                ("get_flight_status", {"flight_number": leg["flight_number"], "date": leg["date"]}),
                ("send_certificate", {"user_id": user["user_id"], "amount": amount}),
            ],
            [str(amount)],
        )


PLAN: list[tuple[str, int]] = [
    ("book", 8),
    ("cancel_allowed", 6),
    ("cancel_refused", 4),
    ("cabin_change", 5),
    ("cabin_downgrade", 2),
    ("date_change", 4),
    ("baggage", 6),
    ("passengers", 5),
    ("status_question", 3),
    ("cheapest_question", 3),
    ("balance_question", 2),
    ("compensation", 3),
]


def compose_tasks(rng: Random, db: dict[str, Any], data: DomainData) -> list[dict[str, Any]]:
    """Every planned scenario that fits the database, replays cleanly and is not passed by doing nothing."""
    composer = Composer(rng, db)
    tasks: list[dict[str, Any]] = []
    seen: set[str] = set()
    for kind, count in PLAN:
        made, attempts = 0, 0
        while made < count and attempts < count * 10:
            attempts += 1
            task = getattr(composer, kind)()
            if task is None or task["id"] in seen or not _acceptable(task, data):
                continue
            seen.add(task["id"])
            tasks.append(task)
            made += 1
    return tasks


def _acceptable(raw: dict[str, Any], data: DomainData) -> bool:
    task = converter.structure(raw, Task)
    gold = replay_gold(data, task)
    if not gold.ok:
        return False
    from bench_kernel import build_environment

    untouched = build_environment(data, task)
    reward = asyncio.run(evaluate(task, [], TerminationReason.USER_STOP, untouched, gold)).reward
    return reward != 1.0


# --------------------------------------------------------------------------- suite


def build_suite(seed: int) -> dict[str, Any]:
    """The database, tasks, splits and policy for a seed, as JSON-ready objects."""
    rng = Random(seed)
    db = build_db(rng)
    data = DomainData(
        name="airline",
        tasks=[],
        policy="",
        agent_toolkit=AirlineTools,
        agent_state=state_from_json(db),
        sync_gold_actions=False,
        reference_hash=ReferenceHasher(),
    )
    tasks = compose_tasks(rng, db, data)
    ids = [t["id"] for t in tasks]
    shuffled = ids[:]
    rng.shuffle(shuffled)
    test = set(shuffled[: len(ids) * 2 // 5])
    splits = {"base": ids, "train": [i for i in ids if i not in test], "test": [i for i in ids if i in test]}
    policy = files("bench_airline").joinpath("policy_source.md").read_text(encoding="utf-8")
    return {"db": db, "tasks": tasks, "splits": splits, "policy": policy}


def suite_files(seed: int) -> dict[str, str]:
    """The text of each file of the suite."""
    suite = build_suite(seed)
    return {
        "db.json": _json(suite["db"]),
        "tasks.json": _json(suite["tasks"]),
        "split_tasks.json": _json(suite["splits"]),
        "policy.md": suite["policy"],
    }


def _json(obj: Any) -> str:
    return json.dumps(obj, indent=2) + "\n"


def write_suite(out_dir: Path, seed: int = DEFAULT_SEED) -> dict[str, Any]:
    """Write the suite's files into out_dir; returns the suite's task ids."""
    out_dir.mkdir(parents=True, exist_ok=True)
    texts = suite_files(seed)
    for name, text in texts.items():
        (out_dir / name).write_text(text, encoding="utf-8")
    return {"tasks": [t["id"] for t in json.loads(texts["tasks.json"])]}


def main(argv: list[str] | None = None) -> None:
    """Command-line entry: python -m bench_airline.generate --seed N --out DIR."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    written = write_suite(args.out, args.seed)
    print(f"wrote {len(written['tasks'])} tasks to {args.out}")


if __name__ == "__main__":
    main()


__all__ = ["DEFAULT_SEED", "AirlineDomain", "build_suite", "main", "suite_files", "write_suite"]
