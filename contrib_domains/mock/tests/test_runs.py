"""End to end through the kernel's runner: the oracle solves every task, doing nothing solves none."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_kernel import DomainData, Mode, RunConfig, Store, run


def rewards(tmp_path: Path, mode: Mode) -> dict[str, dict[str, float | None]]:
    """Run the oracle (and the do-nothing baseline) on every task; rewards by arm, then task.

    Also checks the one thing the gold replay cannot: that the live conversation of
    reactivate_and_restart, where sync runs after every call, ends with a green router.
    """
    path = tmp_path / "r.db"
    summary = run(RunConfig(domain="mock", plugins=["mock"], agent="oracle", trials=1, mode=mode), path)
    assert summary.status == "complete"
    store = Store(path)
    try:
        found: dict[str, dict[str, float | None]] = {"agent": {}, "baseline": {}}
        for row in store.conversations(summary.run_id):
            assert row["error"] is None, f"{row['id']}: {row['error']}"
            found[row["arm"]][row["task_id"]] = row["reward"]
        sync_task = f"{summary.run_id}/agent/reactivate_and_restart/0"
        assert "The router restarted. The status light is now green." in [m["content"] for m in store.messages(sync_task)]
        return found
    finally:
        store.close()


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.NO_USER])
def test_oracle_solves_every_task_and_doing_nothing_none(tmp_path: Path, mode: Mode, data: DomainData, do_nothing_passes: set[str]) -> None:
    task_ids = sorted(t.id for t in data.tasks)
    found = rewards(tmp_path, mode)
    assert found["agent"] == {task_id: 1.0 for task_id in task_ids}
    assert sorted(found["baseline"]) == task_ids
    failed = {task_id for task_id, reward in found["baseline"].items() if reward == 0.0}
    assert failed == set(task_ids) - do_nothing_passes
