"""The compositional task generator: composition order and ids, personas, building and verification."""

from __future__ import annotations

from typing import Any

import pytest
from bench_compose import Composer, Composition, Subtask, compose, composed_id, verify, with_personas

from bench_kernel import DomainData, EnvAssertion, EnvFunctionCall, Environment, State, ToolCall, ToolKind, Toolkit, tool


class CounterTools(Toolkit):
    """Counters the agent increments."""

    @tool(ToolKind.WRITE)
    def increment(self, name: str, by: int = 1) -> dict:
        """Increment a counter.

        Args:
            name: The counter's name.
            by: How much to add.
        """
        record = self.state.counters.edit(name)
        record["value"] += by
        return record

    def counter_is(self, name: str, value: int) -> bool:
        """Assertion: the counter has this value."""
        return self.state.counters[name]["value"] == value


class LampTools(Toolkit):
    """The user's lamp."""

    @tool(ToolKind.READ)
    def look_at_lamp(self) -> str:
        """Say whether the lamp is on."""
        return "on" if self.state.device["lamp"]["on"] else "off"

    @tool(ToolKind.WRITE)
    def switch_lamp(self, on: bool) -> str:
        """Switch the lamp.

        Args:
            on: True to switch it on.
        """
        self.state.device["lamp"] = {"on": on}
        return "ok"

    def lamp_is(self, on: bool) -> bool:
        """Assertion: the lamp is in this position."""
        return self.state.device["lamp"]["on"] == on


def user(func: str, **arguments: Any) -> EnvFunctionCall:
    return EnvFunctionCall(env_type="user", func_name=func, arguments=arguments)


def bump_back(env: Environment) -> list[ToolCall]:
    """The fix depends on the state the initialization left: undo whatever was added to counter a."""
    value = env.agent_tools.state.counters["a"]["value"]
    return [ToolCall(name="increment", arguments={"name": "a", "by": -value})]


LAMP_OFF = Subtask(
    name="lamp_off", init=[user("switch_lamp", on=False)], solution=[ToolCall(name="switch_lamp", arguments={"on": True}, requestor="user")]
)
LAMP_BROKEN = Subtask(name="lamp_broken", init=[user("switch_lamp", on=False)], solution=None)
COUNTER_BUMPED = Subtask(
    name="counter_bumped",
    init=[EnvFunctionCall(env_type="assistant", func_name="increment", arguments={"name": "a", "by": 3})],
    solution=[bump_back],
    assertions=[EnvAssertion(env_type="assistant", func_name="counter_is", arguments={"name": "a", "value": 0})],
)
SETS = [[LAMP_OFF, LAMP_BROKEN], [COUNTER_BUMPED]]


def assertions(fixable: bool) -> list[EnvAssertion]:
    return [EnvAssertion(env_type="user", func_name="lamp_is", arguments={"on": True}, assert_value=fixable)]


def template(composition: Composition, persona: str, env: Environment) -> dict[str, Any]:
    return {"user_scenario": {"persona": None if persona == "None" else persona, "instructions": f"Fix: {composition.name}."}}


COMPOSER = Composer(
    intent="home",
    selection_sets=SETS,
    assertions=assertions,
    template=template,
    setup=[user("switch_lamp", on=True)],
    personas=("None", "Easy", "Hard"),
)


@pytest.fixture(scope="module")
def data() -> DomainData:
    """A home with counters on the agent's side and a lamp on the user's, no tasks: the composer makes them."""
    return DomainData(
        name="home",
        tasks=[],
        policy="Help with counters and the lamp.",
        agent_toolkit=CounterTools,
        agent_state=State.from_records({"counters": {"a": {"value": 0}}}),
        user_toolkit=LampTools,
        user_state=State.from_records({"device": {"lamp": {"on": False}}}),
        source="memory",
    )


def test_compositions_pick_none_or_one_per_set_sorted_by_name() -> None:
    names = [c.name for c in compose(SETS)]
    # Product order over (lamp_off, lamp_broken, none) x (counter_bumped, none); the empty choice dropped.
    assert names == ["counter_bumped|lamp_off", "lamp_off", "counter_bumped|lamp_broken", "lamp_broken", "counter_bumped"]


def test_a_validator_sees_the_raw_choice_and_decides_about_the_empty_one() -> None:
    needs_counter = compose(SETS, valid=lambda choice: choice[1] is not None)
    assert [c.name for c in needs_counter] == ["counter_bumped|lamp_off", "counter_bumped|lamp_broken", "counter_bumped"]
    everything = compose(SETS, valid=lambda choice: True)
    assert len(everything) == 6 and everything[-1].subtasks == ()


def test_personas_cycle_over_compositions_ordered_by_size() -> None:
    paired = with_personas(compose(SETS), ("None", "Easy", "Hard"))
    assert [(c.name, p) for c, p in paired] == [
        ("lamp_off", "None"),
        ("lamp_broken", "Easy"),
        ("counter_bumped", "Hard"),
        ("counter_bumped|lamp_off", "None"),
        ("counter_bumped|lamp_broken", "Easy"),
    ]
    assert composed_id("home", paired[3][0], "None") == "[home]counter_bumped|lamp_off[PERSONA:None]"


def test_built_tasks_carry_setup_init_gold_and_assertions(data: DomainData) -> None:
    tasks = {t.id: t for t in COMPOSER.tasks(data)}
    task = tasks["[home]counter_bumped|lamp_off[PERSONA:None]"]
    assert [a.func_name for a in task.initial_state.initialization_actions] == ["switch_lamp", "increment", "switch_lamp"]
    assert [(a.action_id, a.name, a.arguments) for a in task.gold_actions()] == [
        ("increment_0", "increment", {"name": "a", "by": -3}),
        ("switch_lamp_1", "switch_lamp", {"on": True}),
    ]
    assert [a.func_name for a in task.evaluation_criteria.env_assertions] == ["lamp_is", "counter_is"]
    assert task.evaluation_criteria.reward_basis == ["ENV_ASSERTION"]
    unfixable = tasks["[home]counter_bumped|lamp_broken[PERSONA:Easy]"]
    assert [a.name for a in unfixable.gold_actions()] == ["transfer_to_human_agents"]
    assert unfixable.evaluation_criteria.reward_basis == ["ENV_ASSERTION", "ACTION"]
    assert [(a.func_name, a.assert_value) for a in unfixable.evaluation_criteria.env_assertions] == [("lamp_is", False)]


def test_every_composed_task_verifies(data: DomainData) -> None:
    tasks = COMPOSER.tasks(data)
    assert len(tasks) == 5
    assert [p for t in tasks for p in verify(data, t)] == []


def test_verification_catches_a_fix_that_does_not_fix(data: DomainData) -> None:
    useless = Subtask(name="lamp_off", init=[user("switch_lamp", on=False)], solution=[ToolCall(name="look_at_lamp", requestor="user")])
    composer = Composer(intent="home", selection_sets=[[useless]], assertions=assertions, template=template, setup=[user("switch_lamp", on=True)])
    (task,) = composer.tasks(data)
    assert verify(data, task) == [
        "[home]lamp_off[PERSONA:None]: after the gold actions user:lamp_is({'on': True}) fails (returned False, expected True)"
    ]
