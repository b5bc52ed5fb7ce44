"""Shift plans: tasks chained into goal-shift tasks, the kernel's scripted user and oracle working goal by goal."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_changebench import PLAN, ShiftTransform, chain
from click.testing import CliRunner

import bench_kernel
from bench_kernel import (
    ConfigError,
    Domain,
    DomainData,
    DomainOptions,
    InitializationData,
    InitialState,
    PluginError,
    RunConfig,
    State,
    TaskFileError,
    TaskTransform,
    ToolKind,
    Toolkit,
    collect,
    get_plugin_manager,
    load_domain,
    run,
    structure_tasks,
    tool,
)
from bench_kernel.testing import bench_cli


def mock_tasks() -> dict[str, Any]:
    data = load_domain(collect(get_plugin_manager(["mock"])), RunConfig(domain="mock"))
    return {t.id: t for t in data.tasks}


def test_a_chain_joins_goals_actions_checks_and_facts_and_keeps_the_first_scenario() -> None:
    tasks = mock_tasks()
    chained = chain([tasks["plan_price_question"], tasks["upgrade_by_email"], tasks["wifi_switched_off"]], turns_per_goal=4)
    criteria = chained.evaluation_criteria
    assert chained.id == "plan_price_question+upgrade_by_email+wifi_switched_off"
    assert criteria is not None and criteria.communicate_info == ["Fiber 1000", "64.95"]
    assert [a.action_id for a in criteria.actions or []] == ["a1", "goal1:a1", "goal1:a2", "goal2:a1", "goal2:a2", "goal2:a3"]
    assert [c.func_name for c in chained.initial_state.initialization_actions or []] == ["break_wifi"]  # a later goal's set-up
    plan = chained.extension(PLAN)
    assert [g.task_id for g in plan.goals] == ["plan_price_question", "upgrade_by_email", "wifi_switched_off"] and plan.turns_per_goal == 4
    assert plan.goal_of("goal2:a3") == 2 and plan.goal_of("a1") == 0
    assert "2. You want faster internet at home. Your email is" in chained.user_scenario.instructions.task_instructions  # the LLM user's plan
    assert chained.attributes["shifts"] == "2"
    patched = attrs.evolve(tasks["upgrade_by_email"], initial_state=InitialState(initialization_data=InitializationData(agent_data={})))
    with pytest.raises(ValueError, match="only the first goal of a chain may carry initialization data"):
        chain([tasks["wifi_switched_off"], patched])


def go(tmp_path: Path, task_ids: list[str] | None = None, **settings: Any) -> tuple[list[dict], list[dict]]:
    """A mock run (bench-changebench loaded because a setting of its is set) and its rows and events."""
    config = RunConfig(domain="mock", plugins=["mock"], baseline=False, task_ids=task_ids, num_tasks=3, plugin_settings=settings)
    summary = run(config, tmp_path / "r.db")
    store = bench_kernel.Store(tmp_path / "r.db")
    try:
        rows = store.conversations(summary.run_id)
        return rows, [e for r in rows for e in store.conversation_events(r["id"])]
    finally:
        store.close()


def test_the_scripted_user_shifts_when_a_goal_is_done_and_the_oracle_works_goal_by_goal(tmp_path: Path) -> None:
    rows, events = go(tmp_path, shifts=1)
    assert {r["task_id"] for r in rows} == {
        "plan_price_question+upgrade_by_email",
        "upgrade_by_email+close_fixed_ticket",
        "close_fixed_ticket+speed_ticket_after_restart",
    }
    assert all(r["reward"] == 1.0 for r in rows)
    shifts = [e for e in events if e["kind"] == "goal.shift"]
    assert len(shifts) == 3
    assert all(json.loads(e["data_json"])["reason"] == "the agent finished the goal" for e in shifts)


def test_turns_per_goal_moves_the_user_on_before_the_agent_finishes(tmp_path: Path) -> None:
    _, events = go(tmp_path, ["wifi_switched_off"], shifts=1, turns_per_goal=1)  # its goal: the user's device actions
    reasons = [json.loads(e["data_json"])["reason"] for e in events if e["kind"] == "goal.shift"]
    assert reasons == ["after 1 turns on the goal"]


def test_a_plan_file_names_its_chains(tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps([{"task": "upgrade_by_email", "then": ["plan_price_question", "wifi_switched_off"]}]))
    rows, _ = go(tmp_path, shift_plan=str(plan))
    assert [r["task_id"] for r in rows] == ["upgrade_by_email+plan_price_question+wifi_switched_off"]
    plan.write_text(json.dumps([{"task": "upgrade_by_email"}]))
    with pytest.raises(TaskFileError, match=r"expected \{\"task\": id, \"then\": \[id, \.\.\.\]\} @ \$\[0\]"):
        go(tmp_path / "x", shift_plan=str(plan))
    plan.write_text(json.dumps([{"task": "upgrade_by_email", "then": ["no_such_task"]}]))
    with pytest.raises(ConfigError, match="shift plan names unknown task ids: no_such_task"):
        go(tmp_path / "y", shift_plan=str(plan))


def test_the_command_line_keeps_its_options_and_a_run_file_its_keys(tmp_path: Path) -> None:
    args = ["run", "--plugin", "mock", "--shifts", "1", "--num-tasks", "2", "--no-baseline", "--db", str(tmp_path / "r.db"), "--format", "none"]
    first = CliRunner().invoke(bench_cli([]), args)
    again = CliRunner().invoke(bench_cli([]), args)
    assert first.exit_code == 0, first.output
    assert "2 conversations run, 0 already stored" in first.output and "0 conversations run, 2 already stored" in again.output
    (tmp_path / "run.toml").write_text('[run]\ndomain = "mock"\nshifts = "two"\n')
    bad = CliRunner().invoke(bench_cli([]), ["run", "--plugin", "mock", "--config", str(tmp_path / "run.toml"), "--db", str(tmp_path / "s.db")])
    assert bad.exit_code == 1 and "shifts must be a whole number of at least 1, not 'two' @ $.run.shifts" in bad.output


class CounterTools(Toolkit):
    @tool(ToolKind.WRITE)
    def bump(self, name: str) -> dict:
        """Add one by editing the shared record itself (the bug).

        Args:
            name: The counter's name.
        """
        record = self.state.counters[name]
        record["value"] += 1
        return record

    @tool(ToolKind.WRITE)
    def increment(self, name: str) -> dict:
        """Add one to a private copy.

        Args:
            name: The counter's name.
        """
        record = self.state.counters.edit(name)
        record["value"] += 1
        return record


@attrs.define(kw_only=True)
class Counters(Domain):
    name: str = "counters"

    def load(self, options: DomainOptions) -> DomainData:
        tasks = [
            {
                "id": task_id,
                "user_scenario": {"instructions": f"Add one to {name}."},
                "evaluation_criteria": {"actions": [action], "reward_basis": ["DB"]},
            }
            for task_id, name, action in (
                ("bump", "a", {"action_id": "1", "name": "bump", "arguments": {"name": "a"}}),
                ("inc", "b", {"action_id": "1", "name": "increment", "arguments": {"name": "b"}}),
            )
        ]
        return DomainData(
            name=self.name,
            tasks=structure_tasks(tasks, options.vocabulary, source="counters"),
            policy="Add to counters.",
            agent_toolkit=CounterTools,
            agent_state=State.from_records({"counters": {"a": {"value": 0}, "b": {"value": 0}}}),
            source="memory",
        )


class CountersPlugin:
    @bench_kernel.hookimpl
    def register_domains(self, register: Callable[[Domain], None]) -> None:
        register(Counters())

    @bench_kernel.hookimpl
    def register_task_transforms(self, register: Callable[[TaskTransform], None]) -> None:
        register(ShiftTransform())


def test_shift_planning_refuses_a_tool_that_edits_in_place_before_anything_is_stored(tmp_path: Path) -> None:
    plugins = get_plugin_manager([], extra=[("counters", CountersPlugin())])
    with pytest.raises(PluginError, match=r"tool 'bump' .* edits a shared record in place: task 'bump\+inc'"):
        run(RunConfig(domain="counters", plugin_settings={"shifts": 1}), tmp_path / "r.db", plugins=plugins)
    assert not (tmp_path / "r.db").exists()
