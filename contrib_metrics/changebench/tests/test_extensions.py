"""AgentChangeBench's task fields load through this plugin, and their inconsistencies are named, not hidden."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_kernel.testing import cli

ACB = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference") / "agentchangebench"


def tasks_file(tmp_path: Path, shifts: int, goals: list[str]) -> Path:
    task = {
        "id": "t1",
        "user_scenario": {"persona": "EASY_1", "instructions": "Book a flight.", "goal_shifts": {"required_shifts": shifts, "goals": goals}},
        "evaluation_criteria": {
            "action_sets": [{"action_id": "look", "allowed_tools": [{"function_name": "get_user_details", "params": {"user_id": "u1"}}]}],
            "communicate_info": ["ok"],
        },
    }
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]))
    return path


def test_without_the_plugin_the_fields_are_refused_naming_it(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["tasks", "--plugin", "airline", "--tasks-file", str(tasks_file(tmp_path, 1, ["a", "b"]))])
    assert result.exit_code != 0
    assert "goal_shifts" in result.output and "--plugin changebench" in result.output


def test_inconsistent_required_shifts_are_listed(tmp_path: Path) -> None:
    path = tasks_file(tmp_path, 2, ["booking"])
    result = CliRunner().invoke(cli, ["tasks", "--plugin", "airline", "--plugin", "changebench", "--tasks-file", str(path)])
    assert result.exit_code == 0, result.output
    assert "1 data problems" in result.output
    assert "task 't1': user_scenario.goal_shifts: required_shifts is 2 but 1 goals allow 0 (booking)" in result.output


def test_agentchangebenchs_retail_file_names_its_inconsistent_tasks() -> None:
    path = ACB / "retail" / "tasks_new.json"
    if not path.is_file():
        pytest.skip(f"AgentChangeBench's task files are not at {ACB} (they live in ../shared/reference)")
    tasks = json.loads(path.read_text())
    bad = sorted(
        t["id"] for t in tasks if t["user_scenario"]["goal_shifts"]["required_shifts"] != max(0, len(t["user_scenario"]["goal_shifts"]["goals"]) - 1)
    )
    assert bad  # the file has them; the extension must name exactly these
    from bench_changebench.extensions import GoalShifts, GoalShiftsExtension

    ext = GoalShiftsExtension()
    named = sorted(t["id"] for t in tasks if ext.problems(GoalShifts(**t["user_scenario"]["goal_shifts"])))
    assert named == bad
