"""End to end through the kernel's runner: the oracle with the planned user completes every goal, as the stored events show."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench_atod import GoalsExtension, task_goals

from bench_kernel import DomainData, RunConfig, Store, collect, get_plugin_manager, run
from bench_kernel.testing import check_gold_replays


def test_the_domain_loads_its_goals_alone_and_shares_the_field_with_bench_atod(data: DomainData) -> None:
    assert all(task_goals(t) for t in data.tasks)  # `data` loads the services plugin alone
    registry = collect(get_plugin_manager(["services", "atod"]))
    assert registry.components["task extension"]["goals"] == GoalsExtension() and registry.origin("task extension", "goals") == "services"


def test_every_default_task_replays_its_gold(data: DomainData) -> None:
    assert len(data.tasks) >= 20
    assert check_gold_replays(data) == []


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("services") / "r.db"
    summary = run(RunConfig(domain="services", plugins=["services"], agent="oracle", trials=1), path)  # the planned user by default
    assert summary.status == "complete"
    return path, summary.run_id


def final_statuses(store: Store, conversation_id: str) -> tuple[dict[str, str], list[dict[str, Any]]]:
    events = [e for e in store.conversation_events(conversation_id) if e["kind"] == "goal.status"]
    final: dict[str, str] = {}
    for event in events:
        data = json.loads(event["data_json"])
        final[data["goal_id"]] = data["status"]
    return final, events


def test_the_oracle_completes_every_goal_and_the_events_say_when(oracle_run: tuple[Path, str], data: DomainData) -> None:
    path, run_id = oracle_run
    store = Store(path)
    try:
        rows = [r for r in store.conversations(run_id) if r["arm"] == "agent"]
        assert {r["user"] for r in store.conversations(run_id)} == {"planned"}
        assert sorted(r["task_id"] for r in rows) == sorted(t.id for t in data.tasks)
        decided = completed = 0
        for row in rows:
            assert row["error"] is None and row["reward"] == 1.0, row["id"]
            goals = task_goals(data.task(row["task_id"]))
            final, events = final_statuses(store, row["id"])
            assert final == {g.id: g.status for g in goals}, row["task_id"]
            assert {e["source"] for e in events} == {"user", "services"}
            for g in goals:  # the user opens each goal before the domain reports on it
                mine = [(e["message_index"], e["source"]) for e in events if json.loads(e["data_json"])["goal_id"] == g.id]
                assert mine[0][1] == "user" and mine == sorted(mine)
            decided += sum(s in ("completed", "failed") for s in final.values())
            completed += sum(s == "completed" for s in final.values())
        assert decided and completed == decided  # dGCR 1.0
    finally:
        store.close()


def test_the_do_nothing_baseline_runs_and_fails_every_task(oracle_run: tuple[Path, str]) -> None:
    path, run_id = oracle_run
    store = Store(path)
    try:
        baseline = [r for r in store.conversations(run_id) if r["arm"] == "baseline"]
        assert baseline and all(r["error"] is None and r["reward"] == 0.0 for r in baseline)
    finally:
        store.close()


def test_a_conversation_that_leaves_a_booking_pending_fails_the_db_check(data: DomainData) -> None:
    from bench_kernel import build_environment, replay_gold

    task = data.task("services_medium_007")
    actions = task.gold_actions()
    env = build_environment(data, task)
    for action in actions:
        if action.name != "get_booking_status":  # booked, never followed up: the clock does not reach the due time
            assert not env.execute(action.as_tool_call()).error
    assert [b["status"] for b in env.agent_tools.state["bookings"].values()] == ["pending"]
    assert env.hashes()[0] != replay_gold(data, task).agent_hash
    for action in actions[len(actions) - 3 :]:
        env.execute(action.as_tool_call())  # following up moves the clock on and settles it: the gold state
    assert env.hashes()[0] == replay_gold(data, task).agent_hash
