"""Shift plans: chaining tasks into goal-shift tasks, and the scripted user and oracle working goal by goal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from toy_domain import TASKS, ToyDomain, ToyPlugin

from bench_kernel import ConfigError, DomainOptions, RunConfig, Store, run
from bench_kernel.plugins import get_plugin_manager
from bench_kernel.tasks.shifts import PLAN, chain


def toy_tasks() -> list:
    return ToyDomain().load(DomainOptions()).tasks


def test_a_chain_joins_goals_actions_checks_and_facts_and_keeps_the_first_scenario() -> None:
    inc, read, lamp = toy_tasks()
    chained = chain([inc, read, lamp], turns_per_goal=4)
    criteria = chained.evaluation_criteria
    assert chained.id == "inc-a+read-b+lamp"
    assert criteria is not None
    assert [a.action_id for a in criteria.actions or []] == ["1", "goal1:1", "goal2:1"]
    assert criteria.communicate_info == ["41"] and criteria.reward_basis == ["DB", "COMMUNICATE", "ENV_ASSERTION"]
    plan = chained.extension(PLAN)
    assert [g.task_id for g in plan.goals] == ["inc-a", "read-b", "lamp"] and plan.turns_per_goal == 4
    assert plan.goal_of("goal2:1") == 2 and plan.goal_of("1") == 0
    assert "2. What is counter b?" in chained.user_scenario.instructions.task_instructions  # the LLM user's plan
    assert chained.attributes["shifts"] == "2"


def go(tmp_path: Path, **config: object) -> tuple[list[dict], list[dict]]:
    plugins = get_plugin_manager([], extra=[("toy", ToyPlugin(ToyDomain(tasks=list(TASKS))))])
    summary = run(RunConfig(domain="toy", baseline=False, **config), tmp_path / "r.db", plugins=plugins)  # type: ignore[arg-type]
    store = Store(tmp_path / "r.db")
    try:
        rows = store.conversations(summary.run_id)
        events = [e for r in rows for e in store.conversation_events(r["id"])]
        return rows, events
    finally:
        store.close()


def test_the_scripted_user_shifts_when_a_goal_is_done_and_the_oracle_works_goal_by_goal(tmp_path: Path) -> None:
    rows, events = go(tmp_path, shifts=1)
    assert {r["task_id"] for r in rows} == {"inc-a+read-b", "read-b+lamp", "lamp+inc-a"}
    assert all(r["reward"] == 1.0 for r in rows)
    shifts = [e for e in events if e["kind"] == "goal.shift"]
    assert len(shifts) == 3
    assert all(json.loads(e["data_json"])["reason"] == "the agent finished the goal" for e in shifts)


def test_turns_per_goal_moves_the_user_on_before_the_agent_finishes(tmp_path: Path) -> None:
    _, events = go(tmp_path, shifts=1, turns_per_goal=1, task_ids=["lamp"])
    reasons = [json.loads(e["data_json"])["reason"] for e in events if e["kind"] == "goal.shift"]
    assert reasons == ["after 1 turns on the goal"]


def test_a_plan_file_names_its_chains(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"task": "read-b", "then": ["inc-a", "lamp"]}]))
    rows, _ = go(tmp_path, shift_plan=str(plan))
    assert [r["task_id"] for r in rows] == ["read-b+inc-a+lamp"]
    plan.write_text(json.dumps([{"task": "read-b"}]))
    with pytest.raises(ConfigError, match=r"expected \{\"task\": id, \"then\": \[id, \.\.\.\]\} @ \$\[0\]"):
        go(tmp_path / "x", shift_plan=str(plan))
