"""Against tau2-bench's own airline data (read from ../shared; skipped when absent)."""

from __future__ import annotations

import json

import pytest

from bench_kernel import check_tasks, render_check, replay_gold


def test_loading_and_dumping_tau2_db_gives_the_initial_hash(reference_data, expected_hashes) -> None:
    assert reference_data.reference_hash(reference_data.agent_state) == expected_hashes["initial_agent_db_hash"]
    assert expected_hashes["initial_user_db_hash"] is None


def test_sample_gold_hashes_and_action_errors_match(reference_data, expected_hashes) -> None:
    for task_id, expected in expected_hashes["tasks"].items():
        task = reference_data.task(task_id)
        gold = replay_gold(reference_data, task, with_reference=True)
        assert gold.reference_hash == expected["gold_agent"], task_id
        errors = [e.split(" ", 1)[0] for e in gold.action_errors]
        assert errors == [e.split(":", 1)[0] for e in expected["gold_action_errors"]], task_id


def test_sample_start_and_live_hashes_match(reference_data, expected_hashes) -> None:
    from bench_kernel import build_environment

    for task_id, expected in expected_hashes["tasks"].items():
        task = reference_data.task(task_id)
        env = build_environment(reference_data, task)
        assert reference_data.reference_hash(env.agent_tools.state) == expected["start_agent"], task_id
        for action in task.gold_actions():
            env.execute(action.as_tool_call())  # as a live conversation: sync after every call
        assert reference_data.reference_hash(env.agent_tools.state) == expected["live_agent"], task_id
        assert expected["start_user"] is expected["live_user"] is None


def test_every_tau2_task_replays_and_failures_are_listed_by_id(reference_data) -> None:
    results = check_tasks(reference_data)
    assert len(results) == 50
    summary = render_check(reference_data, results)
    failing = [r["task_id"] for r in results if not r["ok"]]
    assert summary.startswith(f"airline: 50 tasks, gold replay ok for {50 - len(failing)}, failing {len(failing)}")
    for task_id in failing:
        assert f"FAIL {task_id}:" in summary
    assert failing == []  # tau2's airline gold actions never raise
    assert reference_data.agent_state.verify_untouched() == []


def test_write_tasks_change_the_hash_and_read_tasks_do_not(reference_data) -> None:
    initial = reference_data.reference_hash(reference_data.agent_state)
    changed = {t.id for t in reference_data.tasks if replay_gold(reference_data, t, with_reference=True).reference_hash != initial}
    writers = {
        t.id
        for t in reference_data.tasks
        if any(
            a.name
            in {
                "book_reservation",
                "cancel_reservation",
                "update_reservation_flights",
                "update_reservation_baggages",
                "update_reservation_passengers",
                "send_certificate",
            }
            for a in t.gold_actions()
        )
    }
    assert changed == writers and len(changed) == 26


@pytest.mark.parametrize("name", ["db.json", "tasks.json"])
def test_reference_files_are_not_in_the_repo(name: str) -> None:
    from importlib.resources import files

    packaged = json.loads((files("bench_airline") / "data" / name).read_text())
    if name == "db.json":
        assert "HAT001" not in packaged["flights"] and len(packaged["users"]) < 100
    else:
        assert all(not t["id"].isdigit() for t in packaged)
