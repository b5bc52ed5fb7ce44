"""The rules judge's vocabulary: goal families, canonical intents, slot mentions and status cue words (our own lists).

A goal's identity for matching is its canonical intent ("book hotel", "check weather", ...) plus its
slot values. The same classifier names the canonical intent of an annotated gold goal (from its SGD
intent name, else its content), so detected and gold goals are compared in one vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import attrs


@attrs.frozen(kw_only=True)
class Family:
    """What a goal is about: the nouns that name it, and the canonical intent for booking and for searching."""

    name: str
    domain: str
    nouns: str
    book: str
    search: str
    key_slot: str = "place"
    """The slot whose value tells two goals of one family apart (two hotels: their places)."""
    weak: str = ""
    """Nouns that name the family only when no other family is named beside them ('tickets', 'room')."""


FAMILIES: tuple[Family, ...] = (
    Family(
        name="request",
        domain="Payment",
        nouns=r"request payment|payment requests?|requests? (to pay|for (money|payment))",
        book="request payment",
        search="request payment",
        key_slot="amount",
    ),
    Family(
        name="payment",
        domain="Payment",
        nouns=r"pay|pays|paying|paid|payment|settle the bill",
        book="make payment",
        search="make payment",
        key_slot="for",
    ),
    Family(name="transfer", domain="Banks", nouns=r"transfer|send money|wire", book="transfer money", search="transfer money", key_slot="account"),
    Family(name="weather", domain="Weather", nouns=r"weather|forecast|temperature|going to rain", book="check weather", search="check weather"),
    Family(
        name="attraction",
        domain="Travel",
        nouns=r"attractions?|museums?|sightseeing|things to do|landmarks?",
        book="search attractions",
        search="search attractions",
    ),
    Family(
        name="account",
        domain="Banks",
        nouns=r"balance|bank account|checking account|savings account|savings",
        book="check account",
        search="check account",
        key_slot="account",
    ),
    Family(name="reminder", domain="Alarm", nouns=r"reminders?|remind me|alarms?", book="set reminder", search="list reminders", key_slot="time"),
    Family(
        name="calendar",
        domain="Calendar",
        nouns=r"calendar( entry| entries)?|diary|agenda",
        book="add calendar entry",
        search="check calendar",
        key_slot="time",
    ),
    Family(name="ride", domain="RideSharing", nouns=r"rides?|taxis?|cabs?", book="book ride", search="search rides", key_slot="destination"),
    Family(name="car", domain="RentalCars", nouns=r"rental cars?|cars|rent a car|car rentals?|hire a car", book="book car", search="search car"),
    Family(name="bus", domain="Buses", nouns=r"bus|buses|coach tickets?", book="book bus", search="search bus"),
    Family(name="train", domain="Trains", nouns=r"trains?|train tickets?|rail tickets?", book="book train", search="search train"),
    Family(name="home", domain="Homes", nouns=r"home visits?|homes?|house visits?|viewings?", book="book home", search="search home"),
    Family(name="salon", domain="Services", nouns=r"salons?|salon appointments?|haircuts?|hairdressers?", book="book salon", search="search salon"),
    Family(
        name="flight",
        domain="Flights",
        nouns=r"flights?|fly|plane tickets?|airfare",
        book="book flight",
        search="search flight",
        key_slot="destination",
    ),
    Family(
        name="hotel",
        domain="Hotels",
        nouns=r"hotels?|hotel room|accommodation|place to stay",
        book="book hotel",
        search="search hotel",
        weak=r"rooms?",
    ),
    Family(
        name="restaurant",
        domain="Restaurants",
        nouns=r"restaurants?|dinner reservation|somewhere to eat",
        book="book restaurant",
        search="search restaurant",
        weak=r"table",
    ),
    Family(name="movie", domain="Movies", nouns=r"movies?|films?|cinema", book="book movie", search="search movies"),
    Family(name="event", domain="Events", nouns=r"concerts?|events?|shows?", book="book ticket", search="search events", weak=r"tickets?|games?"),
)
BY_NAME: Mapping[str, Family] = {f.name: f for f in FAMILIES}
_NOUN_RES = tuple((f, re.compile(rf"\b(?:{f.nouns})\b", re.I)) for f in FAMILIES)
_WEAK_RES = tuple((f, re.compile(rf"\b(?:{f.weak})\b", re.I)) for f in FAMILIES if f.weak)
INTENT_FAMILY: Mapping[str, Family] = {**{f.book: f for f in FAMILIES}, **{f.search: f for f in FAMILIES}}

SEARCH_WORDS = re.compile(
    r"\b(find|found|search|look(ing)? (for|up)|recommend|suggest|any good|what are|show me|options for|list|"
    r"which|what('s| is) (in|on)|do i have)\b",
    re.I,
)
BOOK_WORDS = re.compile(r"\b(book|reserve|reservation|buy|purchase|get me|order|add|create|schedule)\b", re.I)

# SGD-style intent names of annotated goals (ATOD's data, generated tasks) -> our canonical intents.
SGD_INTENTS: Mapping[str, str] = {
    "reservehotel": "book hotel",
    "bookhouse": "book hotel",
    "searchhotel": "search hotel",
    "searchhouse": "search hotel",
    "reserveonewayflight": "book flight",
    "reserveroundtripflights": "book flight",
    "bookflight": "book flight",
    "searchonewayflight": "search flight",
    "searchroundtripflights": "search flight",
    "searchflight": "search flight",
    "reserverestaurant": "book restaurant",
    "findrestaurants": "search restaurant",
    "searchrestaurant": "search restaurant",
    "buyeventtickets": "book ticket",
    "findevents": "search events",
    "geteventdates": "search events",
    "findattractions": "search attractions",
    "getweather": "check weather",
    "checkbalance": "check account",
    "transfermoney": "transfer money",
    "makepayment": "make payment",
    "requestpayment": "request payment",
    "pay": "make payment",
    "getride": "book ride",
    "bookride": "book ride",
    "findrides": "search rides",
    "reservecar": "book car",
    "getcarsavailable": "search car",
    "buymovietickets": "book movie",
    "findmovies": "search movies",
    "gettimesformovie": "search movies",
    "addalarm": "set reminder",
    "setreminder": "set reminder",
    "addreminder": "set reminder",
    "getalarms": "list reminders",
    "addevent": "add calendar entry",
    "getevents": "check calendar",
    "findbus": "search bus",
    "buybusticket": "book bus",
    "findtrains": "search train",
    "gettraintickets": "book train",
    "findhomebyarea": "search home",
    "schedulevisit": "book home",
    "findprovider": "search salon",
    "bookappointment": "book salon",
}

STATUS_WORDS: Mapping[str, str] = {
    "confirmed": "completed",
    "complete": "completed",
    "completed": "completed",
    "success": "completed",
    "succeeded": "completed",
    "done": "completed",
    "paid": "completed",
    "booked": "completed",
    "reserved": "completed",
    "pending": "pending",
    "processing": "pending",
    "awaiting_confirmation": "pending",
    "in_progress": "pending",
    "failed": "failed",
    "declined": "failed",
    "rejected": "failed",
    "cancelled": "abandoned",
    "canceled": "abandoned",
    "open": "open",
    "abandoned": "abandoned",
}

_FAILED = re.compile(
    r"\b(fail(ed|s)?|unfortunately|could ?n[o']?t|can ?n[o']?t|cannot|unable|declined|rejected|sold out|"
    r"no availability|not available|unavailable|did not go through|didn't go through)\b",
    re.I,
)
_PENDING = re.compile(
    r"\b(pending|awaiting|waiting (for|on)|in progress|processing|submitted|placed (a|the|your) (request|hold)|"
    r"request (has been|was) (sent|placed|submitted)|should hear back|will (let you know|confirm))\b",
    re.I,
)
_COMPLETED = re.compile(
    r"\b(confirmed|is booked|has been booked|(i'?ve|i have|we'?ve) booked|reserved|completed?|done|"
    r"successful(ly)?|went through|(has been|was) paid|payment (is|was) (made|sent)|all set|is set|"
    r"has been (sent|transferred|set))\b",
    re.I,
)
_INFORMED = re.compile(
    r"\b(found|here (are|is)|there (are|is)|the forecast|it will be|it'?ll be|balance is|you have|"
    r"options? (are|is)|i recommend|is showing)\b",
    re.I,
)
_ABANDON = re.compile(
    r"\b(never ?mind|forget (about )?(it|that|the)|cancel|do ?n[o']?t need|no longer need|skip (it|that|the)|"
    r"drop (it|that|the)|not interested|scratch that|give up on)\b",
    re.I,
)
_STOP = frozenset(
    {
        "a",
        "an",
        "the",
        "my",
        "me",
        "i",
        "to",
        "for",
        "of",
        "in",
        "on",
        "at",
        "and",
        "or",
        "is",
        "are",
        "be",
        "it",
        "this",
        "that",
        "please",
        "would",
        "like",
        "want",
        "need",
        "can",
        "could",
        "you",
        "your",
        "we",
        "our",
        "some",
        "also",
        "then",
        "with",
        "from",
        "there",
    }
)

_MONTHS = "january|february|march|april|may|june|july|august|september|october|november|december"
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_NUMBERS = {"one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7", "eight": "8"}
_DATE = re.compile(
    rf"\b(\d{{4}}-\d{{2}}-\d{{2}}|today|tonight|tomorrow|next (week|{_WEEKDAYS})|(this )?({_WEEKDAYS})|"
    rf"(({_MONTHS}) \d{{1,2}}(st|nd|rd|th)?)|(\d{{1,2}}(st|nd|rd|th)? of ({_MONTHS})))\b",
    re.I,
)
_TIME = re.compile(r"\b(\d{1,2}(:\d{2})? ?(am|pm)|\d{1,2}:\d{2}|noon|midnight)\b", re.I)
_PEOPLE = re.compile(r"\bfor (\d+|one|two|three|four|five|six|seven|eight)( (people|persons|guests|adults|of us))?\b", re.I)
_TICKETS = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight) (tickets|seats|guests|people|nights)\b", re.I)
_AMOUNT = re.compile(r"(\$ ?\d[\d,]*(?:\.\d+)?|\b\d+(?:[.,]\d+)? (?:dollars|euros|usd)|\b\d+\.\d{2}\b)", re.I)
_ACCOUNT = re.compile(r"\baccounts? ([a-z]*[_\d][\w-]*)", re.I)
_REFERENCE = re.compile(r"\(([A-Z]{2,5}-?\d{2,})\)")
_QUOTED = re.compile(r'"([^"]+)"|\u201c([^\u201d]+)\u201d')
_PLACE = re.compile(r"\b(in|at|near|to|from)\s+((?:[A-Z][\w'-]+)(?:\s+[A-Z][\w'-]+)*)")
_NOT_PLACES = frozenset(m.capitalize() for m in (_MONTHS + "|" + _WEEKDAYS).split("|")) | {"I"}
_NAMED = re.compile(r"\b(?:the|my|that|this)\s+((?:[A-Z][\w'-]+)(?:\s+[A-Z][\w'-]+)*)\s+[a-z]")
_FOR_OBJECT = re.compile(r"\bfor (?:the|my|that|this|our) (\w+(?: \w+)?)", re.I)
_SPLIT = re.compile(r"(?<=[.!?;])\s+|\n+")
_PART = re.compile(r",?\s+(?:and|also|plus|and then|then|as well as)\s+|,\s+", re.I)


def words(text: str) -> list[str]:
    """Lower-case content words (stop words left out)."""
    return [w for w in re.findall(r"[a-z0-9$_]+", text.lower()) if w not in _STOP]


def clauses(text: str) -> list[str]:
    """The sentences of an utterance."""
    return [c.strip() for c in _SPLIT.split(text or "") if c.strip()]


def unquoted(text: str) -> str:
    """The text with its quoted names and titles blanked out (a restaurant called "Harbor Table" names no family)."""
    return _QUOTED.sub(lambda m: '""', text or "")


def quoted(text: str) -> list[str]:
    """The quoted names and titles of a text, lower-case."""
    return [_normal(m.group(1) or m.group(2)) for m in _QUOTED.finditer(text or "")]


def families_in(text: str) -> list[tuple[int, Family]]:
    """Families named in a text, by position; a payment's object ('pay for the hotel') is not a family of its own."""
    text = unquoted(text)
    found = _spans(text, _NOUN_RES)
    if not found:
        found = _spans(text, _WEAK_RES)
    if any(f.name in ("payment", "transfer") for _, f in found):
        objects = {BY_NAME[o] for o in (object_family(text),) if o}
        found = [(p, f) for p, f in found if f not in objects]
    seen: set[str] = set()
    unique = []
    for position, family in found:
        if family.name not in seen:
            seen.add(family.name)
            unique.append((position, family))
    return unique


def _spans(text: str, patterns: tuple[tuple[Family, re.Pattern[str]], ...]) -> list[tuple[int, Family]]:
    """Family mentions by position; a mention inside a longer one ('tickets' in 'plane tickets') is dropped."""
    hits = sorted(((m.start(), m.end(), f) for f, rx in patterns for m in rx.finditer(text)), key=lambda h: (h[0], h[0] - h[1]))
    kept: list[tuple[int, int, Family]] = []
    for start, end, family in hits:
        if not kept or start >= kept[-1][1]:
            kept.append((start, end, family))
    return [(start, family) for start, _, family in kept]


def object_family(text: str) -> str | None:
    """What a payment is for: the family named after 'for the ...' (None when it names none)."""
    for match in _FOR_OBJECT.finditer(text):
        for family, rx in (*_NOUN_RES, *_WEAK_RES):
            if family.name not in ("payment", "transfer") and rx.search(match.group(1)):
                return family.name
    return None


def parts(sentence: str) -> list[str]:
    """A sentence cut at commas and joining words ('and', 'also', 'then')."""
    return [p for p in _PART.split(sentence) if p and p.strip()]


def segments(sentence: str) -> list[tuple[Family, str]]:
    """A sentence cut into one piece per family it names; pieces naming none go with the previous family."""
    out: list[tuple[Family, str]] = []
    pending = ""
    for part in parts(sentence):
        named = families_in(part)
        if not named:
            if out:
                out[-1] = (out[-1][0], f"{out[-1][1]}, {part}")
            else:
                pending = f"{pending} {part}".strip()
            continue
        for i, (_, family) in enumerate(named):
            text = f"{pending} {part}".strip() if i == 0 else part
            out.append((family, text))
        pending = ""
    return out


def intent_of(family: Family, text: str) -> str:
    """The canonical intent of a family mention: searching or booking, from the words around it."""
    if family.book == family.search:
        return family.book
    text = unquoted(text)
    if SEARCH_WORDS.search(text) and not BOOK_WORDS.search(text):
        return family.search
    return family.book


def slots_in(text: str, family: Family | None = None) -> dict[str, str]:
    """Slot values mentioned in a text: place / origin / destination, date, time, people, amount, payment object."""
    slots: dict[str, str] = {}
    names = quoted(text)
    if names:
        slots["name"] = names[0]
    reference = _REFERENCE.search(text)
    if reference:
        slots["item"] = reference.group(1).lower()
    text = unquoted(text)
    account = _ACCOUNT.search(text)
    if account:
        slots["account"] = account.group(1).lower()
    for prep, place in _PLACE.findall(text):
        place = " ".join(w for w in place.split() if w not in _NOT_PLACES)
        if not place:
            continue
        key = {"from": "origin", "to": "destination"}.get(prep.lower(), "place")
        slots.setdefault(key, place.lower())
    named = _NAMED.search(text)
    if named and "place" not in slots and named.group(1) not in _NOT_PLACES:
        slots["place"] = named.group(1).lower()  # 'the Florence hotel'
    if family is not None and family.key_slot == "place" and "place" not in slots and "destination" in slots:
        slots["place"] = slots.pop("destination")
    for key, rx in (("date", _DATE), ("time", _TIME), ("amount", _AMOUNT)):
        match = rx.search(text)
        if match:
            slots[key] = amount(match.group(1)) if key == "amount" else _normal(match.group(1))
    people = _PEOPLE.search(text) or _TICKETS.search(text)
    if people:
        slots["people"] = _NUMBERS.get(people.group(1).lower(), people.group(1))
    obj = object_family(text) if family is not None and family.name in ("payment", "transfer") else None
    if obj:
        slots["for"] = obj
    return slots


def amount(value: object) -> str:
    """An amount in one spelling: '$2,400', '2400 dollars' and 2400.0 are all '2400.00'."""
    number = re.match(r"\d+(\.\d+)?", str(value).replace(",", "").replace("$", "").strip())
    return f"{float(number.group(0)):.2f}" if number else _normal(str(value))


def _normal(value: str) -> str:
    return re.sub(r"\s+", " ", value.strip().lower()).replace("$ ", "$")


def core_content(intent: str, slots: Mapping[str, str]) -> str:
    """The canonical short form of a goal: its intent and, when known, the value that tells it apart."""
    family = INTENT_FAMILY.get(intent)
    key = slots.get(family.key_slot) if family else None
    if family is not None and family.key_slot == "for" and key is not None and key in BY_NAME:
        key = BY_NAME[key].book.split()[-1]  # what a payment is for, in the words of that booking's label ('ticket')
    # One token for the distinguishing value, so that 'da enzo' weighs as one word against the intent's two.
    return f"{intent} {key.replace(' ', '_')}" if key else intent


def user_status(text: str) -> str | None:
    """What a user's words do to a goal: abandon it, or nothing explicit (a request or a mention)."""
    return "abandoned" if _ABANDON.search(text) else None


def system_status(text: str, intent: str) -> str | None:
    """What a system's words say of a goal: failed, pending, completed (an answer completes a search), or nothing."""
    if _FAILED.search(text):
        return "failed"
    if _PENDING.search(text):
        return "pending"
    if _COMPLETED.search(text):
        return "completed"
    family = INTENT_FAMILY.get(intent)
    informational = family is not None and (intent == family.search or intent.startswith("check"))
    if informational and _INFORMED.search(text):
        return "completed"
    return None


def tool_status(content: str) -> str | None:
    """A status word in a tool result ('"status": "pending"', 'confirmed'), mapped to a goal status."""
    match = re.search(r'"?status"?\s*[:=]\s*"?([A-Za-z_ ]+)"?', content or "")
    if not match:
        return None
    return STATUS_WORDS.get(match.group(1).strip().lower().replace(" ", "_"))


def canonical_intent(domain: str, intent: str, content: str = "", core: str = "") -> str:
    """The canonical intent of a goal described by another vocabulary (SGD names, free text)."""
    known = SGD_INTENTS.get(re.sub(r"[^a-z]", "", (intent or "").lower()))
    if known:
        return known
    for label in (intent, core):
        known = next((k for k in sorted(INTENT_FAMILY, key=len, reverse=True) if label and label.lower().startswith(k)), None)
        if known:
            return known  # one of our own labels, possibly with its distinguishing value ('book hotel paris')
    for text in (core, content, f"{domain} {intent}"):
        found = segments(text) if text else []
        if found:
            family, piece = found[0]
            return intent_of(family, piece)
    return (intent or core or content).strip().lower()


PREREQUISITES: Mapping[str, str] = {"transfer money": "check account"}
"""Intents that wait for another one of the same conversation beside bookings (a transfer waits for its balance check)."""


def prerequisite(intent: str, slots: Mapping[str, str], other: str, other_slots: Mapping[str, str]) -> bool:
    """True when a goal (intent, slots) needs the other goal done first.

    A booking needs the search of its service (adding a reminder does not need listing them), a payment for a
    family needs that family's booking, a transfer needs the balance check of its account; values both goals give
    must agree.
    """
    family, theirs = INTENT_FAMILY.get(intent), INTENT_FAMILY.get(other)
    if family is None or theirs is None:
        return False
    if family.name == "payment":
        return slots.get("for") == theirs.name and other == theirs.book
    if family is theirs and family.book != family.search and family.book.startswith("book"):
        return intent == family.book and other == family.search and _agree(slots, other_slots, ("place", "date"))
    return PREREQUISITES.get(intent) == other and _agree(slots, other_slots, ("account",))


def _agree(slots: Mapping[str, str], other: Mapping[str, str], keys: tuple[str, ...]) -> bool:
    return all(slots.get(k) is None or other.get(k) is None or slots[k] == other[k] for k in keys)
