"""Every task is well formed, solvable by its gold actions, and not passed by doing nothing."""

from __future__ import annotations

import json
from importlib.resources import files

import pytest
from bench_mock import MockDomain

from bench_kernel import (
    DomainOptions,
    StructuredUserInstructions,
)

TASK_IDS = [t.id for t in MockDomain(name="mock").load(DomainOptions()).tasks]


def test_there_are_about_a_dozen_tasks() -> None:
    assert 10 <= len(TASK_IDS) <= 15


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_has_a_ticket_and_structured_instructions(data, task_id: str) -> None:
    task = data.task(task_id)
    assert task.ticket
    instructions = task.user_scenario.instructions
    assert isinstance(instructions, StructuredUserInstructions)
    assert instructions.domain == "mock"
    assert instructions.reason_for_call and instructions.task_instructions


def test_reward_bases_cover_every_combination(data) -> None:
    bases = {tuple(t.evaluation_criteria.reward_basis) for t in data.tasks}
    assert bases >= {("DB", "COMMUNICATE"), ("DB",), ("ENV_ASSERTION",), ("DB", "ENV_ASSERTION"), ("DB", "ACTION"), ("ENV_ASSERTION", "ACTION")}


def test_some_tasks_rely_on_the_default_basis() -> None:
    raw = json.loads(files("bench_mock").joinpath("data/tasks.json").read_text())
    assert any("reward_basis" not in t["evaluation_criteria"] for t in raw)


def test_communicated_facts_have_no_commas(data) -> None:
    # The evaluator strips commas from what the agent says, never from the fact itself.
    facts = [f for t in data.tasks for f in t.evaluation_criteria.communicate_info or []]
    assert facts and all("," not in f for f in facts)


def test_dual_control_features_are_exercised(data) -> None:
    tasks = data.tasks
    assert any(a.requestor == "user" for t in tasks for a in t.gold_actions())
    assert any(a.env_type == "user" for t in tasks for a in t.evaluation_criteria.env_assertions or [])
    assert any(t.initial_state and t.initial_state.initialization_actions for t in tasks)
    assert any(t.initial_state and t.initial_state.initialization_data and t.initial_state.initialization_data.agent_data for t in tasks)
    assert any(t.initial_state and t.initial_state.message_history for t in tasks)
    assert any(a.name == "transfer_to_human_agents" and a.compare_args == [] for t in tasks for a in t.gold_actions())


def test_message_history_replays_its_writes(make_env) -> None:
    env = make_env("history_plan_upgrade")
    assert env.agent_tools.state["tickets"]["T-3"]["category"] == "equipment"
