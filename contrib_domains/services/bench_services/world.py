"""The services world: its domains and intents (SGD-shaped) and the seeded database they act on.

Every intent says what kind of work it is (a search, a booking that completes later, a payment
for a booking, a read or a write) and which tool serves it; the database is built from our own
word lists by `build_db(seed)`, so the shipped `db.json` regenerates identically.
"""

from __future__ import annotations

from random import Random
from typing import Any, Literal

import attrs

Kind = Literal["search", "book", "pay", "read", "write"]


@attrs.frozen(kw_only=True)
class Intent:
    """One intent: its domain, the kind of work, the catalogue service it concerns and how the user words it."""

    name: str
    domain: str
    kind: Kind
    service: str = ""
    core: str = ""
    """ATOD's core content: a short verb phrase ("book hotel")."""


SERVICES = {
    # service: (domain, search intent, book intent, what a unit of quantity is)
    "restaurants": ("Restaurants", "FindRestaurants", "ReserveRestaurant", "guests"),
    "hotels": ("Hotels", "SearchHotel", "ReserveHotel", "nights"),
    "flights": ("Flights", "SearchOnewayFlight", "ReserveOnewayFlight", "passengers"),
    "events": ("Events", "FindEvents", "BuyEventTickets", "tickets"),
    "movies": ("Movies", "FindMovies", "BuyMovieTickets", "tickets"),
    "buses": ("Buses", "FindBus", "BuyBusTicket", "passengers"),
    "trains": ("Trains", "FindTrains", "GetTrainTickets", "passengers"),
    "cars": ("RentalCars", "GetCarsAvailable", "ReserveCar", "days"),
    "homes": ("Homes", "FindHomeByArea", "ScheduleVisit", "visitors"),
    "salons": ("Services", "FindProvider", "BookAppointment", "people"),
    "rides": ("RideSharing", "FindRides", "GetRide", "riders"),
}
ATTRACTIONS = "attractions"


def _intents() -> dict[str, Intent]:
    found = []
    for service, (domain, search, book, _) in SERVICES.items():
        noun = service.rstrip("s") if service != "buses" else "bus"
        found.append(Intent(name=search, domain=domain, kind="search", service=service, core=f"search {service}"))
        found.append(Intent(name=book, domain=domain, kind="book", service=service, core=f"book {noun}"))
    found += [
        Intent(name="FindAttractions", domain="Travel", kind="search", service=ATTRACTIONS, core="search attractions"),
        Intent(name="MakePayment", domain="Payment", kind="pay", core="pay booking"),
        Intent(name="RequestPayment", domain="Payment", kind="write", core="request payment"),
        Intent(name="CheckBalance", domain="Banks", kind="read", core="check account"),
        Intent(name="TransferMoney", domain="Banks", kind="write", core="transfer money"),
        Intent(name="GetWeather", domain="Weather", kind="read", core="check weather"),
        Intent(name="AddAlarm", domain="Alarm", kind="write", core="add reminder"),
        Intent(name="GetAlarms", domain="Alarm", kind="read", core="list reminders"),
        Intent(name="AddEvent", domain="Calendar", kind="write", core="add calendar entry"),
        Intent(name="GetEvents", domain="Calendar", kind="read", core="check calendar"),
    ]
    return {i.name: i for i in found}


INTENTS = _intents()
DOMAINS = sorted({i.domain for i in INTENTS.values()})
BOOK_OF_SEARCH = {i.service: i.name for i in INTENTS.values() if i.kind == "book"}
SEARCH_OF_SERVICE = {i.service: i.name for i in INTENTS.values() if i.kind == "search"}

CITIES = ["Lisbon", "Denver", "Osaka", "Nairobi", "Montreal", "Perth"]
DATES = ["2027-04-09", "2027-04-10", "2027-04-11"]
HOME_CITY = "Boston"
TIMES = ["09:30", "12:00", "14:15", "18:30", "20:00"]
ADJECTIVES = [
    "Amber",
    "Blue Heron",
    "Cedar",
    "Driftwood",
    "Ember",
    "Foxglove",
    "Granite",
    "Harbor",
    "Iris",
    "Juniper",
    "Kestrel",
    "Lantern",
    "Marigold",
    "Northstar",
    "Orchard",
    "Pebble",
    "Quarry",
    "Rosewood",
    "Saffron",
    "Tidewater",
]
NOUNS = {
    "restaurants": ["Kitchen", "Bistro", "Table", "Grill"],
    "hotels": ["Inn", "Suites", "Lodge", "House"],
    "flights": ["Air", "Airways", "Jet", "Wings"],
    "events": ["Quartet live", "Comedy night", "Jazz evening", "Dance showcase"],
    "movies": ["Returns", "at Dawn", "Protocol", "Summer"],
    "buses": ["Coach", "Express", "Liner", "Shuttle"],
    "trains": ["Rail", "Limited", "Sprinter", "Rail Express"],
    "cars": ["compact", "sedan", "hatchback", "SUV"],
    "homes": ["Court flat", "Row townhouse", "Lane studio", "Park loft"],
    "salons": ["Barbers", "Hair Studio", "Cuts", "Salon"],
    "rides": ["Pool", "Ride", "Cab", "XL"],
    ATTRACTIONS: ["Museum", "Gardens", "Lookout", "Market"],
}
PRICE = {
    "restaurants": (15, 60),
    "hotels": (90, 260),
    "flights": (120, 540),
    "events": (25, 120),
    "movies": (9, 18),
    "buses": (12, 55),
    "trains": (20, 90),
    "cars": (35, 95),
    "homes": (0, 0),
    "salons": (25, 80),
    "rides": (8, 40),
    ATTRACTIONS: (0, 30),
}
FORECASTS = ["sunny", "partly cloudy", "light rain", "windy", "overcast", "showers"]
CUSTOMERS = [
    ("cust_01", "Ana Ferreira"),
    ("cust_02", "Ben Okafor"),
    ("cust_03", "Chen Wei"),
    ("cust_04", "Dara Novak"),
    ("cust_05", "Elif Aydin"),
    ("cust_06", "Femi Adeyemi"),
]
CONTACTS = ["Grace", "Hugo", "Imani", "Jonas", "Keiko", "Luis"]
ITEMS_PER_SLOT = 2
"""Catalogue items per (service, city, date)."""
FAILING_EVERY = 7
"""Every 7th item of the catalogue cannot be confirmed: its bookings fail once processed."""


def build_db(seed: int) -> dict[str, dict[str, Any]]:
    """The world's database: catalogue, weather, customers, accounts, and empty tables for what tools create."""
    rng = Random(seed)
    db: dict[str, dict[str, Any]] = {
        name: {}
        for name in ("catalog", "weather", "customers", "accounts", "bookings", "payments", "transfers", "payment_requests", "reminders", "calendar")
    }
    counter = 0
    for service in [*SERVICES, ATTRACTIONS]:
        for city in CITIES:
            for date in DATES:
                for _ in range(ITEMS_PER_SLOT):
                    counter += 1
                    item = _item(rng, service, city, date, counter)
                    db["catalog"][item["item_id"]] = item
    for city in CITIES:
        for date in DATES:
            high = rng.randrange(8, 31)
            db["weather"][f"{city}|{date}"] = {
                "city": city,
                "date": date,
                "forecast": rng.choice(FORECASTS),
                "high_c": high,
                "low_c": high - rng.randrange(4, 11),
            }
    for n, (cid, name) in enumerate(CUSTOMERS):
        accounts = [f"acc_{n + 1:02d}_chk", f"acc_{n + 1:02d}_sav"]
        db["customers"][cid] = {"customer_id": cid, "name": name, "account_ids": accounts}
        for aid in accounts:
            kind = "checking" if aid.endswith("chk") else "savings"
            db["accounts"][aid] = {
                "account_id": aid,
                "customer_id": cid,
                "type": kind,
                "balance": float(rng.randrange(2500, 9000) if kind == "checking" else rng.randrange(500, 4000)),
            }
        db["reminders"][f"R{n + 1:03d}"] = {
            "reminder_id": f"R{n + 1:03d}",
            "customer_id": cid,
            "title": "Water the plants",
            "date": DATES[0],
            "time": "08:00",
        }
    return db


def _item(rng: Random, service: str, city: str, date: str, counter: int) -> dict[str, Any]:
    low, high = PRICE[service]
    name = f"{rng.choice(ADJECTIVES)} {rng.choice(NOUNS[service])}"
    item = {
        "item_id": f"{service[:3].upper()}{counter:04d}",
        "service": service,
        "name": name,
        "city": city,
        "date": date,
        "time": rng.choice(TIMES),
        "price": float(rng.randrange(low, high + 1)),
        "confirm_delay": rng.randrange(2, 5),
        "confirms": counter % FAILING_EVERY != 0,
    }
    if service in ("flights", "buses", "trains"):
        item["origin"] = HOME_CITY
    if service == ATTRACTIONS:
        del item["confirm_delay"], item["confirms"]
    return item
