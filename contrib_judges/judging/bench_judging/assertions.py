"""The NL_ASSERTION component's score: the task's NL assertions, judged by the run's judge in rounds (rounds.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench_kernel import ComponentScore, Event, EventLog, Judge, JudgeRequest, Message, Profile, RewardType, Task, all_met, load_profile

from .rounds import FAILED_ATTEMPT_EVENT, PANEL_EVENT, JudgeRounds, JudgmentFailed

NL = RewardType.NL_ASSERTION.value
JUDGE_ERROR_NOTE = "judge error"
"""How an NL_ASSERTION component's error begins when the judge never gave a full verdict (attribution reads it)."""
JUDGE_SOURCE = "bench-kernel:judge"
"""The source of the events a judgment records: the one runs stored while judging was the kernel's, kept so that
readers of stored runs (bench rescore, bench-trust's attribution) find old and new judgments alike."""


async def nl_component(
    task: Task,
    messages: Sequence[Message],
    judge: Judge | None,
    seed: int,
    models: Any = None,
    profile: Profile | None = None,
    events: EventLog | None = None,
) -> ComponentScore:
    """NL assertions, judged by the run's judge (retried, checked, by a panel: rounds.py); without one, not evaluated.

    A judgment that fails after its retries is the component's error (docs/judges.md): never a pass, never a replay.
    """
    assertions = (task.evaluation_criteria.nl_assertions if task.evaluation_criteria else None) or []
    if not assertions:
        return all_met(NL, [])
    if judge is None:
        return ComponentScore(component=NL, score=None, note="no judge configured", error="no judge")
    rounds = judge if isinstance(judge, JudgeRounds) else JudgeRounds.around(judge)
    request = JudgeRequest(task=task, messages=messages, assertions=assertions, seed=seed, models=models, profile=profile or load_profile(None))
    failed: list[dict[str, Any]] = []
    try:
        judgment = await rounds.judgment(request, failed)
    except JudgmentFailed as exc:
        _record_judging(events, failed, None)
        return ComponentScore(component=NL, score=None, note=f"{JUDGE_ERROR_NOTE}: {exc}", error=f"{JUDGE_ERROR_NOTE}: {exc}")
    _record_judging(events, failed, judgment.panel_record())
    return all_met(NL, judgment.checks, judgment.note())


def _record_judging(events: EventLog | None, failed: list[dict[str, Any]], panel: dict[str, Any] | None) -> None:
    if events is None:
        return
    for attempt in failed:
        events.emit(Event(kind=FAILED_ATTEMPT_EVENT, data=attempt), source=JUDGE_SOURCE)
    if panel is not None:
        events.emit(Event(kind=PANEL_EVENT, data=panel), source=JUDGE_SOURCE)


def needing_a_judge(tasks: Sequence[Task]) -> list[str]:
    """The ids of the tasks whose reward rests on NL assertions to judge (tau2 retail: 40, not every NL-basis one)."""
    return [t.id for t in tasks if t.evaluation_criteria and t.evaluation_criteria.nl_assertions_to_judge()]
