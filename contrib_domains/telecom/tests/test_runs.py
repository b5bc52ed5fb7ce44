"""End to end through the kernel's runner, offline: the oracle (with the scripted user acting on the phone) solves every task."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench_kernel import DomainData, Mode, RunConfig, Store, run


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.NO_USER, Mode.ORACLE_PLAN])
def test_the_oracle_solves_the_default_suite_and_doing_nothing_solves_none(tmp_path: Path, mode: Mode, own: DomainData) -> None:
    path = tmp_path / "r.db"
    summary = run(RunConfig(domain="telecom", plugins=["telecom"], agent="oracle", trials=1, mode=mode), path)
    assert summary.status == "complete"
    store = Store(path)
    try:
        rows = list(store.conversations(summary.run_id))
        agent = {r["task_id"]: r["reward"] for r in rows if r["arm"] == "agent"}
        baseline = {r["task_id"]: r["reward"] for r in rows if r["arm"] == "baseline"}
        assert all(r["error"] is None for r in rows), [r["error"] for r in rows if r["error"]]
        assert agent == {t.id: 1.0 for t in own.tasks}
        assert baseline == {t.id: 0.0 for t in own.tasks}
        if mode is Mode.DEFAULT:
            device_calls = list(
                store.db.query(
                    "select t.error from tool_calls t join conversations c on c.id = t.conversation_id "
                    "where c.run_id = ? and c.arm = 'agent' and t.requestor = 'user'",
                    [summary.run_id],
                )
            )
            assert len(device_calls) > 50 and all(c["error"] == 0 for c in device_calls)
    finally:
        store.close()


def test_the_default_suite_is_every_single_fault_and_a_sample_of_each_size(own: DomainData) -> None:
    ids = [t.id for t in own.tasks]
    single = [i for i in ids if "|" not in i]
    assert len(single) == 21 and len(ids) == 57  # 20 as in tau2, plus the no-refuel fault on its own
    sizes = {(i.split("]")[0], i.count("|") + 1) for i in ids}
    assert ("[mms_issue", 9) in sizes and ("[service_issue", 5) in sizes and ("[mobile_data_issue", 7) in sizes
