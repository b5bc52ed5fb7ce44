"""The symbolic goal store: ids, status history, edges, blocked goals, rows for the run's database."""

from __future__ import annotations

import pytest
from bench_memory.store import GoalStore

from bench_kernel import Store


def _two_goals() -> GoalStore:
    store = GoalStore("c1")
    store.insert(
        domain="Hotels",
        intent="book hotel",
        content="a hotel in Paris",
        core_content="book hotel paris",
        slots={"place": "paris"},
        status="open",
        turn=1,
    )
    store.insert(
        domain="Payment",
        intent="make payment",
        content="pay for the hotel",
        core_content="make payment hotel",
        slots={"for": "hotel"},
        status="open",
        turn=2,
    )
    return store


def test_insert_update_and_status_history() -> None:
    store = _two_goals()
    assert [g.id for g in store.goals()] == ["g1", "g2"]
    assert store.update("g1", turn=3, status="pending", slots={"date": "may 3"}) is True
    assert store.update("g1", turn=4, status="pending") is False  # the same status is no change
    assert store.update("g1", turn=5, status="completed") is True
    goal = store.get("g1")
    assert goal.history == [(1, "open"), (3, "pending"), (5, "completed")]
    assert goal.slots == {"place": "paris", "date": "may 3"} and goal.last_turn == 5
    assert [goal.status_at(t) for t in (0, 1, 2, 3, 4, 5, 9)] == [None, "open", "open", "pending", "pending", "completed", "completed"]
    assert [g.id for g in store.by_core_content("book hotel paris")] == ["g1"]
    with pytest.raises(KeyError):
        store.get("g9")


def test_a_goal_is_blocked_until_every_dependency_is_finished() -> None:
    store = _two_goals()
    store.link("g2", "g1", "dependency")
    assert store.dependencies("g2") == ["g1"] and store.blocked("g2") and not store.blocked("g1")
    for status, blocked in (("pending", True), ("failed", False), ("open", True), ("abandoned", False), ("completed", False)):
        store.update("g1", turn=9, status=status)
        assert store.blocked("g2") is blocked, status
    store.link("g1", "g2", "link")
    assert store.edges("link") == [("g1", "g2", "link")]
    with pytest.raises(ValueError, match="edge kind"):
        store.link("g1", "g2", "parent")


def test_rows_go_into_the_run_database_through_the_plugins_migrations(tmp_path) -> None:
    from bench_memory.store import migrations

    store = _two_goals()
    store.link("g2", "g1", "dependency")
    store.set_gold({"g1": "goal_1"})
    run_db = Store(tmp_path / "r.db", extra_migrations=[migrations])
    try:
        for table, row in store.rows():
            run_db.db.table(table).insert(row)
        rows = list(run_db.db.query("select goal_id, gold_goal_id from memory_goals order by goal_id"))
        edges = list(run_db.db.query("select goal_id, related_id, kind from memory_edges"))
    finally:
        run_db.close()
    assert rows == [{"goal_id": "g1", "gold_goal_id": "goal_1"}, {"goal_id": "g2", "gold_goal_id": None}]
    assert edges == [{"goal_id": "g2", "related_id": "g1", "kind": "dependency"}]
