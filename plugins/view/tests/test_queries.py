"""The canned queries pinned on hand-built rows in a real (kernel-migrated) results database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench_view.datasette_plugin import prepare_connection
from bench_view.queries import QUERIES, metadata

from bench_kernel import Store


def conversation(
    run: str,
    task: str,
    trial: int,
    reward: float,
    reason: str = "user_stop",
    arm: str = "agent",
    attributes: str = '{"domain": "mock", "persona": "Easy"}',
) -> dict[str, Any]:
    return {
        "id": f"{run}/{arm}/{task}/{trial}",
        "run_id": run,
        "arm": arm,
        "task_id": task,
        "trial": trial,
        "reward": reward,
        "termination_reason": reason,
        "attributes_json": attributes,
    }


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    store = Store(tmp_path / "q.db")
    prepare_connection(store.db.conn)  # as the viewer prepares its connections: `collate task_id`
    store.db.table("conversations").insert_all(
        [
            conversation("r", "flips", 0, 1.0),
            conversation("r", "flips", 1, 0.0),
            conversation("r", "flips", 2, 1.0),
            conversation("r", "always", 0, 1.0),
            conversation("r", "always", 1, 1.0),
            conversation("r", "never", 0, 0.0, "max_steps"),
            conversation("r", "never", 1, 0.5, "max_steps", attributes='{"persona": "Hard"}'),
            conversation("r", "never", 2, 0.0, "infrastructure_error"),
            conversation("r", "never", 0, 0.0, arm="baseline"),
            conversation("other", "flips", 0, 0.0, "agent_error"),
        ]
    )
    store.db.table("tool_calls").insert_all(
        [
            {"conversation_id": "r/agent/never/0", "message_idx": 2, "call_id": "a", "name": "lookup", "error": 1},
            {"conversation_id": "r/agent/never/1", "message_idx": 2, "call_id": "a", "name": "lookup", "error": 1},
            {"conversation_id": "r/agent/always/0", "message_idx": 2, "call_id": "a", "name": "lookup", "error": 0},
        ]
    )
    store.db.table("conversation_events").insert_all(
        [
            {"conversation_id": "r/agent/flips/0", "idx": 0, "run_id": "r", "kind": "goal.shift", "data_json": '{"goal_index": 1}'},
            {"conversation_id": "r/agent/never/0", "idx": 0, "run_id": "r", "kind": "goal.shift", "data_json": '{"goal_index": 1}'},
        ]
    )
    store.db.table("llm_calls").insert_all(
        [
            {"conversation_id": "r/agent/always/0", "run_id": "r", "cost": 0.5, "prompt_tokens": 100, "completion_tokens": 10},
            {"conversation_id": "r/agent/always/0", "run_id": "r", "cost": 0.25, "prompt_tokens": 50, "completion_tokens": 5},
            {"conversation_id": "r/agent/flips/0", "run_id": "r", "cost": 0.1, "prompt_tokens": 10, "completion_tokens": 1},
        ]
    )
    yield store
    store.close()


def query(store: Store, name: str, **params: str) -> list[dict[str, Any]]:
    defaults = {"run": "", "arm": "", "termination_reason": "", "task_id": "", "plugin": "", "metric": "", "attribute": ""}
    return list(store.db.query(QUERIES[name]["sql"], {**defaults, **params}))


def test_tasks_that_flip(store: Store) -> None:
    assert [(r["task_id"], r["trials"], r["successes"], r["outcomes_by_trial"]) for r in query(store, "tasks_that_flip", run="r")] == [
        ("flips", 3, 2, "pass fail pass")
    ]


def test_failures_by_termination_leave_out_infrastructure_errors_and_the_baseline(store: Store) -> None:
    rows = query(store, "failures_by_termination")
    assert {(r["run_id"], r["termination_reason"], r["failures"]) for r in rows} == {
        ("r", "max_steps", 2),
        ("r", "user_stop", 1),
        ("other", "agent_error", 1),
    }


def test_tool_errors_by_tool(store: Store) -> None:
    assert [(r["tool"], r["errors"]) for r in query(store, "tool_errors_by_tool", run="r")] == [("lookup", 2)]


def test_results_by_persona_shift_position_and_attribute(store: Store) -> None:
    persona = {r["persona"]: (r["conversations"], r["mean_reward"], r["success_rate"]) for r in query(store, "results_by_persona", run="r")}
    assert persona == {"Easy": (6, 0.6667, 0.6667), "Hard": (1, 0.5, 0.0)}
    shifts = query(store, "results_by_shift_position", run="r")
    assert [(r["shift_position"], r["conversations"], r["mean_reward"]) for r in shifts] == [(1, 2, 0.5)]
    domains = {r["value"]: r["conversations"] for r in query(store, "results_by_task_attribute", run="r")}
    assert domains == {"mock": 6, "(none)": 1}  # the attribute defaults to domain
    assert {r["value"] for r in query(store, "results_by_task_attribute", run="r", attribute="persona")} == {"Easy", "Hard"}


def test_most_expensive_and_conversation_lists(store: Store) -> None:
    top = query(store, "most_expensive_conversations", run="r")[0]
    assert (top["conversation_id"], top["cost_usd"], top["prompt_tokens"], top["model_calls"]) == ("r/agent/always/0", 0.75, 150, 2)
    listed = query(store, "conversations_of_run", run="r", arm="agent", termination_reason="max_steps")
    assert [r["conversation_id"] for r in listed] == ["r/agent/never/0", "r/agent/never/1"]


def test_metadata_names_every_query_and_facet() -> None:
    meta = metadata("results")["databases"]["results"]
    assert set(meta["queries"]) == set(QUERIES)
    assert "termination_reason" in meta["tables"]["conversations"]["facets"]


def test_conversations_list_task_ids_in_reading_order(store: Store) -> None:
    store.db.table("conversations").insert_all([conversation("n", task, 0, 1.0) for task in ("10", "task_10", "2", "task_9", "1")])
    assert [r["task_id"] for r in query(store, "conversations_of_run", run="n")] == ["1", "2", "10", "task_9", "task_10"]
