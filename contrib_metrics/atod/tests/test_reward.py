"""The GOALS component and the goal-credit rule on hand-built results."""

from __future__ import annotations

import asyncio

import pytest
from atod_helpers import context, events, goal, say, task, user
from bench_atod.reward import GoalCreditRule, GoalsComponent

from bench_kernel import Check, ComponentScore, ConfigError, RewardContext, TerminationReason

GOALS = [goal("book", "book a room"), goal("pay", "pay the room", deps=["book"]), goal("taxi", "order a taxi"), goal("cafe", "find a cafe")]
TALK = [user("Book a room, pay it, and order a taxi."), say("Booked."), say("Payment failed."), user("Skip the taxi."), say("Ok.")]


def goals_score(changes) -> ComponentScore:
    ctx = context(TALK, events(*changes), task(GOALS))
    reward_context = RewardContext(
        task=ctx.task, messages=ctx.messages, termination=TerminationReason.USER_STOP, final_env=ctx.final_env, gold=ctx.gold, events=ctx.events
    )
    return asyncio.run(GoalsComponent().score(reward_context))


CHANGES = [(0, "book", "open"), (0, "pay", "open"), (0, "taxi", "open"), (1, "book", "completed"), (2, "pay", "failed"), (3, "taxi", "abandoned")]


def test_goals_component_one_check_per_goal_from_the_events() -> None:
    scored = goals_score(CHANGES)
    assert [(c.subject, c.met, c.detail) for c in scored.checks] == [
        ("book", True, "completed"),
        ("pay", False, "failed"),
        ("taxi", False, "abandoned"),
        ("cafe", False, "not_mentioned"),
    ]
    assert scored.score == 0.25
    assert GoalsComponent().applies(task(GOALS)) and not GoalsComponent().applies(task([]))


def test_goal_credit_over_all_goals_and_over_decided_goals() -> None:
    scored = goals_score(CHANGES)
    rule = GoalCreditRule()
    everything = rule.combine(["GOALS"], [scored], TerminationReason.USER_STOP, {})
    assert everything.reward == 0.25 and everything.note == "1 of 4 goals credited" and everything.rule == "goal-credit"
    decided = rule.combine(["GOALS"], [scored], TerminationReason.MAX_STEPS, {"over": "decided"})
    assert decided.reward == 0.5  # dGCR's denominator; an early end does not zero it (no premature-stop rule)


def test_a_goal_earns_credit_only_when_the_checks_tied_to_it_hold() -> None:
    scored = goals_score([*CHANGES, (4, "pay", "completed")])
    db = ComponentScore(
        component="ENV_ASSERTION",
        score=0.5,
        checks=[
            Check(subject="book: room 12 reserved", met=True),
            Check(subject="pay: invoice settled", met=False),
            Check(subject="unrelated check", met=False),
        ],
    )
    reward = GoalCreditRule().combine(["GOALS", "ENV_ASSERTION"], [scored, db], TerminationReason.USER_STOP, {})
    assert reward.reward == 0.25  # book (its check holds); pay is completed but its tied check fails; the untied check is ignored
    # A component outside the basis is not consulted.
    assert GoalCreditRule().combine(["GOALS"], [scored, db], TerminationReason.USER_STOP, {}).reward == 0.5


def test_goal_credit_without_goals_or_with_a_failed_component() -> None:
    broken = ComponentScore(component="GOALS", score=None, error="boom")
    info = GoalCreditRule().combine(["GOALS"], [broken], TerminationReason.USER_STOP, {})
    assert info.reward == 0.0 and "GOALS could not be evaluated: boom" in info.note
    nothing = GoalCreditRule().combine(
        ["GOALS"], [ComponentScore(component="GOALS", score=1.0, checks=[])], TerminationReason.USER_STOP, {"over": "decided"}
    )
    assert nothing.reward == 0.0 and "no goal to count" in nothing.note


def test_goal_credit_validates_its_basis_and_params() -> None:
    GoalCreditRule().validate({"over": "decided"}, ["GOALS", "DB"])
    with pytest.raises(ConfigError, match="needs GOALS in the reward_basis"):
        GoalCreditRule().validate({}, ["DB"])
    with pytest.raises(ConfigError, match=r"params\.over must be one of all, decided"):
        GoalCreditRule().validate({"over": "some"}, ["GOALS"])
