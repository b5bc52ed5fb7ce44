"""Asking the run's judge about NL assertions so that it cannot pass by accident (docs/judges.md).

Every answer is checked: one verdict per assertion, about that assertion, with a true/false `met`. A failed
judgment (an unreadable or incomplete reply, an unreachable judge model) asks the judge again, up to `retries`
times, each time with a fresh seed derived by sha256; the conversation is never played again. A panel asks N
judges (N odd) and keeps the majority per assertion with the share of members that agree. When a judgment still
fails, the NL_ASSERTION component carries the error and the conversation's reward cannot be 1.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import BudgetExceededError, Check, Judge, JudgeRequest, Profile

JUDGE_RETRIES = 2
"""Retries of a failed judgment by default (`--judge-retries`)."""
PANEL_EVENT = "judge.panel"
"""The event a panel's judgment records: members, votes and agreement per assertion."""
FAILED_ATTEMPT_EVENT = "judge.attempt_failed"
"""The event each failed attempt records (why it failed, which member and attempt)."""


class JudgmentFailed(Exception):
    """Every attempt of one panel member failed; the message says why the last one did."""


def judge_seed(seed: int, task_id: str, member: int, attempt: int) -> int:
    """The seed of one judgment: the conversation's for the first, else sha256 of it, the task, member and attempt."""
    if member == 0 and attempt == 0:
        return seed
    digest = hashlib.sha256(f"{seed}:{task_id}:judge:{member}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:4], "big")


def verdict_problem(checks: Any, assertions: Sequence[str]) -> str | None:
    """Why a judge's answer is not one verdict per assertion, in order, each with a bool `met`; None when it is."""
    if not isinstance(checks, list | tuple):
        return f"the judge answered {type(checks).__name__}, not a list of verdicts"
    if len(checks) != len(assertions):
        return f"{len(checks)} verdict(s) for {len(assertions)} assertion(s)"
    for n, (check, assertion) in enumerate(zip(checks, assertions, strict=True), start=1):
        if not isinstance(check, Check):
            return f"verdict {n} is a {type(check).__name__}, not a Check"
        if check.subject != assertion:
            return f"verdict {n} is about {check.subject[:80]!r}, not assertion {n} {assertion[:80]!r}"
        if not isinstance(check.met, bool):
            return f"verdict {n} says met={check.met!r}, not true or false"
    return None


@attrs.frozen(kw_only=True)
class Judgment:
    """The checks a judgment settled on, with what it took to get them."""

    checks: list[Check]
    failed_attempts: list[dict[str, Any]] = attrs.field(factory=list)
    """Each failed attempt: member, attempt, seed and error."""
    votes: list[list[bool]] | None = None
    """With a panel: each assertion's votes, member by member."""

    @property
    def agreement(self) -> list[float] | None:
        """With a panel: per assertion, the share of members that voted with the majority."""
        if self.votes is None:
            return None
        return [max(v.count(True), v.count(False)) / len(v) for v in self.votes]

    def note(self) -> str:
        """The component's note: retries it took, and a panel's agreement."""
        parts = []
        if self.failed_attempts:
            parts.append(f"judged after {len(self.failed_attempts)} failed attempt(s): {self.failed_attempts[-1]['error'][:200]}")
        agreement = self.agreement
        if self.votes is not None and agreement is not None:
            parts.append(f"panel of {len(self.votes[0]) if self.votes else 0}: agreement {mean(agreement):.3f}")
        return "; ".join(parts)

    def panel_record(self) -> dict[str, Any] | None:
        """The panel event's data (None without a panel)."""
        agreement = self.agreement
        if self.votes is None or agreement is None:
            return None
        return {
            "members": len(self.votes[0]) if self.votes else 0,
            "agreement": mean(agreement),
            "assertions": [
                {"assertion": c.subject, "met": c.met, "votes": v, "agreement": a} for c, v, a in zip(self.checks, self.votes, agreement, strict=True)
            ],
        }


def mean(values: Sequence[float]) -> float:
    """The mean, 1.0 for no values (no assertion: nothing to disagree on)."""
    return round(sum(values) / len(values), 6) if values else 1.0


@attrs.define(kw_only=True)
class JudgeRounds(Judge):
    """The run's judge asked with bounded retries and, with a panel, by N members: its answers checked every time."""

    inner: Judge
    retries: int = JUDGE_RETRIES
    panel: int = 1
    model_roles: tuple[str, ...] = ()

    @classmethod
    def around(cls, judge: Judge, *, retries: int = JUDGE_RETRIES, panel: int = 1) -> JudgeRounds:
        """The judge with these rounds (a judge already wrapped is wrapped again around its own inner judge)."""
        inner = judge.inner if isinstance(judge, JudgeRounds) else judge
        return cls(
            name=inner.name,
            description=inner.description,
            inner=inner,
            retries=retries,
            panel=panel,
            model_roles=tuple(getattr(inner, "model_roles", ())),
        )

    async def judge(self, request: JudgeRequest) -> list[Check]:
        """The settled checks (JudgmentFailed when a member never answered in full)."""
        return (await self.judgment(request)).checks

    async def profile_deviations(self, profile: Profile) -> list[str] | None:
        """The inner judge's, and a panel's: the profile's judge decides once."""
        found = await self.inner.profile_deviations(profile)
        panel = [f"a panel of {self.panel} judgments per conversation (--judge-panel), where the profile's judge decides once"]
        return None if found is None else [*found, *(panel if self.panel > 1 else [])]

    async def judgment(self, request: JudgeRequest, failed: list[dict[str, Any]] | None = None) -> Judgment:
        """Each member's checked verdict (retried), then the majority per assertion; failed attempts go to `failed`."""
        failed = [] if failed is None else failed
        verdicts = [await self._member(request, member, failed) for member in range(self.panel)]
        if self.panel == 1:
            return Judgment(checks=verdicts[0], failed_attempts=failed)
        votes = [[v[i].met for v in verdicts] for i in range(len(request.assertions))]
        return Judgment(checks=[_majority(i, verdicts, votes[i]) for i in range(len(votes))], failed_attempts=failed, votes=votes)

    async def _member(self, request: JudgeRequest, member: int, failed: list[dict[str, Any]]) -> list[Check]:
        reason = ""
        for attempt in range(self.retries + 1):
            seed = judge_seed(request.seed, request.task.id, member, attempt)
            asked = attrs.evolve(request, seed=seed, attempt=attempt, member=member)
            try:
                checks = await self.inner.judge(asked)
            except BudgetExceededError as exc:  # asking again cannot help; the run stops by its cost cap
                raise JudgmentFailed(_failure(self.inner, exc, failed, member, attempt, seed)) from exc
            except Exception as exc:  # noqa: BLE001 - an unreadable reply or an unreachable model: ask again
                reason = _failure(self.inner, exc, failed, member, attempt, seed)
                continue
            problem = verdict_problem(checks, request.assertions)
            if problem is None:
                return list(checks)
            reason = _failure(self.inner, problem, failed, member, attempt, seed)
        raise JudgmentFailed(f"{reason} (after {self.retries + 1} attempt{'s' if self.retries else ''})")


def _failure(judge: Judge, error: BaseException | str, failed: list[dict[str, Any]], member: int, attempt: int, seed: int) -> str:
    text = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    failed.append({"member": member, "attempt": attempt, "seed": seed, "error": text[:500]})
    return f"judge {judge.name!r}: {text}"


def _majority(index: int, verdicts: list[list[Check]], votes: list[bool]) -> Check:
    met = votes.count(True) > len(votes) // 2
    agreeing = [v[index] for v in verdicts if v[index].met is met]
    detail = f"panel: {votes.count(True)} of {len(votes)} met; " + agreeing[0].detail
    return Check(subject=agreeing[0].subject, met=met, detail=detail)
