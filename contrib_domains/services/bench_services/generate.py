"""Our own multi-goal suite, generated from a seed (ATOD's recipe on our own data, no SGD download).

1. A goal co-occurrence graph over our intents, counted from hand-written journeys (which intents a
   customer pursues together, in our words: a trip, a night out, paying bills).
2. Stratified random walks on it: the start intents cycle over the domains, each step goes to an
   unvisited neighbour weighted by co-occurrence (a random unvisited intent when there is none).
3. Goals with slot values from the database (one customer, one city and date per dialogue), and
   dependency annotation: a booking depends on the search of its service, a transfer on the balance
   check, and payments are added for bookings (a payment depends on its booking).
4. ATOD's complexity classes: medium = 2-8 goals, at most 2 dependencies, no proactivity; complex =
   7+ goals, at least 2 dependencies, proactivity. A walk that misses its class is drawn again.
5. The user's plan: goals raised in order; a booking is left pending while the user raises the next
   goal, then resumed (medium: the user asks whether it went through; complex: the agent must follow
   up on its own, so the status checks come with the user's next request); payments follow their
   booking; some dialogues mention a goal early and abandon it later.
6. Gold actions per move, found by running the real tools: status checks are repeated until the
   booking is processed (a gold replay has no conversation steps, only tool calls, to move the clock).

Every task has a booking left pending while another goal is raised (asynchronous execution and
interleaving, as in both of ATOD's classes), so the do-nothing agent fails it; a draw whose gold
actions fail on the real tools is drawn again, and the suite is written only once the kernel's gold
replay accepts every task and finds none the do-nothing agent passes (`verify_suite`).
`bench services generate --out DIR` (or `python -m bench_services.generate`) writes db.json and tasks.json.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter
from collections.abc import Callable
from itertools import combinations
from pathlib import Path
from random import Random
from typing import Any

import attrs
from bench_atod import Goal, GoalsExtension

from bench_kernel import ConfigError, DomainData, State, TaskVocabulary, build_environment, converter, replay_gold, structure_tasks

from .domain import prepared
from .plan import Move, PlanExtension, UserPlan, action_id
from .tools import ServicesTools
from .tracking import advance
from .world import (
    ATTRACTIONS,
    BOOK_OF_SEARCH,
    CONTACTS,
    CUSTOMERS,
    DATES,
    INTENTS,
    SEARCH_OF_SERVICE,
    SERVICES,
    build_db,
)

DEFAULT_SEED = 12
DEFAULT_COUNTS = {"medium": 16, "complex": 12}
MAX_DRAWS = 200
MAX_STATUS_CHECKS = 12

# Which intents go together, in our own words of everyday errands (the graph is counted from these).
JOURNEYS = [
    ["SearchOnewayFlight", "ReserveOnewayFlight", "SearchHotel", "ReserveHotel", "GetWeather"],
    ["SearchHotel", "ReserveHotel", "FindRestaurants", "ReserveRestaurant", "FindAttractions"],
    ["FindRestaurants", "ReserveRestaurant", "GetRide", "FindRides", "AddAlarm"],
    ["FindEvents", "BuyEventTickets", "FindRestaurants", "ReserveRestaurant", "GetRide"],
    ["FindMovies", "BuyMovieTickets", "FindRestaurants", "ReserveRestaurant", "AddEvent"],
    ["CheckBalance", "TransferMoney", "RequestPayment", "GetAlarms"],
    ["CheckBalance", "BuyEventTickets", "FindEvents", "AddEvent", "GetEvents"],
    ["FindTrains", "GetTrainTickets", "SearchHotel", "ReserveHotel", "GetWeather", "FindAttractions"],
    ["FindBus", "BuyBusTicket", "FindAttractions", "GetWeather", "AddAlarm"],
    ["GetCarsAvailable", "ReserveCar", "SearchHotel", "ReserveHotel", "GetWeather"],
    ["FindHomeByArea", "ScheduleVisit", "GetCarsAvailable", "ReserveCar", "AddEvent", "GetEvents"],
    ["FindProvider", "BookAppointment", "AddEvent", "GetEvents", "AddAlarm"],
    ["FindProvider", "BookAppointment", "CheckBalance", "TransferMoney"],
    ["SearchOnewayFlight", "ReserveOnewayFlight", "GetCarsAvailable", "ReserveCar", "FindHomeByArea", "ScheduleVisit"],
    ["GetWeather", "FindEvents", "BuyEventTickets", "FindRides", "GetRide"],
    ["RequestPayment", "FindRestaurants", "ReserveRestaurant", "CheckBalance"],
    ["GetAlarms", "AddAlarm", "GetEvents", "AddEvent"],
    ["FindAttractions", "FindEvents", "FindMovies", "BuyMovieTickets", "GetRide"],
    ["SearchOnewayFlight", "ReserveOnewayFlight", "FindTrains", "GetTrainTickets", "GetWeather"],
    ["FindBus", "BuyBusTicket", "FindRides", "GetRide", "CheckBalance"],
    ["TransferMoney", "CheckBalance", "GetEvents", "FindProvider", "BookAppointment"],
    ["SearchHotel", "ReserveHotel", "FindMovies", "BuyMovieTickets", "GetAlarms"],
    ["FindHomeByArea", "ScheduleVisit", "RequestPayment", "AddAlarm"],
    ["GetCarsAvailable", "ReserveCar", "FindEvents", "BuyEventTickets", "TransferMoney"],
]
LABEL = {
    "restaurants": "restaurants",
    "hotels": "hotels",
    "flights": "flights",
    "events": "events",
    "movies": "movie showings",
    "buses": "buses",
    "trains": "trains",
    "cars": "rental cars",
    "homes": "homes open for visits",
    "salons": "salon appointments",
    "rides": "rides",
    ATTRACTIONS: "attractions",
}
UNIT = {service: unit for service, (_, _, _, unit) in SERVICES.items()}
NOUN = {
    "restaurants": "restaurant",
    "hotels": "hotel",
    "flights": "flight",
    "events": "event",
    "movies": "movie",
    "buses": "bus",
    "trains": "train",
    "cars": "rental car",
    "homes": "home visit",
    "salons": "salon",
    "rides": "ride",
}
"""What the user calls a booking of each service; offers and titles are quoted, so their names never read as nouns."""
QUANTITY = {"hotels": (1, 3), "cars": (1, 3), "flights": (1, 2), "trains": (1, 2), "homes": (1, 2)}
REMINDERS = ["pack the charger", "call the landlord", "renew the passport", "pick up the dry cleaning", "book a dentist check-up"]
ENTRIES = ["Lunch with Grace", "Team offsite", "Piano lesson", "Parents' evening", "Gym with Hugo"]


def co_occurrence_graph(journeys: list[list[str]] = JOURNEYS) -> dict[str, dict[str, int]]:
    """Intent -> {neighbour: number of journeys holding both}, over every intent but payments."""
    counts: Counter[tuple[str, str]] = Counter()
    for journey in journeys:
        for a, b in combinations(sorted(set(journey)), 2):
            counts[a, b] += 1
    graph: dict[str, dict[str, int]] = {i: {} for i in INTENTS if INTENTS[i].kind != "pay"}
    for (a, b), n in counts.items():
        graph[a][b] = graph[b][a] = n
    return graph


def random_walk(rng: Random, graph: dict[str, dict[str, int]], start: str, length: int) -> list[str]:
    """A walk of distinct intents: weighted unvisited neighbours, a random unvisited intent when stuck."""
    path = [start]
    while len(path) < min(length, len(graph)):
        options = {n: w for n, w in sorted(graph[path[-1]].items()) if n not in path}
        if options:
            path.append(rng.choices(list(options), weights=list(options.values()))[0])
        else:
            path.append(rng.choice(sorted(set(graph) - set(path))))
    return path


def walk_domains(graph: dict[str, dict[str, int]]) -> list[str]:
    """The strata of start intents: every domain with an intent in the graph."""
    return sorted({INTENTS[i].domain for i in graph})


# --------------------------------------------------------------------------- goals


@attrs.define
class Draft:
    """A goal being built: its intent, values, wording, and the steps that serve it."""

    key: str
    intent: str
    values: dict[str, Any]
    content: str
    raise_line: str
    dependencies: list[str] = attrs.field(factory=list)
    calls: Callable[[Sim], list[tuple[str, dict[str, Any]]]] | None = None
    follow_line: str = ""
    abandoned: bool = False


@attrs.define
class Context:
    """What one dialogue shares: the customer, the city and date, the database."""

    rng: Random
    db: dict[str, dict[str, Any]]
    customer: str
    name: str
    checking: str
    savings: str
    city: str
    date: str


def draft_goal(ctx: Context, intent_name: str, key: str, searched: set[str]) -> Draft:
    """A goal for an intent, with slot values from the database and our wording."""
    intent = INTENTS[intent_name]
    city, date, cid = ctx.city, ctx.date, ctx.customer
    if intent.kind == "search":
        label = LABEL[intent.service]
        values = {"service": intent.service, "city": city, "date": date}
        return Draft(
            key,
            intent_name,
            values,
            f"find {label} in {city} on {date}",
            f"I'm looking for {label} in {city} on {date}. What is there?",
            calls=lambda sim: [("search", dict(values))],
        )
    if intent.kind == "book":
        return _book_draft(ctx, intent_name, key, intent.service in searched)
    return _other_draft(ctx, intent_name, key, cid)


def _book_draft(ctx: Context, intent_name: str, key: str, searched: bool) -> Draft:
    service = INTENTS[intent_name].service
    items = [i for i in ctx.db["catalog"].values() if i["service"] == service and i["city"] == ctx.city and i["date"] == ctx.date and i["confirms"]]
    item = ctx.rng.choice(sorted(items, key=lambda i: i["item_id"]))
    low, high = QUANTITY.get(service, (1, 4))
    quantity = ctx.rng.randint(low, high)
    values = {"item_id": item["item_id"], "name": item["name"], "city": ctx.city, "date": ctx.date, "quantity": quantity, "customer_id": ctx.customer}
    what = f'the {NOUN[service]} "{item["name"]}" ({item["item_id"]}) in {ctx.city} on {ctx.date} for {quantity} {UNIT[service]}'
    book = ("book", {"item_id": item["item_id"], "quantity": quantity, "customer_id": ctx.customer})
    search = ("search", {"service": service, "city": ctx.city, "date": ctx.date})
    return Draft(
        key,
        intent_name,
        values,
        f"book {what}",
        f"Please book {what}.",
        calls=lambda sim: [book] if searched else [search, book],
        follow_line=f'Has my {NOUN[service]} booking for "{item["name"]}" gone through yet?',
    )


def _other_draft(ctx: Context, intent_name: str, key: str, cid: str) -> Draft:
    rng = ctx.rng
    if intent_name == "CheckBalance":
        values: dict[str, Any] = {"account_id": ctx.checking}
        return Draft(
            key,
            intent_name,
            values,
            f"check the balance of account {ctx.checking}",
            f"What is the balance of my account {ctx.checking}?",
            calls=lambda sim: [("get_balance", dict(values))],
        )
    if intent_name == "TransferMoney":
        amount = float(rng.randrange(50, 400, 10))
        values = {"from_account": ctx.checking, "to_account": ctx.savings, "amount": amount}
        return Draft(
            key,
            intent_name,
            values,
            f"transfer {amount:.2f} from account {ctx.checking} to account {ctx.savings}",
            f"Please transfer {amount:.2f} from my account {ctx.checking} to my account {ctx.savings}.",
            calls=lambda sim: [("transfer_money", dict(values))],
        )
    if intent_name == "RequestPayment":
        contact, amount = rng.choice(CONTACTS), float(rng.randrange(10, 120, 5))
        values = {"customer_id": cid, "contact": contact, "amount": amount}
        return Draft(
            key,
            intent_name,
            values,
            f"send {contact} a request to pay back {amount:.2f}",
            f"Please send {contact} a request to pay me {amount:.2f}.",
            calls=lambda sim: [("request_payment", dict(values))],
        )
    if intent_name == "GetWeather":
        values = {"city": ctx.city, "date": ctx.date}
        return Draft(
            key,
            intent_name,
            values,
            f"check the weather in {ctx.city} on {ctx.date}",
            f"What is the forecast for {ctx.city} on {ctx.date}?",
            calls=lambda sim: [("get_weather", dict(values))],
        )
    if intent_name in ("AddAlarm", "AddEvent"):
        title = rng.choice(REMINDERS if intent_name == "AddAlarm" else ENTRIES)
        time = f"{rng.randrange(7, 21):02d}:{rng.choice(['00', '30'])}"
        values = {"customer_id": cid, "title": title, "date": ctx.date, "time": time}
        tool, where = ("add_reminder", "a reminder") if intent_name == "AddAlarm" else ("add_calendar_entry", "a calendar entry")
        return Draft(
            key,
            intent_name,
            values,
            f'add {where} "{title}" on {ctx.date} at {time}',
            f'Please add {where} "{title}" on {ctx.date} at {time}.',
            calls=lambda sim: [(tool, dict(values))],
        )
    if intent_name == "GetAlarms":
        values = {"customer_id": cid}
        return Draft(
            key, intent_name, values, "list my reminders", "Which reminders do I have set?", calls=lambda sim: [("list_reminders", dict(values))]
        )
    if intent_name == "GetEvents":
        values = {"customer_id": cid, "date": ctx.date}
        return Draft(
            key,
            intent_name,
            values,
            f"check my calendar on {ctx.date}",
            f"What is in my calendar on {ctx.date}?",
            calls=lambda sim: [("get_calendar", dict(values))],
        )
    raise ConfigError(f"services generator: no goal template for intent {intent_name!r}")


def payment_draft(ctx: Context, booking: Draft, key: str) -> Draft:
    """Paying for a booking from the customer's checking account (depends on the booking)."""
    name, noun = booking.values["name"], NOUN[INTENTS[booking.intent].service]
    values = {"item_id": booking.values["item_id"], "account_id": ctx.checking, "customer_id": ctx.customer}
    return Draft(
        key,
        "MakePayment",
        values,
        f'pay for the {noun} booking "{name}" from account {ctx.checking}',
        f'Please pay for the {noun} booking "{name}" from my account {ctx.checking}.',
        dependencies=[booking.key],
        calls=lambda sim: [("pay_booking", {"booking_id": sim.bookings[booking.key], "account_id": ctx.checking})],
    )


# --------------------------------------------------------------------------- the gold, by running the tools


@attrs.define
class Sim:
    """The real tools on a fresh database, run as the gold replay will run them."""

    tools: ServicesTools
    bookings: dict[str, str] = attrs.field(factory=dict)

    def run(self, draft_key: str, name: str, arguments: dict[str, Any]) -> Any:
        """One call; a failure means the draft is unsound."""
        result = self.tools.call_tool(name, arguments)
        if name == "book":
            self.bookings[draft_key] = result["booking_id"]
        return result


def status_checks(sim: Sim, key: str) -> list[tuple[str, dict[str, Any]]]:
    """get_booking_status until the booking is processed (each call moves the clock)."""
    calls = []
    for _ in range(MAX_STATUS_CHECKS):
        arguments = {"booking_id": sim.bookings[key]}
        calls.append(("get_booking_status", arguments))
        if sim.run(key, "get_booking_status", arguments)["status"] != "pending":
            return calls
    raise ConfigError(f"services generator: booking of {key} still pending after {MAX_STATUS_CHECKS} checks")


# --------------------------------------------------------------------------- one task


@attrs.frozen
class Recipe:
    """What one task is drawn for: its class, index and the seed."""

    complexity: str
    index: int
    seed: int

    def rng(self, attempt: int) -> Random:
        """A generator of its own, from a hash of the recipe and the attempt."""
        digest = hashlib.sha256(f"services:{self.seed}:{self.complexity}:{self.index}:{attempt}".encode()).hexdigest()
        return Random(int(digest[:16], 16))


def make_task(recipe: Recipe, db: dict[str, dict[str, Any]], graph: dict[str, dict[str, int]]) -> dict[str, Any]:
    """A task of the recipe's class (drawn again until it meets ATOD's criteria and its gold runs)."""
    for attempt in range(MAX_DRAWS):
        rng = recipe.rng(attempt)
        task = _draw(recipe, rng, db, graph)
        if task is not None:
            return task
    raise ConfigError(f"services generator: no {recipe.complexity} task found for index {recipe.index} in {MAX_DRAWS} draws")


def meets_class(complexity: str, goals: int, dependencies: int) -> bool:
    """ATOD's criteria: medium 2-8 goals and at most 2 dependencies; complex 7+ goals and at least 2."""
    if complexity == "medium":
        return 2 <= goals <= 8 and dependencies <= 2
    return goals >= 7 and dependencies >= 2


def _draw(recipe: Recipe, rng: Random, db: dict[str, dict[str, Any]], graph: dict[str, dict[str, int]]) -> dict[str, Any] | None:
    strata = walk_domains(graph)
    domain = strata[recipe.index % len(strata)]
    start = rng.choice(sorted(i for i in graph if INTENTS[i].domain == domain))
    length = rng.randint(2, 5) if recipe.complexity == "medium" else rng.randint(5, 8)
    walk = _ordered(random_walk(rng, graph, start, length))
    number = recipe.index % len(CUSTOMERS) + 1
    cid, name = CUSTOMERS[number - 1]
    city = rng.choice(sorted({i["city"] for i in db["catalog"].values()}))
    ctx = Context(rng, db, cid, name, f"acc_{number:02d}_chk", f"acc_{number:02d}_sav", city, rng.choice(DATES))
    drafts = _drafts(ctx, walk, recipe.complexity)
    dependencies = sum(len(d.dependencies) for d in drafts)
    main = [d for d in drafts if d.intent != "MakePayment" and not d.abandoned]
    if not any(INTENTS[d.intent].kind == "book" for d in main[:-1]):
        return None  # ATOD's classes both have asynchronous execution and interleaving: a booking left pending meanwhile
    if not meets_class(recipe.complexity, len(drafts), dependencies):
        return None
    try:
        return _task(recipe, ctx, drafts, db)
    except Exception:  # noqa: BLE001 - a draw whose gold fails (e.g. funds run out) is drawn again
        return None


def _ordered(walk: list[str]) -> list[str]:
    """The walk with each search before its booking and the balance check before a transfer."""
    order = list(walk)
    for first, then in [*((SEARCH_OF_SERVICE[s], b) for s, b in BOOK_OF_SEARCH.items()), ("CheckBalance", "TransferMoney")]:
        if first in order and then in order and order.index(first) > order.index(then):
            i, j = order.index(then), order.index(first)
            order[i], order[j] = order[j], order[i]
    return order


def _drafts(ctx: Context, walk: list[str], complexity: str) -> list[Draft]:
    searched = {INTENTS[i].service for i in walk if INTENTS[i].kind == "search"}
    drafts = [draft_goal(ctx, intent, f"k{n}", searched) for n, intent in enumerate(walk)]
    by_intent = {d.intent: d for d in drafts}
    for d in drafts:
        intent = INTENTS[d.intent]
        if intent.kind == "book" and SEARCH_OF_SERVICE[intent.service] in by_intent:
            d.dependencies.append(by_intent[SEARCH_OF_SERVICE[intent.service]].key)
        if d.intent == "TransferMoney" and "CheckBalance" in by_intent:
            d.dependencies.append(by_intent["CheckBalance"].key)
    limit = 2 if complexity == "medium" else 99
    for d in [d for d in drafts if INTENTS[d.intent].kind == "book"]:
        used = sum(len(x.dependencies) for x in drafts)
        wanted = ctx.rng.random() < (0.5 if complexity == "medium" else 0.8)
        if wanted and used < limit and len(drafts) < (8 if complexity == "medium" else 12):
            drafts.append(payment_draft(ctx, d, f"p{d.key}"))
    if ctx.rng.random() < (0.3 if complexity == "medium" else 0.5):
        taken = {INTENTS[i].service for i in walk}  # a booking's own search must not serve the abandoned goal
        spare = sorted(i for i in INTENTS if INTENTS[i].kind == "search" and INTENTS[i].service not in taken)
        extra = draft_goal(ctx, ctx.rng.choice(spare), "a0", set())
        extra.abandoned = True
        drafts.append(extra)
    return drafts


def _moves(ctx: Context, drafts: list[Draft], complexity: str) -> list[tuple[Move, list[Callable[[Sim], list[tuple[str, dict[str, Any]]]]]]]:
    """The user's moves with the steps each asks of the agent (see the module docstring)."""
    proactive = complexity == "complex"
    pays = {d.dependencies[0]: d for d in drafts if d.intent == "MakePayment"}
    main = [d for d in drafts if d.intent != "MakePayment" and not d.abandoned]
    abandoned = [d for d in drafts if d.abandoned]
    moves: list[tuple[Move, list[Any]]] = []
    waiting: list[Draft] = []

    def follow_up(draft: Draft) -> Callable[[Sim], list[tuple[str, dict[str, Any]]]]:
        return lambda sim: status_checks(sim, draft.key)

    def settle(user_asks: bool) -> None:
        for booked in waiting:
            if user_asks:
                moves.append((Move(goal=booked.key, act="follow_up", say=booked.follow_line, expect="completed"), [follow_up(booked)]))
            if booked.key in pays:
                pay = pays[booked.key]
                moves.append((Move(goal=pay.key, act="raise", say=pay.raise_line, expect="completed"), [pay.calls]))
        waiting.clear()

    for n, draft in enumerate(main):
        book = INTENTS[draft.intent].kind == "book"
        steps: list[Any] = [follow_up(w) for w in waiting] if proactive else []
        steps.append(draft.calls)
        moves.append((Move(goal=draft.key, act="raise", say=draft.raise_line, expect="pending" if book else "completed"), steps))
        if proactive:
            settle(user_asks=False)
        elif waiting:
            settle(user_asks=True)
        if book:
            waiting.append(draft)
        if n == 0 and abandoned:
            extra = abandoned[0]
            moves.append((Move(goal=extra.key, act="mention", say=f"Later I may also want to {extra.content}, but not yet."), []))
    if abandoned:
        moves.append((Move(goal=abandoned[0].key, act="abandon", say=f"About my idea to {abandoned[0].content}: forget it, I won't need it."), []))
    settle(user_asks=True)
    return moves


def _task(recipe: Recipe, ctx: Context, drafts: list[Draft], db: dict[str, dict[str, Any]]) -> dict[str, Any]:
    moves = _moves(ctx, drafts, recipe.complexity)
    sim = Sim(ServicesTools(State.from_records(db)))
    actions = []
    for k, (move, steps) in enumerate(moves):
        calls = []
        for step in steps:
            for name, arguments in step(sim):
                if name != "get_booking_status":
                    sim.run(move.goal, name, arguments)
                calls.append((name, arguments))
        actions += [{"action_id": action_id(k, n), "name": name, "arguments": arguments} for n, (name, arguments) in enumerate(calls)]
    ids = _goal_ids([m for m, _ in moves])
    plan_moves = [attrs.evolve(m, goal=ids[m.goal]) for m, _ in moves]
    first = plan_moves[0]
    plan_moves[0] = attrs.evolve(first, say=f"Hi, this is {ctx.name}, customer id {ctx.customer}. {first.say}")
    goals = [_goal(d, ids) for d in sorted(drafts, key=lambda d: int(ids[d.key].split("_")[1]))]
    plan = UserPlan(moves=plan_moves, proactive=recipe.complexity == "complex")
    return {
        "id": f"services_{recipe.complexity}_{recipe.index:03d}",
        "description": {"purpose": f"Our multi-goal services suite: a {recipe.complexity} dialogue with {len(goals)} goals."},
        "user_scenario": {"instructions": _instructions(ctx, plan)},
        "evaluation_criteria": {"actions": actions, "reward_basis": ["DB"]},
        "goals": [converter.unstructure(g) for g in goals],
        "plan": converter.unstructure(plan),
        "attributes": _attributes(recipe.complexity, goals, plan),
    }


def _goal_ids(moves: list[Move]) -> dict[str, str]:
    """Goal ids by order of first mention: goal_1, goal_2, ..."""
    ids: dict[str, str] = {}
    for move in moves:
        ids.setdefault(move.goal, f"goal_{len(ids) + 1}")
    return ids


def _goal(draft: Draft, ids: dict[str, str]) -> Goal:
    intent = INTENTS[draft.intent]
    return Goal(
        id=ids[draft.key],
        domain=intent.domain,
        intent=draft.intent,
        content=draft.content,
        core_content=intent.core,
        dependencies=[ids[d] for d in draft.dependencies],
        slots=sorted(draft.values),
        slot_values=dict(draft.values),
        status="abandoned" if draft.abandoned else "completed",
    )


def _instructions(ctx: Context, plan: UserPlan) -> dict[str, str]:
    steps = "\n".join(f"{n + 1}. {m.say}" for n, m in enumerate(plan.moves))
    follow = (
        "Never ask whether a pending booking went through: a good agent checks and tells you on its own. If by the end it has not, ask once."
        if plan.proactive
        else "A booking may stay pending for a while: move on to your next request and ask about it later, where your list says so."
    )
    return {
        "domain": "services",
        "reason_for_call": f"You are {ctx.name} and have several errands around a trip to {ctx.city} on {ctx.date} to sort out in one call.",
        "known_info": f"Your customer id is {ctx.customer}; your accounts are {ctx.checking} (checking) and {ctx.savings} (savings).",
        "task_instructions": (
            "Bring up your requests one at a time, in this order, each once the agent has answered the one before "
            f"(never say you are following a list):\n{steps}\n{follow} When everything is handled, say goodbye."
        ),
    }


def _attributes(complexity: str, goals: list[Goal], plan: UserPlan) -> dict[str, str]:
    main = [g for g in goals if g.intent != "MakePayment" and g.status != "abandoned"]
    raised = [m.goal for m in plan.moves if m.act == "raise"]
    booked = {g.id for g in main if INTENTS[g.intent].kind == "book"}
    interleaved = any(goal in booked and i < len(raised) - 1 for i, goal in enumerate(raised))
    return {
        "complexity": complexity,
        "num_goals": str(len(goals)),
        "dependencies": str(sum(len(g.dependencies) for g in goals)),
        "async": str(any(INTENTS[g.intent].kind == "book" for g in goals)).lower(),
        "interleaving": str(interleaved).lower(),
        "proactivity": str(plan.proactive).lower(),
        "estimated_turns": str(2 * len(plan.moves) + 2),
    }


# --------------------------------------------------------------------------- the suite


def generate_suite(seed: int = DEFAULT_SEED, counts: dict[str, int] | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The database and the tasks of a suite, deterministic in the seed."""
    db = build_db(seed)
    graph = co_occurrence_graph()
    tasks = [make_task(Recipe(complexity, i, seed), db, graph) for complexity, n in (counts or DEFAULT_COUNTS).items() for i in range(n)]
    return db, tasks


def verify_suite(db: dict[str, Any], tasks: list[dict[str, Any]]) -> list[str]:
    """What is wrong with a suite as the kernel sees it: a gold replay that fails, or a task doing nothing passes."""
    vocabulary = TaskVocabulary(extensions=[GoalsExtension(), PlanExtension()])
    data = DomainData(
        name="services",
        tasks=[prepared(t) for t in structure_tasks(tasks, vocabulary, source="generated")],
        policy="",
        agent_toolkit=ServicesTools,
        agent_state=State.from_records(db),
        advance=advance,
    )
    problems = []
    for task in data.tasks:
        gold = replay_gold(data, task)
        if not gold.ok:
            problems.append(f"{task.id}: gold replay fails: {'; '.join(gold.action_errors)}")
        if gold.agent_hash == build_environment(data, task).hashes()[0]:
            problems.append(f"{task.id}: the do-nothing agent would pass (the gold changes nothing)")
    return problems


def write_suite(out_dir: Path, seed: int = DEFAULT_SEED, counts: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """Write db.json and tasks.json (and the policy, so `--data-dir` loads it) once the kernel's gold replay accepts every task."""
    db, tasks = generate_suite(seed, counts)
    problems = verify_suite(db, tasks)
    if problems:
        raise ConfigError("services generator produced unsound tasks: " + "; ".join(problems))
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "db.json").write_text(json.dumps(db, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    (out_dir / "tasks.json").write_text(json.dumps(tasks, indent=1) + "\n", encoding="utf-8")
    policy = Path(__file__).parent / "data" / "policy.md"
    if (out_dir / "policy.md").resolve() != policy.resolve():
        (out_dir / "policy.md").write_text(policy.read_text(encoding="utf-8"), encoding="utf-8")
    return tasks


def main(argv: list[str] | None = None) -> None:
    """`python -m bench_services.generate --out DIR [--seed N]`."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    args = parser.parse_args(argv)
    print(f"wrote {len(write_suite(args.out, args.seed))} tasks to {args.out}")


if __name__ == "__main__":
    main()
