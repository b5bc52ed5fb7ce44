"""The multi-goal task field `goals`: structure, problems, errors naming the file and path."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench_kernel import Goal, GoalsExtension, StatusEntry, TaskFileError, TaskVocabulary, goal_problems, task_goals
from bench_kernel.tasks.goals import dependency_cycle
from bench_kernel.tasks.loading import load_tasks


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
