"""Our generated suite: reproducible from its seed, solvable by its gold actions, not passed by doing nothing."""

from __future__ import annotations

import collections
from importlib.resources import files
from pathlib import Path

from bench_airline import AirlineDomain
from bench_airline.generate import DEFAULT_SEED, suite_files

from bench_kernel import DomainOptions, RunConfig, Store, run

TASK_IDS = [t.id for t in AirlineDomain(name="airline").load(DomainOptions()).tasks]


def test_regenerating_from_the_seed_reproduces_the_shipped_files() -> None:
    shipped = files("bench_airline").joinpath("data")
    for name, text in suite_files(DEFAULT_SEED).items():
        assert shipped.joinpath(name).read_text(encoding="utf-8") == text, name


def test_another_seed_gives_another_suite() -> None:
    assert suite_files(DEFAULT_SEED + 1)["db.json"] != suite_files(DEFAULT_SEED)["db.json"]


def test_about_fifty_tasks_covering_every_kind(data) -> None:
    assert 45 <= len(data.tasks) <= 55
    kinds = collections.Counter(t.id.split("_")[0] for t in data.tasks)
    assert set(kinds) >= {"book", "cancel", "cabin", "downgrade", "move", "bags", "passengers", "status", "cheapest", "balance", "compensation"}
    refused = [t for t in data.tasks if t.id.startswith("cancel_refused")]
    assert refused and all(a.name != "cancel_reservation" for t in refused for a in t.gold_actions())
    read_only = [t for t in data.tasks if t.id.split("_")[0] in {"status", "cheapest", "balance"}]
    assert all(t.evaluation_criteria.communicate_info for t in read_only)


def test_database_has_every_payment_kind_and_flight_status(data) -> None:
    state = data.agent_state
    sources = {m.source for u in state["users"].values() for m in u.payment_methods.values()}
    assert sources == {"credit_card", "gift_card", "certificate"}
    statuses = {s.status for f in state["flights"].values() for s in f.dates.values()}
    assert statuses == {"available", "landed", "cancelled", "delayed", "flying", "on time"}
    assert len(state["reservations"]) >= 50


def test_communicated_facts_have_no_commas(data) -> None:
    facts = [f for t in data.tasks for f in t.evaluation_criteria.communicate_info or []]
    assert facts and all("," not in f for f in facts)


def test_oracle_solves_every_task_and_doing_nothing_none(tmp_path: Path, data) -> None:
    path = tmp_path / "r.db"
    summary = run(RunConfig(domain="airline", plugins=["airline"], trials=1), path)
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
    assert set(rewards["baseline"]) == ids
    assert sum(r == 1.0 for r in rewards["baseline"].values()) == 0
