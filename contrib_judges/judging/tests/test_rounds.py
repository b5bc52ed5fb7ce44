"""Judging in rounds (docs/judges.md): every judge's answer checked, retries, panels, no pass by accident."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import attrs
import pytest
from bench_judging import JudgeRounds, JudgmentFailed, judge_seed, nl_component, verdict_problem

from bench_kernel import Check, ComponentScore, EvaluationCriteria, Judge, JudgeRequest, Profile, Task, UserScenario, load_profile

ASSERTIONS = ["The agent greets.", "The agent says goodbye."]
TASK = Task(
    id="t1",
    user_scenario=UserScenario(instructions="x"),
    evaluation_criteria=EvaluationCriteria(nl_assertions=ASSERTIONS, reward_basis=["DB", "NL_ASSERTION"]),
)


@attrs.define(kw_only=True)
class ListJudge(Judge):
    """Answers each call with the next of its answers (a list of checks, or an exception to raise)."""

    answers: list[Any]
    seeds: list[int] = attrs.field(factory=list)

    async def judge(self, request: JudgeRequest) -> list[Check]:
        self.seeds.append(request.seed)
        answer = self.answers.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer


def checks(*met: Any, subjects: Sequence[str] = ASSERTIONS) -> list[Check]:
    return [Check(subject=s, met=m, detail=f"d{i}") for i, (s, m) in enumerate(zip(subjects, met, strict=True))]


def judged(judge: Judge) -> ComponentScore:
    return asyncio.run(nl_component(TASK, [], judge, seed=11))


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        (checks(True, subjects=ASSERTIONS[:1]), "1 verdict(s) for 2 assertion(s)"),
        (checks(True, True, subjects=[ASSERTIONS[1], ASSERTIONS[0]]), "verdict 1 is about"),
        (checks(True, "yes"), "verdict 2 says met='yes'"),
        ("all met", "not a list of verdicts"),
    ],
)
def test_an_answer_that_is_not_one_verdict_per_assertion_is_refused(answer: Any, problem: str) -> None:
    assert problem in (verdict_problem(answer, ASSERTIONS) or "")
    component = judged(ListJudge(name="plugin-judge", answers=[answer] * 3))
    assert component.score is None and component.error is not None and problem in component.error
    assert component.error.startswith("judge error: judge 'plugin-judge': ")


def test_retries_use_fresh_seeds_and_stop_at_the_first_full_verdict() -> None:
    judge = ListJudge(name="j", answers=[RuntimeError("unreachable"), checks(True, subjects=ASSERTIONS[:1]), checks(True, False)])
    component = judged(judge)
    assert (component.score, component.error) == (0.0, None)
    assert judge.seeds[0] == 11 and len(set(judge.seeds)) == 3
    assert judge.seeds == [judge_seed(11, "t1", 0, a) for a in range(3)]
    assert "judged after 2 failed attempt(s)" in component.note


def test_no_retry_when_retries_are_zero() -> None:
    judge = ListJudge(name="j", answers=[RuntimeError("down"), checks(True, True)])
    with pytest.raises(JudgmentFailed, match=r"down \(after 1 attempt\)"):
        asyncio.run(JudgeRounds.around(judge, retries=0).judgment(JudgeRequest(task=TASK, messages=[], assertions=ASSERTIONS, seed=1)))


def test_a_panel_takes_the_majority_of_distinct_seeds() -> None:
    judge = ListJudge(name="j", answers=[checks(True, False), checks(False, False), checks(True, True)])
    rounds = JudgeRounds.around(judge, panel=3)
    judgment = asyncio.run(rounds.judgment(JudgeRequest(task=TASK, messages=[], assertions=ASSERTIONS, seed=5)))
    assert [c.met for c in judgment.checks] == [True, False]
    assert judgment.agreement == pytest.approx([2 / 3, 2 / 3])
    assert judgment.checks[1].detail == "panel: 1 of 3 met; d1"
    assert len(set(judge.seeds)) == 3 and judge.seeds[0] == 5


@attrs.define(kw_only=True)
class FaithfulJudge(Judge):
    """Declares that it sends the profile's judge request."""

    async def profile_deviations(self, profile: Profile) -> list[str] | None:
        return []


def test_a_panel_departs_from_the_profiles_judge_and_retries_do_not() -> None:
    profile = load_profile(None)
    assert asyncio.run(JudgeRounds.around(FaithfulJudge(name="f"), retries=2).profile_deviations(profile)) == []
    assert asyncio.run(JudgeRounds.around(FaithfulJudge(name="f"), panel=3).profile_deviations(profile)) == [
        "a panel of 3 judgments per conversation (--judge-panel), where the profile's judge decides once"
    ]
    assert asyncio.run(JudgeRounds.around(Judge(name="opaque"), panel=3).profile_deviations(profile)) is None
