"""Scores a finished conversation: tau2's DB, ENV_ASSERTION, ACTION, COMMUNICATE and NL_ASSERTION components.

The reward combines the task's reward_basis with the task's rule (tau2's product by default:
0 for a conversation that did not end by a stop); every component's own score is kept with the
checks behind it, so a reader sees why a conversation passed or failed. Plugins add components
and rules (see rewards.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel.conversation.events import EventLog
from bench_kernel.conversation.messages import AssistantMessage, Message, TerminationReason, ToolCall, UserMessage
from bench_kernel.errors import INFRASTRUCTURE_FAILURES
from bench_kernel.evaluation.metric import Judge, JudgeRequest
from bench_kernel.evaluation.results import Check, ComponentScore, RewardInfo
from bench_kernel.evaluation.rewards import (
    DEFAULT_RULE,
    Evaluation,
    ProductRule,
    RewardComponent,
    RewardContext,
    all_met,
)
from bench_kernel.profiles.profile import Profile, load_profile
from bench_kernel.tasks.domain import DomainData, build_environment, replay_history
from bench_kernel.tasks.schema import Action, RewardType, Task
from bench_kernel.tools.environment import Environment


@attrs.frozen(kw_only=True)
class GoldReplay:
    """The gold environment of a task: its hashes and the gold actions that failed."""

    agent_hash: str
    user_hash: str | None
    action_errors: list[str]
    assertion_checks: list[Check]
    reference_hash: str | None = None
    reference_user_hash: str | None = None
    """The domain's reference hash of the gold user state, when the domain defines one."""
    """The domain's reference hash of the gold agent state, when the domain defines one."""

    @property
    def ok(self) -> bool:
        """True when every gold action ran and every env assertion holds on the gold state."""
        return not self.action_errors and all(c.met for c in self.assertion_checks)


def replay_gold(data: DomainData, task: Task, *, with_reference: bool = False) -> GoldReplay:
    """Build the gold state: a fresh environment, the task's initial state, then its gold actions.

    with_reference also computes the domain's reference hash (a full dump: `bench check`, not runs).
    """
    env, errors = _gold_environment(data, task)
    agent_hash, user_hash = env.hashes()
    reference = data.reference_hash(env.agent_tools.state) if with_reference and data.reference_hash else None
    user_reference = (data.reference_user_hash(env.user_tools.state)
                      if with_reference and data.reference_user_hash and env.user_tools is not None else None)
    return GoldReplay(agent_hash=agent_hash, user_hash=user_hash, action_errors=errors,
                      assertion_checks=_gold_assertion_checks(data, task, env), reference_hash=reference,
                      reference_user_hash=user_reference)


def gold_problems(data: DomainData, task: Task) -> tuple[list[str], list[Check]]:
    """What `replay_gold` says of a task's gold replay (failing gold actions, env assertion checks), without hashing
    the gold state: hashing a large database costs tens of milliseconds the first time (tau2's airline: ~40 ms)."""
    env, errors = _gold_environment(data, task)
    return errors, _gold_assertion_checks(data, task, env)


def _gold_environment(data: DomainData, task: Task) -> tuple[Environment, list[str]]:
    env = build_environment(data, task)
    errors = []
    for action in task.gold_actions():
        result = env.execute(action.as_tool_call(), sync=data.sync_gold_actions)
        if result.error:
            errors.append(f"{action.action_id} {action.name}: {result.content}")
    return env, errors


def _gold_assertion_checks(data: DomainData, task: Task, env: Environment) -> list[Check]:
    criteria = task.evaluation_criteria
    checked = env if data.sync_gold_actions or data.sync is None else _live_replay(data, task)
    return [checked.check_assertion(a) for a in (criteria.env_assertions or [])] if criteria else []


def _live_replay(data: DomainData, task: Task) -> Environment:
    """The gold actions replayed as a solver would perform them, with the sync after each (tau2's predicted side).

    Where the reference skips the sync on its gold path (tau2's telecom), the gold hashes come from that
    path but the assertions are judged on this one, as tau2 judges them on the conversation's state.
    """
    env = build_environment(data, task)
    for action in task.gold_actions():
        env.execute(action.as_tool_call())
    return env


def replay_trajectory(data: DomainData, task: Task, messages: Sequence[Message], *, solo: bool = False) -> Environment:
    """Rebuild a conversation's final state from its messages (for imported conversations)."""
    env = build_environment(data, attrs.evolve(task, initial_state=_without_history(task)), solo=solo)
    replay_history(env, messages, strict=False)
    return env


def _without_history(task: Task) -> Any:
    if task.initial_state is None:
        return None
    return attrs.evolve(task.initial_state, message_history=None)


async def evaluate(
    task: Task,
    messages: Sequence[Message],
    termination: TerminationReason,
    final_env: Environment,
    gold: GoldReplay,
    *,
    judge: Judge | None = None,
    seed: int = 0,
    models: Any = None,
    evaluation: Evaluation | None = None,
    events: EventLog | None = None,
    profile: Profile | None = None,
) -> RewardInfo:
    """Score a conversation against its task with the run's reward components and the task's combination rule."""
    criteria = task.evaluation_criteria
    if criteria is None:
        return RewardInfo(reward=1.0, note="no evaluation criteria")
    evaluation = evaluation or default_evaluation()
    context = RewardContext(task=task, messages=messages, termination=termination, final_env=final_env, gold=gold,
                            judge=judge, seed=seed, models=models, events=events or EventLog(), profile=profile)
    components = [await _guarded(component, context) for component in evaluation.to_compute(task)]
    rule, params = evaluation.rule_for(task)
    return rule.combine(list(criteria.reward_basis), components, termination, params)


async def _guarded(component: RewardComponent, context: RewardContext) -> ComponentScore:
    try:
        return await component.score(context)
    except INFRASTRUCTURE_FAILURES:
        raise
    except Exception as exc:  # noqa: BLE001 - a failing component is recorded on itself, never a crash
        return ComponentScore(component=component.name, score=None, error=f"{type(exc).__name__}: {exc}")


def combine(basis: list[str], components: list[ComponentScore], termination: TerminationReason) -> RewardInfo:
    """tau2's product rule (kept as a function for callers that combine by hand)."""
    return ProductRule().combine(basis, components, termination, {})


def db_component(final_env: Environment, gold: GoldReplay) -> ComponentScore:
    """Agent and user states equal the gold states."""
    agent_hash, user_hash = final_env.hashes()
    checks = [Check(subject="agent db", met=agent_hash == gold.agent_hash, detail=f"{agent_hash[:12]} vs gold {gold.agent_hash[:12]}")]
    if user_hash is not None or gold.user_hash is not None:
        checks.append(Check(subject="user db", met=user_hash == gold.user_hash, detail=f"{str(user_hash)[:12]} vs gold {str(gold.user_hash)[:12]}"))
    note = "; ".join(f"gold action failed: {e}" for e in gold.action_errors)
    return _score("DB", checks, note)


def _names_state_checks(task: Task) -> bool:
    criteria = task.evaluation_criteria
    return criteria is not None and (criteria.actions is not None or criteria.env_assertions is not None)


def _db_not_checked() -> ComponentScore:
    # tau2 passes the state check of a task that names neither actions nor env assertions.
    return ComponentScore(component="DB", score=1.0, note="no actions or env assertions: state not checked")


def env_assertion_component(final_env: Environment, task: Task) -> ComponentScore:
    """Every env assertion holds on the conversation's final state."""
    assertions = task.evaluation_criteria.env_assertions if task.evaluation_criteria else None
    return _score("ENV_ASSERTION", [final_env.check_assertion(a) for a in assertions or []])


def action_component(gold_actions: Sequence[Action], messages: Sequence[Message]) -> ComponentScore:
    """Every gold action was called (tau2's compare_args rules; order and count ignored)."""
    calls = [c for m in messages if isinstance(m, AssistantMessage | UserMessage) for c in m.tool_calls or []]
    checks = [Check(subject=f"{a.action_id} {a.name}", met=any(action_matches(a, c) for c in calls)) for a in gold_actions]
    return _score("ACTION", checks)


def action_matches(action: Action, call: ToolCall) -> bool:
    """tau2's rule: same name, and arguments equal on compare_args (None: the call's own keys)."""
    if call.name != action.name:
        return False
    if action.compare_args is None:
        keys = list(call.arguments)
        return {k: call.arguments[k] for k in keys} == {k: action.arguments[k] for k in keys if k in action.arguments}
    return {k: call.arguments.get(k) for k in action.compare_args} == {k: action.arguments.get(k) for k in action.compare_args}


def communicate_component(infos: Sequence[str] | None, messages: Sequence[Message]) -> ComponentScore:
    """Every required fact appears in some agent text (case-insensitive, commas ignored)."""
    texts = [m.content.lower().replace(",", "") for m in messages if isinstance(m, AssistantMessage) and m.has_text() and m.content]
    checks = []
    for info in infos or []:
        hit = next((t for t in texts if info.lower() in t), None)
        checks.append(Check(subject=info, met=hit is not None, detail=f"said: {hit[:120]}" if hit else "not communicated"))
    return _score("COMMUNICATE", checks)


async def nl_component(task: Task, messages: Sequence[Message], judge: Judge | None, seed: int, models: Any = None,
                       profile: Profile | None = None) -> ComponentScore:
    """NL assertions, judged by the run's judge; without one the component is not evaluated."""
    assertions = (task.evaluation_criteria.nl_assertions if task.evaluation_criteria else None) or []
    if not assertions:
        return _score("NL_ASSERTION", [])
    if judge is None:
        return ComponentScore(component="NL_ASSERTION", score=None, note="no judge configured", error="no judge")
    try:
        request = JudgeRequest(task=task, messages=messages, assertions=assertions, seed=seed, models=models,
                               profile=profile or load_profile(None))
        checks = await judge.judge(request)
    except INFRASTRUCTURE_FAILURES:
        raise
    except Exception as exc:  # noqa: BLE001 - a judge failure is recorded on the component
        return ComponentScore(component="NL_ASSERTION", score=None, error=f"{judge.name}: {type(exc).__name__}: {exc}")
    return _score("NL_ASSERTION", list(checks))


def _score(name: str, checks: list[Check], note: str = "") -> ComponentScore:
    return all_met(name, checks, note)


@attrs.define(kw_only=True)
class DBComponent(RewardComponent):
    """Agent and user states equal the gold states (passed unchecked when a task names no actions or assertions)."""

    name: str = RewardType.DB.value
    description: str = "Final agent (and user) state equals the gold state."
    always: bool = True

    async def score(self, context: RewardContext) -> ComponentScore:
        """tau2's DB check."""
        return db_component(context.final_env, context.gold) if _names_state_checks(context.task) else _db_not_checked()


@attrs.define(kw_only=True)
class EnvAssertionComponent(RewardComponent):
    """Every env assertion holds on the final state."""

    name: str = RewardType.ENV_ASSERTION.value
    description: str = "Every env assertion holds on the final agent and user states."
    always: bool = True

    async def score(self, context: RewardContext) -> ComponentScore:
        """tau2's ENV_ASSERTION check."""
        return env_assertion_component(context.final_env, context.task)


@attrs.define(kw_only=True)
class ActionComponent(RewardComponent):
    """Every gold action was called."""

    name: str = RewardType.ACTION.value
    description: str = "Every gold action was called (tau2's compare_args rule)."
    always: bool = True

    async def score(self, context: RewardContext) -> ComponentScore:
        """tau2's ACTION check."""
        return action_component(context.task.gold_actions(), context.messages)


@attrs.define(kw_only=True)
class CommunicateComponent(RewardComponent):
    """Every required fact was said."""

    name: str = RewardType.COMMUNICATE.value
    description: str = "Every communicate_info fact appears in the agent's text."
    always: bool = True

    async def score(self, context: RewardContext) -> ComponentScore:
        """tau2's COMMUNICATE check."""
        criteria = context.task.evaluation_criteria
        return communicate_component(criteria.communicate_info if criteria else None, context.messages)


@attrs.define(kw_only=True)
class NLAssertionComponent(RewardComponent):
    """NL assertions, judged by the run's judge (computed only when in the basis: it costs model calls)."""

    name: str = RewardType.NL_ASSERTION.value
    description: str = "Natural-language assertions judged by the run's judge."

    async def score(self, context: RewardContext) -> ComponentScore:
        """tau2's NL_ASSERTION check."""
        return await nl_component(context.task, context.messages, context.judge, context.seed, context.models,
                                  context.profile)


def builtin_components() -> list[RewardComponent]:
    """tau2's five reward components."""
    return [DBComponent(), EnvAssertionComponent(), ActionComponent(), CommunicateComponent(), NLAssertionComponent()]


def default_evaluation() -> Evaluation:
    """The built-in components and rule, for callers that score without a plugin registry."""
    return Evaluation(components={c.name: c for c in builtin_components()}, rules={DEFAULT_RULE: ProductRule()})
