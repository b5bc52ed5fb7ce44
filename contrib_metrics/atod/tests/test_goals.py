"""The multi-goal task field `goals`: structure, problems, errors naming the file and path, registered by this plugin."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench_atod import Goal, GoalsExtension, StatusEntry, goal_problems, task_goals
from bench_atod.goals import dependency_cycle
from click.testing import CliRunner

from bench_kernel import RunConfig, TaskFileError, TaskVocabulary, collect, get_plugin_manager, load_domain, load_tasks
from bench_kernel.testing import cli


def goal(goal_id: str, *deps: str, **extra: Any) -> dict[str, Any]:
    return {"id": goal_id, "domain": "Hotels", "intent": "ReserveHotel", "content": f"book {goal_id}", "dependencies": list(deps), **extra}


def write(tmp_path: Path, goals: Any) -> Path:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"id": "t1", "user_scenario": {"instructions": "do it"}, "goals": goals}]))
    return path


def test_goals_load_with_atod_annotations_upper_or_lower_case(tmp_path: Path) -> None:
    raw = [
        goal(
            "goal_1",
            status="COMPLETED",
            status_history=[{"turn": 0, "status": "not_mentioned"}, {"turn": 1, "status": "Open"}],
            first_mentioned_turn=1,
            completion_turn=9,
        ),
        goal("goal_2", "goal_1"),
    ]
    [task] = load_tasks(write(tmp_path, raw), TaskVocabulary(extensions=[GoalsExtension()]))
    first, second = task_goals(task)
    assert first.status == "completed" and first.status_history[1] == StatusEntry(turn=1, status="open")
    assert second.dependencies == ["goal_1"] and second.status == "not_mentioned"
    assert GoalsExtension().attributes(task_goals(task)) == {"goals": "2"}


def test_an_unknown_status_names_the_file_and_the_json_path(tmp_path: Path) -> None:
    path = write(tmp_path, [goal("goal_1", status="done")])
    with pytest.raises(TaskFileError) as info:
        load_tasks(path, TaskVocabulary(extensions=[GoalsExtension()]))
    text = str(info.value)
    assert str(path) in text and "goals" in text and "done" in text


def test_problems_name_duplicates_unknown_dependencies_and_cycles() -> None:
    goals = [
        Goal(id="a", domain="d", intent="i", content="c", dependencies=["c"]),
        Goal(id="b", domain="d", intent="i", content="c", dependencies=["a", "zz"]),
        Goal(id="c", domain="d", intent="i", content="c", dependencies=["b"]),
        Goal(id="d", domain="d", intent="i", content="c"),
        Goal(id="d", domain="d", intent="i", content="c"),
    ]
    problems = goal_problems(goals)
    assert "goal id 'd' appears 2 times" in problems
    assert "goal 'b' depends on unknown goal 'zz'" in problems
    assert any(p.startswith("dependency cycle: ") for p in problems)


@pytest.mark.parametrize(
    ("deps", "cycle"),
    [
        ({"a": [], "b": ["a"]}, []),
        ({"a": ["a"]}, ["a", "a"]),
        ({"a": ["b"], "b": ["c"], "c": ["a"]}, ["a", "b", "c", "a"]),
        ({"x": ["a"], "a": ["b"], "b": ["a"]}, ["a", "b", "a"]),
    ],
)
def test_dependency_cycle(deps: dict[str, list[str]], cycle: list[str]) -> None:
    goals = [Goal(id=k, domain="d", intent="i", content="c", dependencies=v) for k, v in deps.items()]
    assert dependency_cycle(goals) == cycle


def test_the_plugin_registers_the_goals_field_and_a_run_loads_goal_tasks_with_it(tmp_path: Path) -> None:
    registry = collect(get_plugin_manager(["atod"]))
    assert registry.origin("task extension", "goals") == "atod" and registry.get("task extension", "goals") == GoalsExtension()

    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([mock_task_with_goals()]))
    data = load_domain(collect(get_plugin_manager(["mock", "atod"])), RunConfig(domain="mock", tasks_file=str(path)))
    assert [g.id for g in task_goals(data.tasks[0])] == ["goal_1"]


def test_a_goal_task_run_without_the_plugin_is_told_to_load_it(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([mock_task_with_goals()]))
    result = CliRunner().invoke(cli, ["run", "--plugin", "mock", "--tasks-file", str(path), "--db", str(tmp_path / "r.db")])

    assert result.exit_code != 0 and "extra fields found (goals) @ $[0] (owned by plugin 'atod': add --plugin atod)" in result.output
    assert not (tmp_path / "r.db").exists()


def mock_task_with_goals() -> dict[str, Any]:
    """A task of the mock domain carrying one goal."""
    return {"id": "t1", "user_scenario": {"instructions": "Ask for the price of the basic plan."}, "goals": [goal("goal_1")]}
