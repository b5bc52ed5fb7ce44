"""Per-goal partial credit: the GOALS reward component and the `goal-credit` combination rule.

GOALS has one check per goal of the task (met when the goal's last recorded status is completed);
its score is the share of goals completed. `goal-credit` turns the basis into the reward: each goal
earns 1 when its GOALS check holds and every check of another basis component tied to it (subject
starting with `<goal id>:`) holds; the reward is the share of goals that earn it, over every goal
(`"over": "all"`, the default) or over decided goals only (`"over": "decided"`, dGCR's denominator).
Unlike tau2's product it does not zero a conversation that ended early: ATOD scores the goals reached.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import Check, CombinationRule, ComponentScore, ConfigError, RewardComponent, RewardContext, RewardInfo, Task, TerminationReason

from .goals import DECIDED, task_goals
from .tracking import event_changes, lifecycles

COMPONENT = "GOALS"
OVER = ("all", "decided")


@attrs.define(kw_only=True)
class GoalsComponent(RewardComponent):
    """Per goal: completed or not, from the conversation's goal.status events."""

    name: str = COMPONENT
    description: str = "One check per task goal, met when its last recorded status is completed (ATOD's goal list)."
    always: bool = True

    def applies(self, task: Task) -> bool:
        """Only multi-goal tasks have goals to score."""
        return bool(task_goals(task))

    async def score(self, context: RewardContext) -> ComponentScore:
        """Share of the task's goals whose final status is completed; each check's detail is the final status."""
        goals = task_goals(context.task)
        lives = lifecycles(goals, event_changes(context.events, context.messages))
        checks = [Check(subject=g.id, met=lives[g.id].final_status == "completed", detail=lives[g.id].final_status) for g in goals]
        score = sum(c.met for c in checks) / len(checks) if checks else None
        return ComponentScore(component=COMPONENT, score=score, checks=checks, note="" if checks else "task has no goals")


def tied_checks(goal_id: str, components: Sequence[ComponentScore]) -> list[Check]:
    """Checks of other components that name a goal (subject `goal_1: ...`)."""
    prefix = f"{goal_id}:"
    return [c for comp in components if comp.component != COMPONENT for c in comp.checks if c.subject.startswith(prefix)]


@attrs.define(kw_only=True)
class GoalCreditRule(CombinationRule):
    """Per-goal partial credit: the share of goals completed (and whose tied checks hold)."""

    name: str = "goal-credit"
    description: str = "Share of the task's goals completed (ATOD); over all goals or over decided ones; no premature-stop rule."

    def validate(self, params: Mapping[str, Any], basis: Sequence[str]) -> None:
        """The basis must hold GOALS; `over` is 'all' or 'decided'."""
        if COMPONENT not in basis:
            raise ConfigError(f"goal-credit needs {COMPONENT} in the reward_basis (got {', '.join(basis) or 'none'})")
        over = params.get("over", "all")
        if over not in OVER:
            raise ConfigError(f"goal-credit params.over must be one of {', '.join(OVER)}, got {over!r}")

    def combine(
        self, basis: Sequence[str], components: Sequence[ComponentScore], termination: TerminationReason, params: Mapping[str, Any]
    ) -> RewardInfo:
        """credited goals / counted goals (0 with a note when there is none to count)."""
        kept = [c for c in components if c.component in basis]
        goals = next((c for c in kept if c.component == COMPONENT), None)
        if goals is None or goals.score is None:
            note = f"{COMPONENT} could not be evaluated" + (f": {goals.error}" if goals is not None and goals.error else "")
            return RewardInfo(reward=0.0, reward_basis=list(basis), components=list(components), note=note, rule=self.name)
        counted = [c for c in goals.checks if params.get("over", "all") == "all" or c.detail in DECIDED]
        credited = [c for c in counted if c.met and all(t.met for t in tied_checks(c.subject, kept))]
        reward = len(credited) / len(counted) if counted else 0.0
        note = f"{len(credited)} of {len(counted)} goals credited" + ("" if counted else " (no goal to count)")
        return RewardInfo(reward=reward, reward_basis=list(basis), components=list(components), note=note, rule=self.name)
