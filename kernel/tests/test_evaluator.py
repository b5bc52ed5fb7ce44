"""Tests of the evaluator: tau2's component rules, their combination and the gold replay (NL_ASSERTION: bench-judging)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import attrs
import pytest
from toy_domain import ToyDomain

from bench_kernel import DomainOptions, Judge, build_environment
from bench_kernel.evaluation.evaluator import (
    GoldReplay,
    action_component,
    action_matches,
    communicate_component,
    db_component,
    env_assertion_component,
    evaluate,
    recombine,
    replay_gold,
)
from bench_kernel.evaluation.rewards import CombinationRule, Evaluation, ProductRule
from bench_kernel.schema.messages import (
    AssistantMessage,
    Message,
    TerminationReason,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from bench_kernel.schema.results import ComponentScore, RewardInfo
from bench_kernel.schema.tasks import Action, RewardType, Task
from bench_kernel.serialization import structure
from bench_kernel.tasks.domain import DomainData
from bench_kernel.tools.environment import Environment

STOP = TerminationReason.USER_STOP


@pytest.fixture
def data() -> DomainData:
    return ToyDomain().load(DomainOptions())


def make_task(criteria: dict[str, Any] | None, **extra: Any) -> Task:
    raw = {"id": "t", "user_scenario": {"instructions": "x"}, "evaluation_criteria": criteria, **extra}
    return structure(raw, Task, source="test")


def gold_action(name: str, arguments: dict[str, Any], compare_args: list[str] | None = None, **extra: Any) -> Action:
    return Action(action_id="g", name=name, arguments=arguments, compare_args=compare_args, **extra)


def tool_call(name: str, arguments: dict[str, Any], requestor: str = "assistant") -> ToolCall:
    return ToolCall(id="c", name=name, arguments=arguments, requestor=requestor)  # type: ignore[arg-type]


def score(
    task: Task, messages: Sequence[Message], env: Environment, gold: GoldReplay, *, termination: TerminationReason = STOP, judge: Judge | None = None
):
    return asyncio.run(evaluate(task, messages, termination, env, gold, judge=judge))


# --------------------------------------------------------------------------- ACTION


GOLD = {"user_id": "u1", "amount": 10}


@pytest.mark.parametrize(
    ("predicted", "matches"),
    [
        ({"user_id": "u1", "amount": 10}, True),
        ({"amount": 10, "user_id": "u1"}, True),
        ({"user_id": "u1"}, True),  # gold-only extra arguments are ignored
        ({}, True),  # ... even all of them (tau2 compares the call's own keys)
        ({"user_id": "u1", "amount": 11}, False),
        ({"user_id": "u1", "amount": 10.5}, False),
        ({"user_id": "u1", "amount": 10, "note": "x"}, False),  # a predicted-only key is a mismatch
        ({"user_id": "u1", "amount": "10"}, False),
    ],
)
def test_compare_args_none_compares_the_predicted_keys(predicted: dict[str, Any], matches: bool) -> None:
    assert action_matches(gold_action("pay", GOLD), tool_call("pay", predicted)) is matches


def test_name_must_match() -> None:
    assert not action_matches(gold_action("pay", GOLD), tool_call("refund", GOLD))
    assert not action_matches(gold_action("pay", {}, compare_args=[]), tool_call("Pay", {}))


def test_empty_compare_args_compares_the_name_only() -> None:
    action = gold_action("transfer_to_human_agents", {"summary": "I cannot fix it."}, compare_args=[])
    assert action_matches(action, tool_call("transfer_to_human_agents", {"summary": "something else", "x": 1}))


def test_explicit_compare_args_compare_only_those() -> None:
    action = gold_action("pay", {"user_id": "u1", "amount": 10, "memo": "rent"}, compare_args=["user_id", "amount"])
    assert action_matches(action, tool_call("pay", {"user_id": "u1", "amount": 10, "memo": "other", "extra": 1}))
    assert not action_matches(action, tool_call("pay", {"user_id": "u1", "amount": 9, "memo": "rent"}))
    assert not action_matches(action, tool_call("pay", {"user_id": "u1"})), "a missing compared argument differs"


def test_explicit_compare_args_missing_on_both_sides_match() -> None:
    action = gold_action("pay", {"user_id": "u1"}, compare_args=["user_id", "optional"])
    assert action_matches(action, tool_call("pay", {"user_id": "u1"}))


def test_action_component_ignores_order_count_and_requestor() -> None:
    gold = [
        Action(action_id="a", name="get", arguments={"k": 1}),
        Action(action_id="b", name="set", arguments={"k": 1}),
        Action(action_id="c", name="get", arguments={"k": 1}, requestor="user"),
    ]
    messages = [
        UserMessage(tool_calls=[tool_call("set", {"k": 1}, "user")]),
        AssistantMessage(content="also text", tool_calls=[tool_call("get", {"k": 1})]),
    ]
    component = action_component(gold, messages)
    assert component.score == 1.0
    assert [c.subject for c in component.checks] == ["a get", "b set", "c get"]


def test_action_component_fails_on_a_missing_action_and_names_it() -> None:
    gold = [Action(action_id="a1", name="get", arguments={}), Action(action_id="a2", name="set", arguments={"k": 2})]
    component = action_component(gold, [AssistantMessage(tool_calls=[tool_call("set", {"k": 3}), tool_call("get", {})])])
    assert component.score == 0.0
    assert [(c.subject, c.met) for c in component.checks] == [("a1 get", True), ("a2 set", False)]


def test_action_component_without_gold_actions_passes() -> None:
    assert action_component([], []).score == 1.0


# --------------------------------------------------------------------------- COMMUNICATE


def test_communicate_is_case_insensitive_and_strips_commas_from_the_message_only() -> None:
    messages = [AssistantMessage(content="Your refund of $1,093.34 is ON ITS WAY.")]
    component = communicate_component(["1093.34", "on its way"], messages)
    assert component.score == 1.0
    assert all(c.met for c in component.checks)
    assert communicate_component(["1,093.34"], messages).score == 0.0, "commas in the info itself are not stripped"


def test_communicate_only_counts_agent_text() -> None:
    messages: list[Message] = [
        UserMessage(content="is it 41?"),
        ToolMessage(id="c", content="41"),
        AssistantMessage(tool_calls=[tool_call("get_counter", {"name": "41"})]),
    ]
    component = communicate_component(["41"], messages)
    assert component.score == 0.0
    assert component.checks[0].detail == "not communicated"


def test_communicate_counts_text_beside_a_tool_call() -> None:
    messages = [AssistantMessage(content="It is 41, let me also check.", tool_calls=[tool_call("get_counter", {"name": "a"})])]
    assert communicate_component(["41"], messages).score == 1.0


def test_communicate_needs_every_fact() -> None:
    component = communicate_component(["41", "42"], [AssistantMessage(content="41")])
    assert component.score == 0.0
    assert [c.met for c in component.checks] == [True, False]


@pytest.mark.parametrize("infos", [None, []])
def test_communicate_without_infos_passes(infos: list[str] | None) -> None:
    assert communicate_component(infos, []).score == 1.0


# --------------------------------------------------------------------------- combine


def component(name: str, value: float | None) -> ComponentScore:
    return ComponentScore(component=name, score=value)


def combine(basis: list[str], components: list[ComponentScore], termination: TerminationReason) -> RewardInfo:
    """tau2's product rule over these components."""
    return ProductRule().combine(basis, components, termination, {})


def test_combine_multiplies_only_the_basis() -> None:
    components = [component("DB", 1.0), component("COMMUNICATE", 0.0), component("ACTION", 1.0)]
    assert combine([RewardType.DB, RewardType.ACTION], components, STOP).reward == 1.0
    info = combine([RewardType.DB, RewardType.COMMUNICATE], components, STOP)
    assert info.reward == 0.0
    assert info.reward_basis == [RewardType.DB, RewardType.COMMUNICATE]
    assert info.components == components, "every component is kept, in or out of the basis"


def test_combine_empty_basis_is_one() -> None:
    assert combine([], [component("DB", 0.0)], STOP).reward == 1.0


@pytest.mark.parametrize(
    "termination",
    [
        TerminationReason.MAX_STEPS,
        TerminationReason.TOO_MANY_ERRORS,
        TerminationReason.TIMEOUT,
        TerminationReason.AGENT_ERROR,
        TerminationReason.USER_ERROR,
    ],
)
def test_premature_termination_scores_zero_with_a_note(termination: TerminationReason) -> None:
    info = combine([RewardType.DB], [component("DB", 1.0)], termination)
    assert info.reward == 0.0
    assert f"terminated prematurely: {termination.value}" in info.note


@pytest.mark.parametrize("termination", [TerminationReason.USER_STOP, TerminationReason.AGENT_STOP])
def test_stops_are_scored(termination: TerminationReason) -> None:
    assert combine([RewardType.DB], [component("DB", 1.0)], termination).reward == 1.0


def test_a_basis_component_that_could_not_be_evaluated_scores_zero() -> None:
    info = combine([RewardType.DB, RewardType.NL_ASSERTION], [component("DB", 1.0), component("NL_ASSERTION", None)], STOP)
    assert info.reward == 0.0
    assert "NL_ASSERTION could not be evaluated" in info.note
    missing = combine([RewardType.ACTION], [component("DB", 1.0)], STOP)
    assert missing.reward == 0.0 and "ACTION could not be evaluated" in missing.note


def test_an_unevaluated_component_outside_the_basis_does_not_matter() -> None:
    assert combine([RewardType.DB], [component("DB", 1.0), component("NL_ASSERTION", None)], STOP).reward == 1.0


# --------------------------------------------------------------------------- DB and ENV_ASSERTION on the toy domain


def test_gold_replay_runs_user_actions_on_the_user_side(data: DomainData) -> None:
    lamp = data.task("lamp")
    gold = replay_gold(data, lamp)
    pristine = build_environment(data, lamp).hashes()
    assert gold.ok and gold.action_errors == []
    assert gold.agent_hash == pristine[0]
    assert gold.user_hash != pristine[1]
    assert [c.met for c in gold.assertion_checks] == [True]


def test_db_component_compares_agent_and_user_state(data: DomainData) -> None:
    lamp = data.task("lamp")
    gold = replay_gold(data, lamp)
    untouched = build_environment(data, lamp)
    failed = db_component(untouched, gold)
    assert failed.score == 0.0
    assert [(c.subject, c.met) for c in failed.checks] == [("agent db", True), ("user db", False)]

    solved = build_environment(data, lamp)
    solved.execute(tool_call("switch_lamp", {"on": True}, "user"))
    assert db_component(solved, gold).score == 1.0


def test_db_component_fails_on_an_extra_write(data: DomainData) -> None:
    task = data.task("inc-a")
    gold = replay_gold(data, task)
    env = build_environment(data, task)
    env.execute(tool_call("increment", {"name": "a"}))
    assert db_component(env, gold).score == 1.0
    env.execute(tool_call("increment", {"name": "b"}))
    assert db_component(env, gold).score == 0.0


def test_env_assertion_component_runs_on_the_final_state(data: DomainData) -> None:
    lamp = data.task("lamp")
    env = build_environment(data, lamp)
    assert env_assertion_component(env, lamp).score == 0.0
    env.execute(tool_call("switch_lamp", {"on": True}, "user"))
    assert env_assertion_component(env, lamp).score == 1.0
    assert env_assertion_component(env, data.task("inc-a")).score == 1.0, "no assertions pass"


def test_evaluate_lamp_task_end_to_end(data: DomainData) -> None:
    lamp = data.task("lamp")
    gold = replay_gold(data, lamp)
    env = build_environment(data, lamp)
    messages = [UserMessage(tool_calls=[tool_call("switch_lamp", {"on": True}, "user")])]
    env.execute(messages[0].tool_calls[0])
    info = score(lamp, messages, env, gold)
    assert info.reward == 1.0
    assert info.reward_basis == [RewardType.ENV_ASSERTION]
    assert {c.component for c in info.components} == {"DB", "ENV_ASSERTION", "ACTION", "COMMUNICATE"}
    assert score(lamp, messages, env, gold, termination=TerminationReason.MAX_STEPS).reward == 0.0


def test_evaluate_read_task_needs_the_fact_said(data: DomainData) -> None:
    task = data.task("read-b")
    gold = replay_gold(data, task)
    env = build_environment(data, task)
    assert score(task, [AssistantMessage(content="It is forty-one.")], env, gold).reward == 0.0
    assert score(task, [AssistantMessage(content="Counter b is 41.")], env, gold).reward == 1.0


def test_no_evaluation_criteria_scores_one(data: DomainData) -> None:
    task = make_task(None)
    env = build_environment(data, task)
    env.execute(tool_call("increment", {"name": "a"}))
    info = score(task, [], env, replay_gold(data, task))
    assert info.reward == 1.0
    assert info.components == []
    assert "no evaluation criteria" in info.note


def test_db_without_actions_or_assertions_is_not_checked_as_in_tau2(data: DomainData) -> None:
    # tau2 mock task create_task_1_nl_eval: default basis [DB, COMMUNICATE], no actions, no env assertions.
    task = make_task({"nl_assertions": ["The counter is incremented"]})
    env = build_environment(data, task)
    env.execute(tool_call("increment", {"name": "a"}))
    info = score(task, [AssistantMessage(content="Done.")], env, replay_gold(data, task))
    assert info.reward_basis == [RewardType.DB, RewardType.COMMUNICATE]
    assert info.component("DB").score == 1.0
    assert info.reward == 1.0


def test_empty_actions_are_checked_against_the_initial_state(data: DomainData) -> None:
    task = make_task({"actions": [], "reward_basis": ["DB"]})
    env = build_environment(data, task)
    env.execute(tool_call("increment", {"name": "a"}))
    assert score(task, [], env, replay_gold(data, task)).reward == 0.0


def test_initialization_data_reaches_both_gold_and_conversation(data: DomainData) -> None:
    task = make_task(
        {"actions": [{"action_id": "x", "name": "increment", "arguments": {"name": "c"}}], "reward_basis": ["DB"]},
        initial_state={"initialization_data": {"agent_data": {"counters": {"c": {"value": 5}}}}},
    )
    gold = replay_gold(data, task)
    assert gold.ok
    env = build_environment(data, task)
    assert env.agent_tools.state.counters["c"] == {"value": 5}
    env.execute(tool_call("increment", {"name": "c"}))
    assert score(task, [], env, gold).reward == 1.0


def test_replay_gold_records_failing_actions_by_id(data: DomainData) -> None:
    task = make_task(
        {
            "actions": [
                {"action_id": "ok-1", "name": "increment", "arguments": {"name": "a"}},
                {"action_id": "bad-2", "name": "increment", "arguments": {"name": "zz"}},
                {"action_id": "bad-3", "name": "no_such_tool", "arguments": {}},
            ],
            "reward_basis": ["DB"],
        }
    )
    gold = replay_gold(data, task)
    assert not gold.ok
    assert len(gold.action_errors) == 2
    assert gold.action_errors[0].startswith("bad-2 increment: Error: Counter zz not found")
    assert gold.action_errors[1].startswith("bad-3 no_such_tool: Error: Tool 'no_such_tool' not found.")
    env = build_environment(data, task)
    env.execute(tool_call("increment", {"name": "a"}))
    db = db_component(env, gold)
    assert db.score == 1.0 and "bad-2" in db.note


def test_replay_gold_reports_assertions_that_fail_on_the_gold_state(data: DomainData) -> None:
    task = make_task({"env_assertions": [{"env_type": "user", "func_name": "lamp_is", "arguments": {"on": True}}], "reward_basis": ["ENV_ASSERTION"]})
    gold = replay_gold(data, task)
    assert gold.action_errors == [] and not gold.ok


# --------------------------------------------------------------------------- a component that could not be evaluated


@attrs.define(kw_only=True)
class Lenient(CombinationRule):
    """A plugin rule that gives full credit whatever its components say."""

    name: str = "lenient"

    def combine(
        self, basis: Sequence[str], components: Sequence[ComponentScore], termination: TerminationReason, params: Mapping[str, Any]
    ) -> RewardInfo:
        return RewardInfo(reward=1.0, reward_basis=list(basis), components=list(components), rule=self.name)


def test_no_rule_can_pass_a_conversation_whose_judge_failed() -> None:
    task = make_task({"nl_assertions": ["The agent greets."], "reward_basis": ["DB", "NL_ASSERTION"], "reward_rule": "lenient"})
    evaluation = Evaluation(components={}, rules={"lenient": Lenient()})
    failed = ComponentScore(component="NL_ASSERTION", score=None, error="judge error: ...")
    info = recombine(evaluation, task, [component("DB", 1.0), failed], STOP)
    assert info.reward == 0.0 and "NL_ASSERTION could not be evaluated" in info.note
    assert recombine(evaluation, task, [component("DB", 1.0), component("NL_ASSERTION", 1.0)], STOP).reward == 1.0
