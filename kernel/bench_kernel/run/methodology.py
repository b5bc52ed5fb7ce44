"""Standard or custom: whether a run's participants send what its profile fixes, decided before any conversation (docs/frameworks.md)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from bench_kernel.conversation.participants import Agent, UserSimulator
from bench_kernel.evaluation.metric import Judge
from bench_kernel.profiles.profile import Profile

METHODOLOGY_EVENT = "run.methodology"
"""The run's verdict: {"verdict": "standard" | "custom", "profile": label, "reasons": [...]}."""


async def profile_methodology(agent: Agent, user: UserSimulator | None, config: Any, profile: Profile, judge: Judge | None = None) -> dict[str, Any]:
    """The verdict under the run's profile, with every reason it is custom (`judge`: when some reward rests on NL assertions)."""
    reasons = []
    if config.exposure not in (None, "none"):
        reasons.append(f"the agent is told about the customer (--exposure {config.exposure})")
    reasons += await _deviations(f"agent {agent.name!r}", lambda: agent.profile_deviations(dict(config.agent_options or {}), profile))
    if user is not None:
        reasons += await _deviations(f"user simulator {user.name!r}", lambda: user.profile_deviations(dict(config.user_options or {}), profile))
    if judge is not None:
        reasons += await _deviations(f"judge {judge.name!r}", lambda: judge.profile_deviations(profile), "judge request")
    return {"verdict": "custom" if reasons else "standard", "profile": profile.label(), "reasons": reasons}


async def _deviations(who: str, check: Callable[[], Awaitable[list[str] | None]], what: str = "requests") -> list[str]:
    """Each way a participant's (or the judge's) requests depart from the profile, as `who: reason`."""
    try:
        found = await check()
    except Exception as exc:  # noqa: BLE001 - a failing check makes the run custom, never stops it
        return [f"{who}: its profile check failed ({type(exc).__name__}: {exc})"]
    if found is None:
        return [f"{who} does not declare that it sends the profile's {what}"]
    return [f"{who}: {reason}" for reason in found]


def methodology_lines(verdict: Mapping[str, Any] | None) -> list[str]:
    """The run header's lines: the verdict under the profile, then each reason for custom."""
    if not verdict:
        return []
    head = f"  methodology: {verdict['verdict']} under profile {verdict['profile']}"
    return [head + (":" if verdict["reasons"] else ""), *(f"    - {reason}" for reason in verdict["reasons"])]
