"""AgentChangeBench's airline and retail task files run on our airline and retail plugins with this one."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench_kernel import RunConfig, Store, run

ACB = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference") / "agentchangebench"


@pytest.mark.parametrize("domain", ["airline", "retail"])
def test_the_oracle_scores_tsr_one_on_every_task_and_doing_nothing_does_not(tmp_path: Path, domain: str) -> None:
    tasks = ACB / domain / "tasks_new.json"
    if not tasks.is_file():
        pytest.skip(f"AgentChangeBench's task files are not at {ACB} (they live in ../shared/reference)")
    summary = run(RunConfig(domain=domain, plugins=[domain, "changebench"], tasks_file=str(tasks), agent="oracle"), tmp_path / "r.db")
    assert summary.status == "complete"
    store = Store(tmp_path / "r.db")
    try:
        rows = list(
            store.db.query(
                "select c.arm, c.task_id, v.value from metric_values v join conversations c on c.id = v.conversation_id "
                "where v.plugin = 'changebench' and v.metric = 'tsr'"
            )
        )
        conversations = store.conversations(summary.run_id)
    finally:
        store.close()
    assert all(c["error"] is None for c in conversations)
    agent = [r["value"] for r in rows if r["arm"] == "agent"]
    baseline = [r["value"] for r in rows if r["arm"] == "baseline"]
    assert len(agent) == len(baseline) == len({c["task_id"] for c in conversations}) >= 50
    assert agent == [1.0] * len(agent)
    assert max(baseline) < 1.0
