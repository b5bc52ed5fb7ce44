"""Our generated suite and AgentChangeBench's files: loading, regeneration, bad input, and offline runs."""

from __future__ import annotations

import os
import shutil
from importlib.resources import files
from pathlib import Path

import pytest
from bench_banking import BankingDomain
from bench_banking.generate import DEFAULT_SEED, write_suite

from bench_kernel import ConfigError, DomainOptions, Mode, RunConfig, Store, run

ACB = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference") / "agentchangebench" / "banking"
PACKAGED = Path(str(files("bench_banking").joinpath("data")))


def test_the_shipped_suite_regenerates_identically(tmp_path: Path) -> None:
    write_suite(tmp_path, DEFAULT_SEED)
    for name in ("db.json", "tasks.json"):
        assert (tmp_path / name).read_text() == (PACKAGED / name).read_text(), name


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.NO_USER, Mode.ORACLE_PLAN])
def test_the_oracle_solves_every_task_and_doing_nothing_none(tmp_path: Path, mode: Mode) -> None:
    summary = run(RunConfig(domain="banking", plugins=["banking"], mode=mode), tmp_path / "r.db")
    store = Store(tmp_path / "r.db")
    try:
        rows = store.conversations(summary.run_id)
    finally:
        store.close()
    assert {r["reward"] for r in rows if r["arm"] == "agent"} == {1.0}
    assert {r["reward"] for r in rows if r["arm"] == "baseline"} == {0.0}
    assert len(rows) == 2 * 26


def test_a_malformed_database_names_the_file_and_the_path(tmp_path: Path) -> None:
    for name in ("policy.md", "tasks.json"):
        shutil.copy(PACKAGED / name, tmp_path / name)
    # A data directory is recognised by db.toml, tasks.json and policy.md.
    (tmp_path / "db.toml").write_text('[[cards]]\ncard_id = "c"\naccount_id = "a"\ntype = "debit"\nlast4 = "1"\nstatus = "Lost"\n')
    with pytest.raises(ConfigError) as raised:
        BankingDomain().load(DomainOptions(data_dir=tmp_path))
    assert str(tmp_path / "db.toml") in str(raised.value) and "$.cards[0].status" in str(raised.value)


def test_agentchangebenchs_database_loads_and_its_inconsistent_tasks_are_named() -> None:
    if not ACB.is_dir():
        pytest.skip(f"AgentChangeBench's banking files are not at {ACB} (they live in ../shared/reference)")
    from bench_kernel import collect, get_plugin_manager, load_domain

    registry = collect(get_plugin_manager(["banking", "changebench"]))
    data = load_domain(registry, RunConfig(domain="banking", data_dir=str(ACB)))
    assert len(data.agent_state["customers"]) == 6 and len(data.tasks) == 50
    named = {p.split("'")[1] for p in data.task_problems}
    assert "1_goalshift_banking_001" in named  # cust_101's task expects acc_001, which is cust_001's
    assert all(t.attributes.get("persona") for t in data.tasks)  # persona keys became texts, the key kept
