"""Results: checks, reward components, rewards and finished conversations."""

from __future__ import annotations

import attrs

from bench_kernel.schema.events import Event
from bench_kernel.schema.messages import Message, TerminationReason


@attrs.frozen(kw_only=True)
class Check:
    """One check inside a component: what was checked, whether it held, and why."""

    subject: str
    met: bool
    detail: str = ""


@attrs.frozen(kw_only=True)
class ComponentScore:
    """One reward component's score, with the checks behind it."""

    component: str
    score: float | None
    checks: list[Check] = attrs.field(factory=list)
    note: str = ""
    error: str | None = None


@attrs.frozen(kw_only=True)
class RewardInfo:
    """A conversation's reward and every component's own score."""

    reward: float
    reward_basis: list[str] = attrs.field(factory=list)
    components: list[ComponentScore] = attrs.field(factory=list)
    note: str = ""
    rule: str = "product"
    """The combination rule that produced the reward."""

    def component(self, name: str) -> ComponentScore | None:
        """The component with this name, if it was computed."""
        return next((c for c in self.components if c.component == name), None)


ATTRIBUTION_LABELS = ("agent", "user-simulator", "task", "judge", "infrastructure")
"""Who a failure may be attributed to; reports count conversations "attributable to the agent" by it (docs/attribution.md)."""
AGENT, USER_SIMULATOR, TASK, JUDGE, INFRASTRUCTURE = ATTRIBUTION_LABELS


@attrs.frozen(kw_only=True)
class Attribution:
    """Who a failed conversation's failure is attributed to, by which rule, and why (docs/attribution.md)."""

    label: str
    """One of ATTRIBUTION_LABELS: agent, user-simulator, task, judge or infrastructure."""
    rule: str
    evidence: str
    source: str = "rules"
    """rules (a registered attributor: bench-trust's rules) or review (a reviewer model's verdict, bench-review)."""

    def evidence_record(self) -> dict[str, str]:
        """What the conversations table keeps in `attribution_evidence`."""
        return {"rule": self.rule, "source": self.source, "evidence": self.evidence}


def is_success(reward: float | None) -> bool:
    """tau2's success rule: reward within 1e-6 of 1."""
    return reward is not None and abs(reward - 1.0) <= 1e-6


@attrs.frozen(kw_only=True)
class ConversationResult:
    """A finished, evaluated conversation, as metrics and the store see it."""

    run_id: str
    arm: str
    """'agent' for the evaluated agent, 'baseline' for the do-nothing reference."""
    task_id: str
    trial: int
    seed: int
    agent: str
    user: str
    termination_reason: TerminationReason
    messages: list[Message]
    reward_info: RewardInfo | None
    started_utc: str
    ended_utc: str
    duration_ms: int
    error: str | None = None
    agent_cost: float | None = None
    user_cost: float | None = None
    events: list[Event] = attrs.field(factory=list)
    """Events emitted during the conversation and by its metrics, in order."""
    channel: str = "identity"
    attributes: dict[str, str] = attrs.field(factory=dict)
    """The task's attributes (domain, persona, plugin-derived ones) for report breakdowns."""
    attribution: Attribution | None = None
    """Who the failure is attributed to (None for a conversation that passed)."""
    retry: int = 0
    """0 for the unit's first conversation; n for its n-th replay by `bench run --retry-attributed`."""

    @property
    def conversation_id(self) -> str:
        """Stable id of this (run, arm, task, trial), and of the retry when it is one."""
        base = f"{self.run_id}/{self.arm}/{self.task_id}/{self.trial}"
        return f"{base}/retry{self.retry}" if self.retry else base

    @property
    def reward(self) -> float | None:
        """The conversation's reward, None when it was not evaluated."""
        return None if self.reward_info is None else self.reward_info.reward
