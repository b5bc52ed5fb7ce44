"""Our generated suite: reproducible from its seed, every task solvable and not passed by doing nothing."""

from __future__ import annotations

import collections
from importlib.resources import files
from pathlib import Path

import pytest
from bench_retail.generate import DEFAULT_SEED, main, write_suite

from bench_kernel import RunConfig, Store, run

SHIPPED = ("db.json", "tasks.json", "split_tasks.json", "policy.md")


def test_regenerating_from_the_seed_reproduces_the_shipped_files(tmp_path: Path) -> None:
    write_suite(DEFAULT_SEED, tmp_path)
    packaged = files("bench_retail").joinpath("data")
    for name in SHIPPED:
        assert (tmp_path / name).read_bytes() == packaged.joinpath(name).read_bytes(), name


def test_module_entry_point_and_other_seeds(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["--seed", "11", "--out", str(tmp_path)])
    assert "tasks to" in capsys.readouterr().out
    other = (tmp_path / "db.json").read_bytes()
    assert other != files("bench_retail").joinpath("data/db.json").read_bytes()
    assert len(other) < 400_000


def test_database_has_every_order_status_and_payment_kind(data) -> None:
    state = data.agent_state
    statuses = {o.status for o in state["orders"].values()}
    assert statuses == {"pending", "pending (item modified)", "processed", "delivered", "cancelled", "exchange requested", "return requested"}
    sources = {m.source for u in state["users"].values() for m in u.payment_methods.values()}
    assert sources == {"credit_card", "paypal", "gift_card"}
    assert any(not v.available for p in state["products"].values() for v in p.variants.values())


def test_tasks_cover_every_kind_of_request(data) -> None:
    kinds = collections.Counter(t.description.purpose for t in data.tasks)
    writes = {a.name for t in data.tasks for a in t.gold_actions()}
    assert writes >= {
        "cancel_pending_order",
        "modify_pending_order_items",
        "modify_pending_order_address",
        "modify_pending_order_payment",
        "modify_user_address",
        "return_delivered_order_items",
        "exchange_delivered_order_items",
    }
    assert min(kinds.values()) >= 4 and len(kinds) >= 10
    bases = {tuple(t.evaluation_criteria.reward_basis) for t in data.tasks}
    assert bases == {("DB",), ("DB", "COMMUNICATE")}
    read_only = [t for t in data.tasks if not any(a.name.startswith(("cancel", "modify", "return", "exchange")) for a in t.gold_actions())]
    assert read_only and all(t.evaluation_criteria.communicate_info for t in read_only)
    facts = [f for t in data.tasks for f in t.evaluation_criteria.communicate_info or []]
    assert all("," not in f for f in facts)


def test_oracle_solves_every_task_and_doing_nothing_none(tmp_path: Path, data) -> None:
    path = tmp_path / "r.db"
    summary = run(RunConfig(domain="retail", plugins=["retail"], trials=1), path)
    assert summary.status == "complete"
    store = Store(path)
    try:
        rewards: dict[str, dict[str, float | None]] = {"agent": {}, "baseline": {}}
        for row in store.conversations(summary.run_id):
            assert row["error"] is None, f"{row['id']}: {row['error']}"
            rewards[row["arm"]][row["task_id"]] = row["reward"]
    finally:
        store.close()
    ids = {t.id for t in data.tasks}
    assert rewards["agent"] == {task_id: 1.0 for task_id in ids}
    assert set(rewards["baseline"]) == ids and sum(r == 1.0 for r in rewards["baseline"].values()) == 0
