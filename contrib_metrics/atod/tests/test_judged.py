"""MRA, PE and quality with the deterministic judge on hand-built conversations; the model reply reader."""

from __future__ import annotations

import asyncio

import pytest
from atod_helpers import call, context, events, goal, result, say, task, user
from bench_atod.judges import JudgeReplyError, read_reply
from bench_atod.metrics import DialogueQuality, MemoryRecall, Proactivity, TurnQuality

from bench_kernel import TerminationReason

GOALS = [goal("hotel", "book a hotel room in Lisbon", slots={"hotel_name": "Casa Azul"}), goal("pay", "pay the deposit", deps=["hotel"])]
TALK = [
    say("Hi! How can I help you today?"),  # 0
    user("Book a hotel room in Lisbon, please."),  # 1  hotel open
    call("book_room", "c1"),  # 2
    result("c1", "pending"),  # 3  hotel pending
    say("The Lisbon hotel room is pending confirmation."),  # 4
    user("I also need to pay the deposit."),  # 5  pay open
    say("Noted."),  # 6
    user("What time is it in Tokyo?"),  # 7
    call("check_booking", "c2"),  # 8
    result("c2", "confirmed"),  # 9  hotel completed
    say("Good news: Casa Azul has confirmed your room."),  # 10
    user("Great, charge the deposit."),  # 11
    say("The deposit failed: your card was declined."),  # 12 pay failed
]
CHANGES = [(1, "hotel", "open"), (3, "hotel", "pending"), (5, "pay", "open"), (9, "hotel", "completed"), (12, "pay", "failed")]


def score(metric, messages=TALK, changes=CHANGES, **kw):
    return asyncio.run(metric.score(context(messages, events(*changes), task(GOALS), **kw)))


def test_memory_recall_one_query_per_change_judged_on_the_next_agent_utterance() -> None:
    found = score(MemoryRecall())
    items = found.details[""]["items"]
    # hotel open -> reply 4 names it; hotel pending -> 4 says pending; pay open -> "Noted." does not name the deposit;
    # hotel completed -> 10 names Casa Azul and says confirmed; pay failed -> 12 names the deposit and says failed.
    assert [(i["goal"], i["status"], i["reply_index"], i["match"]) for i in items] == [
        ("hotel", "open", 4, True),
        ("hotel", "pending", 4, True),
        ("pay", "open", 6, False),
        ("hotel", "completed", 10, True),
        ("pay", "failed", 12, True),
    ]
    assert found.values == {"": 0.8, "queries": 5.0} and found.details[""]["judge"] == "rules"


def test_a_reply_that_names_the_goal_but_not_its_status_is_no_recall() -> None:
    talk = [*TALK[:10], say("About Casa Azul: let me know if you need anything else for the room.")]
    found = score(MemoryRecall(), talk, CHANGES[:4])
    assert [i["match"] for i in found.details[""]["items"]] == [True, True, False, False]


def test_no_status_change_means_no_query_and_no_value() -> None:
    found = score(MemoryRecall(), TALK, [])
    assert found.values == {"": None, "queries": 0.0}


def test_a_change_after_the_agents_last_utterance_is_not_recalled() -> None:
    found = score(MemoryRecall(), TALK[:12], [*CHANGES[:4], (12, "pay", "failed")])
    assert found.details[""]["items"][-1]["reply_index"] is None and found.details[""]["items"][-1]["match"] is False


def test_proactivity_an_unprompted_confirmation_that_ends_completed() -> None:
    found = score(Proactivity())
    # Only the confirmation at 10 is proactive: the user's last words (7) were about Tokyo. The pending update (4) and
    # the failed payment (12) answer the user's own words; the first change of a goal is never proactive.
    assert found.details[""]["items"] == [{"goal": "hotel", "status": "completed", "index": 10, "grounded": True, "beneficial": True}]
    assert found.values == {"": 1.0, "turns": 1.0}


def test_a_proactive_turn_that_does_not_report_the_status_is_not_grounded_and_a_failed_goal_is_not_beneficial() -> None:
    talk = [*TALK[:10], say("Casa Azul wrote back about your room."), user("Ok."), say("The deposit did not go through.")]
    changes = [*CHANGES[:4], (12, "pay", "failed")]
    found = score(Proactivity(), talk, changes)
    rows = {(r["goal"], r["index"]): (r["grounded"], r["beneficial"]) for r in found.details[""]["items"]}
    assert rows == {("hotel", 10): (False, True), ("pay", 12): (True, False)}  # "Ok." does not name the deposit
    assert found.values[""] == 0.0


def test_no_proactive_turn_means_no_value() -> None:
    found = score(Proactivity(), TALK[:8], CHANGES[:3])
    assert found.values == {"": None, "turns": 0.0}


def test_turn_and_dialogue_quality_by_the_rules() -> None:
    turn, dialogue = score(TurnQuality()), score(DialogueQuality())
    # 0: greeting, nothing on topic yet -> 4; 4: on topic -> 5; 6: "Noted." off topic -> 4; 10: answers Tokyo with the
    # hotel (no longer open) -> 4; 12: on topic, its failure backed by an earlier tool result -> 5.
    assert turn.details[""]["scores"] == [4, 5, 4, 4, 5]
    assert turn.values[""] == pytest.approx(22 / 25)
    # Both raised goals named by the agent afterwards (+2), no verbatim repeat (+1), ended by a stop (+1).
    assert dialogue.values[""] == 5.0


def test_quality_penalises_repeats_unbacked_claims_and_an_early_end() -> None:
    talk = [user("Book a hotel room in Lisbon."), say("Your Lisbon room is booked."), user("Thanks."), say("Your Lisbon room is booked.")]
    turn = score(TurnQuality(), talk, [(0, "hotel", "open")])
    dialogue = score(DialogueQuality(), talk, [(0, "hotel", "open")], termination=TerminationReason.MAX_STEPS)
    # 1: on topic, fresh, claims "booked" with no tool result and no recorded completion, concise -> 4; 3: the same words
    # again (a repeat, and still unbacked) -> 3.
    assert turn.details[""]["scores"] == [4, 3]
    assert dialogue.values[""] == 3.0  # goal named (+2), a repeat (+0), not stopped (+0)


def test_the_reply_reader_is_tolerant() -> None:
    assert read_reply('{"match": 1}', ("match",)) == {"match": 1}
    assert read_reply('Sure! ```json\n{"grounded": "yes", "beneficial": false}\n```', ("grounded", "beneficial")) == {"grounded": 1, "beneficial": 0}
    assert read_reply('{"note": "x"} then {"turn_quality": "4"}', ("turn_quality",)) == {"turn_quality": 4}
    assert read_reply('{"turn_quality": 4.0, "dialogue_quality": 5}', ("turn_quality", "dialogue_quality")) == {
        "turn_quality": 4,
        "dialogue_quality": 5,
    }


@pytest.mark.parametrize("reply", ["", "I think it matches.", '{"match": "perhaps"}', '{"other": 1}', "{not json}"])
def test_garbage_replies_raise_a_bench_error(reply: str) -> None:
    with pytest.raises(JudgeReplyError, match="atod-judge reply does not give match"):
        read_reply(reply, ("match",))


def test_dialogue_quality_gives_half_a_point_up() -> None:
    goals = [goal("a", "rent a bicycle"), goal("b", "order flowers"), goal("c", "find a plumber"), goal("d", "renew a passport")]
    talk = [user("Bicycle, flowers, plumber and passport, please."), say("Your bicycle rental is arranged.")]
    found = asyncio.run(DialogueQuality().score(context(talk, events(*[(0, g.id, "open") for g in goals]), task(goals))))
    assert found.values[""] == 1 + 1 + 1 + 1  # one of four goals named: 2 x 0.25 = 0.5 rounds up to 1
