"""The formulas on hand-built data: detection F1, per-turn status accuracy, dependency F1, gold timelines, degenerate cases."""

from __future__ import annotations

import pytest
from bench_atod import Goal, StatusEntry
from bench_memory.metric import run_figures
from bench_memory.scoring import f1, gold_timeline, match_goals, score
from bench_memory.store import StoredGoal
from bench_memory.turns import Turn

from bench_kernel import Event


def detected(goal_id: str, intent: str, history: list[tuple[int, str]], slots: dict[str, str] | None = None, content: str = "") -> StoredGoal:
    return StoredGoal(
        id=goal_id,
        domain="",
        intent=intent,
        status=history[-1][1],
        content=content,
        core_content=intent,
        slots=slots or {},
        history=history,
        first_turn=history[0][0],
        last_turn=history[-1][0],
    )


def event(goal_id: str, status: str, index: int | None) -> Event:
    return Event(kind="goal.status", data={"goal_id": goal_id, "status": status}, message_index=index)


ROME = Goal(id="h_rome", domain="Hotels", intent="ReserveHotel", content="hotel in Rome", slot_values={"location": "Rome"})
NICE = Goal(id="h_nice", domain="Hotels", intent="ReserveHotel", content="hotel in Nice", slot_values={"location": "Nice"})
PAY = Goal(id="pay", domain="Payment", intent="MakePayment", content="pay the hotel", dependencies=["h_rome"])
WEATHER = Goal(id="w", domain="Weather", intent="GetWeather", content="weather")
TURNS = [
    Turn(number=1, first=0, last=1, user="", system=""),
    Turn(number=2, first=2, last=3, user="", system=""),
    Turn(number=3, first=4, last=5, user="", system=""),
]


def test_f1_and_its_degenerate_cases() -> None:
    assert f1(2, 1, 1) == pytest.approx((2 / 3, 2 / 3, 2 / 3))
    assert f1(0, 0, 0) == (None, None, None)  # nothing detected, nothing to detect: undefined
    assert f1(0, 2, 0) == (0.0, None, 0.0)  # only false positives
    assert f1(0, 0, 3) == (None, 0.0, 0.0)  # nothing detected


def test_matching_is_one_to_one_by_intent_then_shared_slot_values() -> None:
    nice = detected("g1", "book hotel", [(1, "open")], {"place": "nice"})
    rome = detected("g2", "book hotel", [(1, "open")], {"place": "rome"})
    vague = detected("g3", "book hotel", [(2, "open")])
    weather = detected("g4", "check weather", [(1, "open")])
    assert match_goals([vague, nice, rome, weather], [ROME, NICE, WEATHER]) == {"g1": "h_nice", "g2": "h_rome", "g4": "w"}
    assert match_goals([vague], [ROME, NICE]) == {"g3": "h_rome"}  # a tie goes to the first gold goal


def test_gold_timeline_from_events_else_from_the_annotated_history() -> None:
    timeline = gold_timeline([ROME, PAY], [event("h_rome", "open", 1), event("h_rome", "pending", 3), event("pay", "open", None)])
    assert [timeline.status_at("h_rome", i) for i in (0, 1, 2, 3)] == ["not_mentioned", "open", "open", "pending"]
    assert timeline.status_at("pay", 0) == "open" and timeline.final == {"h_rome": "pending", "pay": "open"}
    annotated = Goal(
        id="a",
        domain="Hotels",
        intent="ReserveHotel",
        content="x",
        status="completed",
        status_history=[StatusEntry(turn=0, status="not_mentioned"), StatusEntry(turn=1, status="open"), StatusEntry(turn=9, status="completed")],
    )
    timeline = gold_timeline([annotated, WEATHER], [])
    assert [timeline.status_at("a", i) for i in (0, 7, 8)] == ["open", "open", "completed"]  # ATOD turn t is message t-1
    assert timeline.final == {"a": "completed", "w": "not_mentioned"} and not timeline.mentioned("w")


def test_scores_of_a_hand_built_memory() -> None:
    # Gold: Rome hotel open at message 0, pending at 2, completed at 4; payment (after the hotel) open at 2; the weather
    # goal is never mentioned, so it is not expected.
    events = [event("h_rome", "open", 0), event("h_rome", "pending", 2), event("pay", "open", 2), event("h_rome", "completed", 4)]
    memory = [
        detected("g1", "book hotel", [(1, "open"), (2, "completed")], {"place": "rome"}),  # turn 2 wrong (gold pending), turn 3 right
        detected("g2", "make payment", [(2, "open")]),  # right at turns 2 and 3
        detected("g3", "book flight", [(3, "open")]),  # a goal the user never had
    ]
    edges = [("g2", "g1", "dependency"), ("g3", "g1", "dependency"), ("g3", "g2", "link")]
    scores, matching = score(memory, edges, [ROME, PAY, WEATHER], gold_timeline([ROME, PAY, WEATHER], events), TURNS)
    assert matching == {"g1": "h_rome", "g2": "pay"}
    assert (scores.detected, scores.gold, scores.matched) == (3, 2, 2)
    assert scores.detection_precision == pytest.approx(2 / 3) and scores.detection_recall == 1.0
    assert scores.detection_f1 == pytest.approx(0.8)
    assert scores.per_turn == [(1, 1), (2, 1), (2, 2)]
    assert scores.status_accuracy == pytest.approx(4 / 5)
    assert (scores.final_compared, scores.final_correct) == (2, 2)
    assert (scores.dependency_tp, scores.dependency_fp, scores.dependency_fn) == (1, 1, 0)
    assert scores.dependency_f1 == pytest.approx(2 / 3)


def test_an_empty_memory_and_a_goal_list_without_status_information() -> None:
    scores, _ = score([], [], [ROME, PAY], gold_timeline([ROME, PAY], []), TURNS)
    # No status was ever recorded: every goal is expected.
    assert (scores.gold, scores.detection_f1, scores.status_accuracy, scores.final_status_accuracy) == (2, 0.0, None, None)
    assert (scores.dependency_fn, scores.dependency_f1) == (1, 0.0)
    scores, _ = score([], [], [], gold_timeline([], []), TURNS)
    assert (scores.detection_f1, scores.dependency_f1) == (None, None)


def test_run_figures_macro_detection_micro_status_and_dependencies() -> None:
    counts = [
        {
            "statuses_compared": 4,
            "statuses_correct": 4,
            "final_compared": 2,
            "final_correct": 2,
            "dependency_tp": 1,
            "dependency_fp": 0,
            "dependency_fn": 0,
        },
        {
            "statuses_compared": 6,
            "statuses_correct": 3,
            "final_compared": 3,
            "final_correct": 1,
            "dependency_tp": 0,
            "dependency_fp": 1,
            "dependency_fn": 1,
        },
    ]
    figures = run_figures(counts, [1.0, 0.5], [10.0] * 19 + [100.0])
    assert figures["detection_f1 (macro)"] == 0.75
    assert figures["status_accuracy (micro)"] == pytest.approx(7 / 10)
    assert figures["final_status_accuracy (micro)"] == pytest.approx(3 / 5)
    assert figures["dependency_f1 (micro)"] == pytest.approx(0.5)
    assert figures["latency_ms per turn (mean)"] == pytest.approx(14.5) and figures["latency_ms per turn (p95)"] == 10.0
    empty = run_figures([], [], [])
    assert empty["detection_f1 (macro)"] is None and empty["latency_ms per turn (p95)"] is None
