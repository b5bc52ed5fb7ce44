"""dGCR, NTC and dependency F1 pinned on hand-built conversations, degenerate cases included."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from atod_helpers import call, context, events, goal, result, say, task, user
from bench_atod.formulas import GoalCounts, annotated_edges, dependency_f1, dependency_scores, goal_counts, pooled
from bench_atod.metrics import GoalCompletion, TurnsToCompletion
from bench_atod.tracking import Outcome, annotated_outcomes, turn_of, utterance_turns


def scored(metric: Any, ctx: Any) -> Any:
    return asyncio.run(metric.score(ctx))


GOALS = [
    goal("hotel", "book a hotel in Rome"),
    goal("pay", "pay for the hotel", deps=["hotel"]),
    goal("car", "rent a car"),
    goal("taxi", "order a taxi"),
    goal("museum", "buy museum tickets"),
]
TRIP = [
    say("Hi! How can I help you today?"),  # 0: turn 1
    user("Book a hotel in Rome, then pay for it."),  # 1: turn 2 (hotel and pay open)
    call("book_hotel", "c1"),  # 2: turn 3 (no text: not an utterance)
    result("c1", "status: pending"),  # 3: turn 3 (hotel pending)
    say("Your Rome hotel is pending."),  # 4: turn 3
    user("Also rent a car and get me a taxi."),  # 5: turn 4 (car and taxi open)
    call("rent_car", "c2"),  # 6: turn 5
    result("c2", "no cars left", error=True),  # 7: turn 5 (car failed)
    say("Sorry, renting the car failed."),  # 8: turn 5
    user("Fine. Forget the taxi."),  # 9: turn 6 (taxi abandoned)
    say("Your Rome hotel is confirmed."),  # 10: turn 7 (hotel completed)
]
TRIP_EVENTS = [
    (1, "hotel", "open"),
    (1, "pay", "open"),
    (3, "hotel", "pending"),
    (5, "car", "open"),
    (5, "taxi", "open"),
    (7, "car", "failed"),
    (9, "taxi", "abandoned"),
    (10, "hotel", "completed"),
]


def test_turns_count_utterances_of_both_speakers_and_tool_steps_take_the_next_utterances_turn() -> None:
    turns = utterance_turns(TRIP)
    assert turns == [1, 2, 3, 3, 3, 4, 5, 5, 5, 6, 7, 8]
    assert turn_of(turns, 3) == 3 and turn_of(turns, 11) == 8 and turn_of(turns, 50) == 8 and turn_of(turns, None) == 8


def test_dgcr_and_ntc_of_a_trip_with_a_failed_an_abandoned_a_blocked_and_an_unmentioned_goal() -> None:
    ctx = context(TRIP, events(*TRIP_EVENTS), task(GOALS))
    dgcr = scored(GoalCompletion(), ctx)
    # completed: hotel; failed: car; pay stays open (blocked behind the hotel until the end), taxi abandoned, museum never
    # mentioned: all three left out. dGCR = 1 / 2.
    assert dgcr.values[""] == 0.5 and dgcr.values["completed"] == 1 and dgcr.values["decided"] == 2 and dgcr.values["goals"] == 5
    assert dgcr.details[""]["final"] == {"hotel": "completed", "pay": "open", "car": "failed", "taxi": "abandoned", "museum": "not_mentioned"}
    ntc = scored(TurnsToCompletion(), ctx)
    # hotel: first mentioned turn 2, completed turn 7 -> 5; car: turn 4 to its failure at turn 5 -> 1. Mean 3; completed only 5.
    assert ntc.values[""] == 3.0 and ntc.values["completed_only"] == 5.0
    assert ntc.details[""]["turns"] == {"hotel": (2, 7), "car": (4, 5)}
    assert "annotated" not in dgcr.values  # no gold lifecycle on these goals


def test_nothing_decided_gives_no_dgcr_and_no_ntc() -> None:
    ctx = context(TRIP[:6], events(*TRIP_EVENTS[:5]), task(GOALS))
    assert scored(GoalCompletion(), ctx).values[""] is None
    assert scored(TurnsToCompletion(), ctx).values[""] is None
    silent = context(TRIP[:1], events(), task(GOALS))
    assert scored(GoalCompletion(), silent).values == {"": None, "completed": 0.0, "decided": 0.0, "goals": 5.0}


def test_a_goal_that_fails_is_resumed_and_fails_again_ends_at_its_last_failure() -> None:
    messages = [user("Book the flight."), say("It is pending."), say("It failed."), user("Try again."), say("It failed again.")]
    log = events((0, "f", "open"), (1, "f", "pending"), (2, "f", "failed"), (3, "f", "open"), (4, "f", "failed"))
    ntc = scored(TurnsToCompletion(), context(messages, log, task([goal("f", "book the flight")])))
    assert ntc.values[""] == 4.0 and ntc.values["completed_only"] is None  # turn 1 to turn 5
    dgcr = scored(GoalCompletion(), context(messages, log, task([goal("f", "book the flight")])))
    assert dgcr.values[""] == 0.0


def test_a_completion_in_the_turn_of_the_first_mention_counts_zero_turns() -> None:
    messages = [user("What is my balance?"), say("It is 40 dollars.")]
    log = events((1, "b", "open"), (1, "b", "completed"))
    assert scored(TurnsToCompletion(), context(messages, log, task([goal("b", "check the balance")]))).values[""] == 0.0


def test_annotated_outcomes_read_atods_fields_and_a_history_before_the_first_mention_is_clamped() -> None:
    from bench_atod import StatusEntry

    goals = [
        goal("a", "x", status="completed", first_mentioned_turn=3, completion_turn=9),
        goal(
            "b",
            "y",
            status="failed",
            first_mentioned_turn=2,
            status_history=[
                StatusEntry(turn=2, status="open"),
                StatusEntry(turn=4, status="failed"),
                StatusEntry(turn=5, status="open"),
                StatusEntry(turn=8, status="failed"),
            ],
        ),
        goal("c", "z", status="completed", first_mentioned_turn=6, completion_turn=4),  # inconsistent data: max(0, -2)
        goal("d", "w", status="pending", first_mentioned_turn=1),
    ]
    outcomes = annotated_outcomes(goals)
    assert outcomes[1] == Outcome(goal_id="b", final_status="failed", first_mentioned_turn=2, end_turn=8)
    counts = goal_counts(outcomes)
    assert (counts.completed, counts.decided, counts.dgcr) == (2, 3, pytest.approx(2 / 3))
    assert counts.ntc == pytest.approx((6 + 6 + 0) / 3) and counts.ntc_completed == 3.0


def test_pooling_is_micro_over_goals() -> None:
    first = GoalCounts(goals=3, completed=1, failed=1, ntc_turns=10, ntc_goals=2)
    second = GoalCounts(goals=4, completed=3, failed=0, ntc_turns=3, ntc_goals=3)
    total = pooled([first, second])
    assert total.dgcr == pytest.approx(4 / 5)  # per conversation it would be (0.5 + 1.0) / 2 = 0.75
    assert total.ntc == pytest.approx(13 / 5)
    assert pooled([]).dgcr is None


def test_dependency_f1() -> None:
    gold = annotated_edges(
        [goal("book", "book a hotel"), goal("pay", "pay the hotel", deps=["book"]), goal("taxi", "taxi to the hotel", deps=["book"])]
    )
    assert gold == {("book", "pay"), ("book", "taxi")}
    found = {("book", "pay"), ("pay", "taxi")}
    scores = dependency_scores(found, gold)
    assert (scores.tp, scores.fp, scores.fn) == (1, 1, 1)
    assert scores.precision == 0.5 and scores.recall == 0.5 and scores.f1 == 0.5
    assert dependency_f1(gold, gold) == 1.0
    assert dependency_f1([], gold) == 0.0 and dependency_f1(found, []) == 0.0
    assert dependency_f1([], []) is None
    # Content strings compare without case or spacing differences, as texts do.
    texts = annotated_edges([goal("b", "Book a hotel"), goal("p", "pay it", deps=["b"])], by="content")
    assert dependency_f1({("book a  HOTEL", "pay it")}, texts) == 1.0
    summed = dependency_scores(found, gold) + dependency_scores(gold, gold)
    assert summed.f1 == pytest.approx(2 * 3 / (2 * 3 + 1 + 1))
