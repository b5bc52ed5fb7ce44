"""Scores a conversation: tau2's DB, ENV_ASSERTION, ACTION and COMMUNICATE components (NL_ASSERTION: bench-judging), by the task's rule."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from bench_kernel.errors import INFRASTRUCTURE_FAILURES
from bench_kernel.evaluation.metric import Judge
from bench_kernel.evaluation.rewards import DEFAULT_RULE, Evaluation, ProductRule, RewardComponent, RewardContext, all_met
from bench_kernel.profiles.profile import Profile
from bench_kernel.schema.events import EventLog
from bench_kernel.schema.messages import AssistantMessage, Message, TerminationReason, ToolCall, UserMessage
from bench_kernel.schema.results import Check, ComponentScore, RewardInfo
from bench_kernel.schema.tasks import Action, RewardType, Task
from bench_kernel.serialization import converter
from bench_kernel.tasks.domain import DomainData, build_environment
from bench_kernel.tools.environment import Environment
from bench_kernel.tools.state import State


@attrs.frozen(kw_only=True)
class Replayed:
    """A task's gold actions replayed: the state they left, the ones that failed and the env assertions on the state."""

    env: Environment
    action_errors: list[str]
    assertion_checks: list[Check]


@attrs.frozen(kw_only=True)
class GoldReplay:
    """The gold environment of a task: its hashes and the gold actions that failed."""

    agent_hash: str
    user_hash: str | None
    action_errors: list[str]
    assertion_checks: list[Check]
    reference_hash: str | None = None
    """The domain's reference hash of the gold agent state, when the domain defines one."""
    reference_user_hash: str | None = None
    """The domain's reference hash of the gold user state, when the domain defines one."""
    agent_changes: Mapping[str, Mapping[str, Any]] | None = None
    """The records the gold agent state changed, by table, for a failed DB check to name (None: not known)."""
    user_changes: Mapping[str, Mapping[str, Any]] | None = None
    """The same for the gold user state."""

    @property
    def ok(self) -> bool:
        """True when every gold action ran and every env assertion holds on the gold state."""
        return not self.action_errors and all(c.met for c in self.assertion_checks)


def replay_gold(data: DomainData, task: Task, *, with_reference: bool = False, replayed: Replayed | None = None) -> GoldReplay:
    """Build the gold state: a fresh environment, the task's initial state, then its gold actions (or `replayed`'s)."""
    env = replayed.env if replayed else build_environment(data, task)
    errors = replayed.action_errors if replayed else replay_gold_actions(task, env, sync=data.sync_gold_actions)
    agent_hash, user_hash = env.hashes()
    # The reference hash dumps the whole state: `bench check` asks for it, runs do not.
    reference = data.reference_hash(env.agent_tools.state) if with_reference and data.reference_hash else None
    user_reference = (
        data.reference_user_hash(env.user_tools.state) if with_reference and data.reference_user_hash and env.user_tools is not None else None
    )
    return GoldReplay(
        agent_hash=agent_hash,
        user_hash=user_hash,
        action_errors=errors,
        assertion_checks=replayed.assertion_checks if replayed else gold_assertion_checks(data, task, env),
        reference_hash=reference,
        reference_user_hash=user_reference,
        agent_changes=changed_records(env.agent_tools.state),
        user_changes=changed_records(env.user_tools.state) if env.user_tools is not None else {},
    )


def replay_gold_actions(task: Task, env: Environment, *twins: Environment, sync: bool = True) -> list[str]:
    """Run the task's gold actions on env (and on each twin in lockstep); the actions that failed on env."""
    errors = []
    for action in task.gold_actions():
        result = env.execute(action.as_tool_call(), sync=sync)
        for twin in twins:
            twin.execute(action.as_tool_call(), sync=sync)
        if result.error:
            errors.append(f"{action.action_id} {action.name}: {result.content}")
    return errors


def gold_assertion_checks(data: DomainData, task: Task, env: Environment) -> list[Check]:
    """The task's env assertions on its gold environment (or on a live replay, where the gold path skips the sync)."""
    if not data.sync_gold_actions and data.sync is not None:
        # tau2's telecom skips the sync on its gold path: the hashes come from that path, the assertions from a replay
        # as a solver would perform it, with the sync after each action (tau2's predicted side).
        env = build_environment(data, task)
        replay_gold_actions(task, env)
    criteria = task.evaluation_criteria
    return [env.check_assertion(a) for a in (criteria.env_assertions or [])] if criteria else []


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
    if task.evaluation_criteria is None:
        return RewardInfo(reward=1.0, note="no evaluation criteria")
    evaluation = evaluation or default_evaluation()
    context = RewardContext(
        task=task,
        messages=messages,
        termination=termination,
        final_env=final_env,
        gold=gold,
        judge=judge,
        seed=seed,
        models=models,
        events=events or EventLog(),
        profile=profile,
    )
    components = [await _guarded(component, context) for component in evaluation.to_compute(task)]
    return recombine(evaluation, task, components, termination)


def recombine(evaluation: Evaluation, task: Task, components: list[ComponentScore], termination: TerminationReason) -> RewardInfo:
    """The task's rule over its components; a basis component that could not be evaluated never leaves a reward above 0."""
    # Whatever a plugin's rule does with a missing score, an errored component (a judge error above all) must not pass.
    rule, params = evaluation.rule_for(task)
    basis = list(task.evaluation_criteria.reward_basis) if task.evaluation_criteria else []
    info = rule.combine(basis, components, termination, params)
    by_name = {c.component: c for c in components}
    unevaluated = [kind for kind in basis if by_name.get(kind) is None or by_name[kind].score is None]
    if not unevaluated or info.reward <= 0:
        return info
    note = "; ".join(filter(None, [info.note, f"reward 0: {', '.join(unevaluated)} could not be evaluated"]))
    return attrs.evolve(info, reward=0.0, note=note)


async def _guarded(component: RewardComponent, context: RewardContext) -> ComponentScore:
    try:
        return await component.score(context)
    except INFRASTRUCTURE_FAILURES:
        raise
    except Exception as exc:  # noqa: BLE001 - a failing component is recorded on itself, never a crash
        return ComponentScore(component=component.name, score=None, error=f"{type(exc).__name__}: {exc}")


def db_component(final_env: Environment, gold: GoldReplay) -> ComponentScore:
    """Agent and user states equal the gold states."""
    agent_hash, user_hash = final_env.hashes()
    checks = [_db_check("agent db", agent_hash, gold.agent_hash, final_env.agent_tools.state, gold.agent_changes)]
    if user_hash is not None or gold.user_hash is not None:
        user_state = final_env.user_tools.state if final_env.user_tools is not None else None
        checks.append(_db_check("user db", user_hash, gold.user_hash, user_state, gold.user_changes))
    note = "; ".join(f"gold action failed: {e}" for e in gold.action_errors)
    return all_met("DB", checks, note)


DIFFERING_RECORDS = 10
"""Records a failed DB check names at most."""


def changed_records(state: State) -> dict[str, dict[str, Any]]:
    """The records a state changed from its shared data, as plain data (None for a deleted record), by table."""
    return {
        name: {key: converter.unstructure(table[key]) if key in table else None for key in table.overlay}
        for name, table in state.tables.items()
        if table.overlay
    }


def differing_records(state: State, gold_changes: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Each record where a state and the gold state differ, with the fields that differ (both share the same data)."""
    ours = changed_records(state)
    found = []
    for name in sorted(set(ours) | set(gold_changes)):
        table = state.tables.get(name)
        mine, gold = ours.get(name, {}), gold_changes.get(name, {})
        for key in sorted(set(mine) | set(gold), key=str):
            base = converter.unstructure(table.base.records[key]) if table is not None and key in table.base.records else None
            a, b = mine.get(key, base), gold.get(key, base)
            if a != b:
                found.append(f"{name}/{key}: {_record_difference(a, b)}")
    return found


def _record_difference(ours: Any, gold: Any) -> str:
    if ours is None:
        return "missing (the gold state has it)"
    if gold is None:
        return "not in the gold state"
    if isinstance(ours, dict) and isinstance(gold, dict):
        fields = [k for k in dict.fromkeys([*gold, *ours]) if ours.get(k) != gold.get(k)]
        return f"{', '.join(map(str, fields))} differ{'s' if len(fields) == 1 else ''}"
    return "differs"


def _db_check(subject: str, ours: str | None, gold: str | None, state: State | None, gold_changes: Mapping[str, Mapping[str, Any]] | None) -> Check:
    """One state's DB check: the two hashes, and on a failure the records that differ (when both are known)."""
    detail = f"{str(ours)[:12]} vs gold {str(gold)[:12]}"
    records = differing_records(state, gold_changes) if ours != gold and state is not None and gold_changes is not None else []
    if records:
        more = f"; and {len(records) - DIFFERING_RECORDS} more" if len(records) > DIFFERING_RECORDS else ""
        count = f"{len(records)} records differ" if len(records) > 1 else "1 record differs"
        detail = f"{detail}; {count}: " + "; ".join(records[:DIFFERING_RECORDS]) + more
    return Check(subject=subject, met=ours == gold, detail=detail)


def env_assertion_component(final_env: Environment, task: Task) -> ComponentScore:
    """Every env assertion holds on the conversation's final state."""
    assertions = task.evaluation_criteria.env_assertions if task.evaluation_criteria else None
    return all_met("ENV_ASSERTION", [final_env.check_assertion(a) for a in assertions or []])


def action_component(gold_actions: Sequence[Action], messages: Sequence[Message]) -> ComponentScore:
    """Every gold action was called (tau2's compare_args rules; order and count ignored)."""
    calls = [c for m in messages if isinstance(m, AssistantMessage | UserMessage) for c in m.tool_calls or []]
    checks = [
        Check(subject=f"{a.action_id} {a.name}", met=(met := any(action_matches(a, c) for c in calls)), detail=action_detail(a, calls, met))
        for a in gold_actions
    ]
    return all_met("ACTION", checks)


CLOSEST_CALLS = 3
"""Calls of the expected tool an ACTION check's detail shows at most (those differing on the fewest compared keys)."""


def action_detail(action: Action, calls: Sequence[ToolCall], met: bool) -> str:
    """The expected call (its compared keys named), and when it was not made the closest calls of the same tool."""
    compared = ", ".join(action.compare_args) if action.compare_args is not None else "the keys the call gives"
    expected = f"expected {action.name}({_arguments(action.arguments)}), compared on {compared or 'no key'}"
    if met:
        return f"{expected}: called"
    same = [c for c in calls if c.name == action.name]
    if not same:
        made = sorted({c.name for c in calls})
        return f"{expected}; never called" + (f" (tools called: {', '.join(made)})" if made else " (no tool called)")
    ranked = sorted(same, key=lambda c: len(differing_keys(action, c)))[:CLOSEST_CALLS]
    shown = "; ".join(f"{c.name}({_arguments(c.arguments)}) differs on {', '.join(differing_keys(action, c))}" for c in ranked)
    more = f" (and {len(same) - len(ranked)} more calls of {action.name})" if len(same) > len(ranked) else ""
    return f"{expected}; closest call{'s' if len(ranked) > 1 else ''}: {shown}{more}"


def differing_keys(action: Action, call: ToolCall) -> list[str]:
    """The keys on which `action_matches` finds a call of the same tool different (a key the gold lacks: `key (not expected)`)."""
    if action.compare_args is not None:
        return [k for k in action.compare_args if call.arguments.get(k) != action.arguments.get(k)]
    return [
        k if k in action.arguments else f"{k} (not expected)"
        for k in call.arguments
        if k not in action.arguments or call.arguments[k] != action.arguments[k]
    ]


def _arguments(arguments: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, sort_keys=True)}" for k, v in arguments.items())


def action_matches(action: Action, call: ToolCall) -> bool:
    """tau2's rule: same name, and arguments equal on compare_args (None: the call's own keys)."""
    return call.name == action.name and not differing_keys(action, call)


def communicate_component(infos: Sequence[str] | None, messages: Sequence[Message]) -> ComponentScore:
    """Every required fact appears in some agent text (case-insensitive, commas ignored)."""
    texts = [m.content.lower().replace(",", "") for m in messages if isinstance(m, AssistantMessage) and m.has_text() and m.content]
    checks = []
    for info in infos or []:
        hit = next((t for t in texts if info.lower() in t), None)
        checks.append(Check(subject=info, met=hit is not None, detail=f"said: {hit[:120]}" if hit else "not communicated"))
    return all_met("COMMUNICATE", checks)


@attrs.define(kw_only=True)
class BuiltinComponent(RewardComponent):
    """One of tau2's components, computed for every task: `check` scores a conversation's context."""

    always: bool = True
    check: Callable[[RewardContext], ComponentScore]

    async def score(self, context: RewardContext) -> ComponentScore:
        """The check's score."""
        return self.check(context)


def _db_score(context: RewardContext) -> ComponentScore:
    criteria = context.task.evaluation_criteria
    if criteria is not None and (criteria.actions is not None or criteria.env_assertions is not None):
        return db_component(context.final_env, context.gold)
    # tau2 passes the state check of a task that names neither actions nor env assertions.
    return ComponentScore(component="DB", score=1.0, note="no actions or env assertions: state not checked")


def _communicate_score(context: RewardContext) -> ComponentScore:
    criteria = context.task.evaluation_criteria
    return communicate_component(criteria.communicate_info if criteria else None, context.messages)


def builtin_components() -> list[RewardComponent]:
    """tau2's reward components but NL_ASSERTION (bench-judging's)."""
    return [
        BuiltinComponent(name=RewardType.DB.value, description="Final agent (and user) state equals the gold state.", check=_db_score),
        BuiltinComponent(
            name=RewardType.ENV_ASSERTION.value,
            description="Every env assertion holds on the final agent and user states.",
            check=lambda context: env_assertion_component(context.final_env, context.task),
        ),
        BuiltinComponent(
            name=RewardType.ACTION.value,
            description="Every gold action was called (tau2's compare_args rule).",
            check=lambda context: action_component(context.task.gold_actions(), context.messages),
        ),
        BuiltinComponent(
            name=RewardType.COMMUNICATE.value, description="Every communicate_info fact appears in the agent's text.", check=_communicate_score
        ),
    ]


def default_evaluation() -> Evaluation:
    """The built-in components and rule, for callers that score without a plugin registry."""
    return Evaluation(components={c.name: c for c in builtin_components()}, rules={DEFAULT_RULE: ProductRule()})
