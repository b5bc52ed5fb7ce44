"""The rules judge's reading of tool calls (the goal a call served, its status, offers and bookings remembered), its
prerequisites, and the slot patterns of SGD-world wording (quoted names, ISO dates, 24-hour times, amounts, accounts)."""

from __future__ import annotations

import asyncio
import json

from bench_memory import catalogue as cat
from bench_memory.evaluator import MemoryEvaluator
from bench_memory.index import LexicalIndex
from bench_memory.judges import Candidate, RulesJudge, ToolMemory, tool_candidates
from bench_memory.store import GoalStore
from bench_memory.turns import ToolResult, Turn

OFFERS = [
    {"item_id": "SAL0359", "service": "salons", "city": "Perth", "date": "2027-04-11", "name": "Blue Heron Cuts"},
    {"item_id": "SAL0360", "service": "salons", "city": "Perth", "date": "2027-04-11", "name": "Ember Hair Studio"},
]


def call(name: str, arguments: dict[str, object], result: object, error: bool = False) -> ToolResult:
    return ToolResult(name=name, arguments=arguments, content=json.dumps(result), error=error)


def summary(found: list[Candidate]) -> list[tuple[str, str | None, dict[str, str]]]:
    return [(c.intent, c.status, c.slots) for c in found]


def test_a_search_answered_completes_the_search_and_its_offers_are_remembered() -> None:
    seen = ToolMemory()
    found = tool_candidates(call("search", {"service": "salons", "city": "Perth", "date": "2027-04-11"}, OFFERS), seen)
    assert summary(found) == [("search salon", "completed", {"place": "perth", "date": "2027-04-11"})]
    assert seen.items["SAL0359"] == {"service": "salons", "city": "Perth", "date": "2027-04-11", "name": "Blue Heron Cuts"}
    assert tool_candidates(call("search", {"service": "salons"}, []), ToolMemory())[0].status == "completed"  # nothing found: answered


def test_a_booking_takes_its_result_status_and_what_the_search_said_of_the_offer() -> None:
    seen = ToolMemory()
    tool_candidates(call("search", {"service": "salons"}, OFFERS), seen)
    booked = {"booking_id": "BK0001", "item_id": "SAL0359", "service": "salons", "status": "pending"}
    found = tool_candidates(call("book", {"item_id": "SAL0359", "quantity": 3}, booked), seen)
    assert summary(found) == [("book salon", "pending", {"place": "perth", "date": "2027-04-11", "item": "sal0359", "name": "blue heron cuts"})]
    assert found[0].core_content == "book salon perth"
    status = tool_candidates(call("get_booking_status", {"booking_id": "BK0001"}, {**booked, "status": "confirmed"}), seen)
    assert summary(status)[0][:2] == ("book salon", "completed")  # 'get' of a booking's status is about the booking
    failed = tool_candidates(call("get_booking_status", {"booking_id": "BK0001"}, {**booked, "status": "failed"}), seen)
    assert failed[0].status == "failed"


def test_a_listing_of_bookings_gives_one_status_per_booking() -> None:
    seen = ToolMemory()
    listing = [
        {"booking_id": "BK0001", "item_id": "SAL0359", "service": "salons", "status": "confirmed"},
        {"booking_id": "BK0002", "item_id": "HOT0001", "service": "hotels", "status": "pending"},
    ]
    found = tool_candidates(call("list_bookings", {"customer_id": "cust_01"}, listing), seen)
    assert [(c.intent, c.status, c.slots["item"]) for c in found] == [("book salon", "completed", "sal0359"), ("book hotel", "pending", "hot0001")]


def test_a_payment_is_for_the_family_of_the_booking_it_pays() -> None:
    seen = ToolMemory()
    tool_candidates(
        call("book", {"item_id": "SAL0359"}, {"booking_id": "BK0001", "item_id": "SAL0359", "service": "salons", "status": "pending"}), seen
    )
    found = tool_candidates(
        call(
            "pay_booking", {"booking_id": "BK0001", "account_id": "acc_01_chk"}, {"payment_id": "PM0001", "booking_id": "BK0001", "amount": "165.0"}
        ),
        seen,
    )
    assert summary(found) == [("make payment", "completed", {"item": "sal0359", "account": "acc_01_chk", "for": "salon"})]
    assert found[0].core_content == "make payment salon"
    assert cat.core_content("make payment", {"for": "event"}) == "make payment ticket"  # in the words of 'book ticket'


def test_reads_and_writes_are_named_by_the_tool_and_failed_calls_say_nothing() -> None:
    seen = ToolMemory()
    assert summary(tool_candidates(call("get_balance", {"account_id": "acc_01_chk"}, {"balance": 12.0}), seen)) == [
        ("check account", "completed", {"account": "acc_01_chk"})
    ]
    assert summary(tool_candidates(call("list_reminders", {"customer_id": "c"}, []), seen))[0][:2] == ("list reminders", "completed")
    assert summary(tool_candidates(call("add_reminder", {"time": "17:00"}, {"reminder_id": "R1"}), seen))[0][:2] == ("set reminder", "completed")
    assert summary(tool_candidates(call("get_calendar", {}, []), seen))[0][:2] == ("check calendar", "completed")
    assert summary(tool_candidates(call("request_payment", {"amount": 35}, {"request_id": "Q1"}), seen))[0][:2] == ("request payment", "completed")
    assert tool_candidates(call("transfer_money", {"amount": 5}, {"error": "x"}, error=True), seen) == []
    assert tool_candidates(ToolResult(name="transfer_money", arguments={}, content="Error: insufficient funds"), seen) == []
    assert tool_candidates(call("lookup", {}, {"ok": True}), seen) == []  # no family: nothing to say


def test_the_user_wording_of_the_sgd_world() -> None:
    text = 'Please book the movie "Ember at Dawn" (MOV0123) in Perth on 2027-04-11 for 3 tickets.'
    assert cat.families_in(text)[0][1].name == "movie" and cat.intent_of(cat.BY_NAME["movie"], text) == "book movie"
    assert cat.slots_in(text, cat.BY_NAME["movie"]) == {
        "name": "ember at dawn",
        "item": "mov0123",
        "place": "perth",
        "date": "2027-04-11",
        "people": "3",
    }  # 'at Dawn' is a name, no place
    assert cat.families_in('Please book the restaurant "Amber Table"')[0][1].name == "restaurant"
    assert cat.families_in('Please add a reminder "book a dentist check-up" on 2027-04-10 at 17:00.')[0][1].name == "reminder"
    assert cat.intent_of(cat.BY_NAME["reminder"], "Which reminders do I have set?") == "list reminders"
    assert cat.intent_of(cat.BY_NAME["calendar"], "What is in my calendar on 2027-04-11?") == "check calendar"
    assert cat.slots_in('Please add a calendar entry "Parents\' evening" on 2027-04-11 at 17:00.')["time"] == "17:00"
    assert [f.name for _, f in cat.families_in("Please send Grace a request to pay me 35.00.")] == ["request"]
    assert [f.name for _, f in cat.families_in('Please pay for the rental car booking "Cedar sedan" from my account acc_01_chk.')] == ["payment"]
    assert cat.slots_in("Please transfer 120.00 from my account acc_01_chk to my account acc_01_sav.") == {
        "account": "acc_01_chk",
        "amount": "120.00",
    }
    assert cat.slots_in("the checking account balance") == {}  # 'balance' is no account id


def test_amounts_have_one_spelling() -> None:
    assert [cat.amount(v) for v in ("$2,400", "$ 420", "120.00", "35 dollars", 120.0, 7)] == [
        "2400.00",
        "420.00",
        "120.00",
        "35.00",
        "120.00",
        "7.00",
    ]
    assert cat.amount("free") == "free"


def test_prerequisites() -> None:
    assert cat.prerequisite("book salon", {}, "search salon", {})
    assert not cat.prerequisite("book salon", {"place": "perth"}, "search salon", {"place": "osaka"})  # another search
    assert not cat.prerequisite("book salon", {}, "search hotel", {}) and not cat.prerequisite("search salon", {}, "book salon", {})
    assert cat.prerequisite("make payment", {"for": "hotel"}, "book hotel", {})
    assert not cat.prerequisite("make payment", {"for": "hotel"}, "search hotel", {})  # a payment pays a booking
    assert not cat.prerequisite("make payment", {}, "book hotel", {})  # for nothing named
    assert cat.prerequisite("transfer money", {"account": "a1"}, "check account", {"account": "a1"})
    assert not cat.prerequisite("transfer money", {"account": "a1"}, "check account", {"account": "a2"})
    assert not cat.prerequisite("set reminder", {}, "list reminders", {})  # adding a reminder does not wait for listing them
    assert not cat.prerequisite("add calendar entry", {}, "check calendar", {})
    assert not cat.prerequisite("check weather", {}, "search attractions", {}) and not cat.prerequisite("x", {}, "y", {})


def test_rules_relations_of_prerequisites_and_payments_to_payments() -> None:
    judge = RulesJudge()
    turn = Turn(number=1, first=0, last=1, user="", system="")
    store = GoalStore("c")
    search = store.get(
        store.insert(
            domain="Services", intent="search salon", content="salons in Perth", core_content="search salon", slots={}, status="completed", turn=1
        )
    )
    paid = store.get(
        store.insert(
            domain="Payment",
            intent="make payment",
            content="Please pay for the bus booking",
            slots={"for": "bus"},
            core_content="make payment bus",
            status="completed",
            turn=1,
        )
    )
    booking = Candidate(domain="Services", intent="book salon", content='Please book the salon "Blue Heron Cuts"', core_content="book salon")
    payment = Candidate(
        domain="Payment", intent="make payment", content="Please pay for the salon booking", core_content="make payment salon", slots={"for": "salon"}
    )
    assert asyncio.run(judge.relation(booking, search, turn)) == "dependency"
    assert asyncio.run(judge.relation(payment, paid, turn)) == "link"  # 'for the' names its own family: no wait on the other payment


def test_a_tool_call_updates_a_goal_but_never_inserts_one() -> None:
    ev = MemoryEvaluator(store=GoalStore("c"), index=LexicalIndex(), judge=RulesJudge())
    search = call("search", {"service": "salons", "city": "Perth", "date": "2027-04-11"}, OFFERS)
    asyncio.run(ev.step(Turn(number=1, first=0, last=3, user="Please book it.", system="All done.", tools=(search,))))
    assert ev.store.goals() == []  # the agent's own search before a booking is not a goal of the user
    asyncio.run(
        ev.step(
            Turn(number=2, first=4, last=7, user="I'm looking for salon appointments in Perth on 2027-04-11.", system="All done.", tools=(search,))
        )
    )
    assert [(g.intent, g.status) for g in ev.store.goals()] == [("search salon", "completed")]
