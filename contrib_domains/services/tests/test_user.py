"""The planned user: moves in order with their events, asks again when a goal is not done, abandons, stops."""

from __future__ import annotations

import asyncio

from bench_atod import GoalStatusChange
from bench_services.plan import Move, UserPlan
from bench_services.user import RETRIES, PlannedSession, PlannedUser

from bench_kernel import AssistantMessage, ConversationSetup, DomainData, EventLog, GoalShift, Mode, UserMessage

REPLY = [AssistantMessage(content="Done.")]


def session(data: DomainData, plan: UserPlan) -> PlannedSession:
    task = data.tasks[0]
    setup = ConversationSetup(task=task, domain="services", mode=Mode.DEFAULT, seed=0, policy="", agent_tools=[], user_tools=None, events=EventLog())
    return PlannedSession(setup, plan)


def say(user: PlannedSession) -> str:
    message = asyncio.run(user.respond(REPLY))
    assert isinstance(message, UserMessage)
    return message.content or ""


def statuses(user: PlannedSession) -> list[tuple[str, str]]:
    return [(c.goal_id, c.status) for _, c in user.setup.events.typed(GoalStatusChange)]


def test_moves_open_goals_shift_between_them_and_abandon(data: DomainData) -> None:
    plan = UserPlan(
        moves=[
            Move(goal="g1", act="raise", say="Find hotels."),
            Move(goal="g2", act="mention", say="Maybe a car."),
            Move(goal="g2", act="abandon", say="No car."),
        ]
    )
    user = session(data, plan)
    assert [say(user) for _ in range(3)] == ["Find hotels.", "Maybe a car.", "No car."]
    assert statuses(user) == [("g1", "open"), ("g2", "open"), ("g2", "abandoned")]
    assert [s.goal_index for _, s in user.setup.events.typed(GoalShift)] == [1, 2]
    assert "###STOP###" in say(user)


def test_a_move_whose_goal_is_not_done_is_asked_again_then_left(data: DomainData) -> None:
    plan = UserPlan(moves=[Move(goal="g1", act="raise", say="Book it.", expect="pending"), Move(goal="g2", act="raise", say="Weather?")])
    user = session(data, plan)
    assert say(user) == "Book it."
    asked = [say(user) for _ in range(RETRIES)]
    assert all("Book it." in a and "Could you" in a for a in asked)
    assert say(user) == "Weather?"


def test_a_done_goal_lets_the_user_move_on_and_a_pending_one_is_asked_about_before_stopping(data: DomainData) -> None:
    goal = data.tasks[0].extension("goals")[0]
    plan = UserPlan(moves=[Move(goal=goal.id, act="raise", say="Book it.", expect="pending")])
    user = session(data, plan)
    say(user)
    user.setup.events.emit(GoalStatusChange(goal_id=goal.id, status="pending", previous_status="open"), source="services")
    question = say(user)
    assert "gone through" in question and goal.content in question
    assert "###STOP###" in say(user)


def test_a_goal_that_failed_is_opened_again_when_resumed(data: DomainData) -> None:
    plan = UserPlan(moves=[Move(goal="g1", act="raise", say="Book it."), Move(goal="g1", act="resume", say="Try another.")])
    user = session(data, plan)
    say(user)
    user.setup.events.emit(GoalStatusChange(goal_id="g1", status="failed", previous_status="pending"), source="services")
    say(user)
    assert statuses(user) == [("g1", "open"), ("g1", "failed"), ("g1", "open")]


def test_without_a_plan_the_user_speaks_its_scenario_then_stops(data: DomainData) -> None:
    import attrs

    task = attrs.evolve(data.tasks[0], extensions={})
    setup = ConversationSetup(task=task, domain="services", mode=Mode.DEFAULT, seed=0, policy="", agent_tools=[], user_tools=None)
    user = PlannedUser().start(setup)
    first = asyncio.run(user.respond([]))
    assert "errands" in (first.content or "")
    assert "###STOP###" in (asyncio.run(user.respond(REPLY)).content or "")
