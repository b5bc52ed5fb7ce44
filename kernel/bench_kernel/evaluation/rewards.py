"""Open evaluation: reward components and combination rules that plugins register and task files name (`reward_basis`, `reward_rule`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel.errors import ConfigError
from bench_kernel.evaluation.metric import Judge
from bench_kernel.schema.events import EventLog
from bench_kernel.schema.messages import Message, TerminationReason
from bench_kernel.schema.results import Check, ComponentScore, RewardInfo
from bench_kernel.schema.tasks import RewardRule, Task
from bench_kernel.tools.environment import Environment

STOPPED = frozenset({TerminationReason.USER_STOP, TerminationReason.AGENT_STOP})
DEFAULT_RULE = "product"


@attrs.frozen(kw_only=True)
class RewardContext:
    """What a reward component may look at: the task, the trajectory, the final and gold states, events, judge, models."""

    task: Task
    messages: Sequence[Message]
    termination: TerminationReason
    final_env: Environment
    gold: Any
    """The task's GoldReplay (gold hashes, failing gold actions, assertion checks on the gold state)."""
    judge: Any = None
    seed: int = 0
    models: Any = None
    """The conversation's model access (calls are ledgered, cached and capped like the participants')."""
    events: EventLog = attrs.field(factory=EventLog)
    profile: Any = None
    """The run's profile (bench_kernel.Profile); None is bench's own."""


@attrs.define(kw_only=True)
class RewardComponent:
    """Base class of registered reward components: `score(context)` gives one ComponentScore."""

    name: str
    description: str = ""
    always: bool = False
    """Computed (and stored with its checks) for every task, even when not in the task's basis."""
    code_fingerprint: str = ""
    """What identifies the component's code, as `Agent.code_fingerprint`: part of the run's identity when not empty."""

    def applies(self, task: Task) -> bool:
        """True when this component has something to score for the task (computed only then, or when in the basis)."""
        return True

    async def score(self, context: RewardContext) -> ComponentScore:
        """This component's score for one conversation, with the checks behind it."""
        raise NotImplementedError

    def prepare_judge(self, judge: Judge | None, config: Any, tasks: Sequence[Task]) -> Judge | None:
        """The run's judge as this component has it asked, by metrics too; called once per run (ConfigError refuses it)."""
        return judge

    async def resume(self, ctx: Any) -> Mapping[str, Any]:
        """Score stored conversations again when a run resumes, before it plays on; returned into the `run.resumed` event."""
        return {}


@attrs.define(kw_only=True)
class CombinationRule:
    """Base class of registered combination rules: `combine` turns basis components into a reward."""

    name: str
    description: str = ""
    code_fingerprint: str = ""
    """What identifies the rule's code, as `Agent.code_fingerprint`: part of the run's identity when not empty."""

    def validate(self, params: Mapping[str, Any], basis: Sequence[str]) -> None:
        """Raise ConfigError when the parameters do not fit this rule (checked before a run starts)."""

    def combine(
        self, basis: Sequence[str], components: Sequence[ComponentScore], termination: TerminationReason, params: Mapping[str, Any]
    ) -> RewardInfo:
        """The conversation's reward from its components."""
        raise NotImplementedError


@attrs.define(kw_only=True)
class ProductRule(CombinationRule):
    """tau2's rule: the product of the basis components, 0 unless the conversation ended by a stop."""

    name: str = DEFAULT_RULE
    description: str = "Product of the basis components; 0 for a conversation that did not end by a stop (tau2)."

    def combine(
        self, basis: Sequence[str], components: Sequence[ComponentScore], termination: TerminationReason, params: Mapping[str, Any]
    ) -> RewardInfo:
        """Multiply the basis components; a conversation that did not stop scores 0."""
        reward, notes = 1.0, list[str]()
        by_name = {c.component: c for c in components}
        for kind in basis:
            component = by_name.get(kind)
            if component is None or component.score is None:
                reward, notes = 0.0, [*notes, f"{kind} could not be evaluated"]
            else:
                reward *= component.score
        if termination not in STOPPED:
            reward, notes = 0.0, [*notes, f"terminated prematurely: {termination.value}"]
        return RewardInfo(reward=reward, reward_basis=list(basis), components=list(components), note="; ".join(notes), rule=self.name)


def all_met(name: str, checks: list[Check], note: str = "") -> ComponentScore:
    """A component that scores 1 when every check holds, else 0."""
    return ComponentScore(component=name, score=1.0 if all(c.met for c in checks) else 0.0, checks=checks, note=note)


@attrs.frozen(kw_only=True)
class Evaluation:
    """The reward components and combination rules a run can use, by name."""

    components: Mapping[str, RewardComponent]
    rules: Mapping[str, CombinationRule]

    def rule_for(self, task: Task) -> tuple[CombinationRule, Mapping[str, Any]]:
        """The task's combination rule and its parameters (the product rule by default)."""
        criteria = task.evaluation_criteria
        chosen = (criteria.reward_rule if criteria else None) or RewardRule()
        if chosen.name not in self.rules:
            raise ConfigError(
                f"task {task.id!r} names reward rule {chosen.name!r}, which no loaded plugin registers "
                f"(registered: {', '.join(sorted(self.rules)) or 'none'})"
            )
        return self.rules[chosen.name], chosen.params

    def to_compute(self, task: Task) -> list[RewardComponent]:
        """The components computed for a task: those always computed that apply, then the rest of its basis."""
        basis = task.evaluation_criteria.reward_basis if task.evaluation_criteria else []
        return [c for c in self.components.values() if (c.always and c.applies(task)) or c.name in basis]

    def prepare_judge(self, judge: Judge | None, config: Any, tasks: Sequence[Task]) -> Judge | None:
        """The run's judge as every component has it asked (`RewardComponent.prepare_judge`, in name order)."""
        for name in sorted(self.components):
            judge = self.components[name].prepare_judge(judge, config, tasks)
        return judge

    def validate(self, tasks: Sequence[Task]) -> None:
        """Refuse tasks that name components or rules no loaded plugin registers, or bad rule parameters."""
        for task in tasks:
            criteria = task.evaluation_criteria
            if criteria is None:
                continue
            unknown = [name for name in criteria.reward_basis if name not in self.components]
            if unknown:
                raise ConfigError(
                    f"task {task.id!r} names reward component {unknown[0]!r} in its reward_basis, which no "
                    f"loaded plugin registers (registered: {', '.join(sorted(self.components))})"
                )
            rule, params = self.rule_for(task)
            rule.validate(params, criteria.reward_basis)
