"""A real AgentChangeBench results file re-scored offline with banking, changebench and gsrt: TSR and its channels match."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench_kernel import Store
from bench_kernel.testing import bench_cli

SAMPLE = Path(__file__).resolve().parents[1] / ".." / "shared" / "reference" / "agentchangebench" / "results" / "banking_gpt-4.1_tsr_sample.json"


def as_stored(document: dict[str, Any]) -> None:
    """The sample as it is."""


def null_reward_basis(document: dict[str, Any]) -> None:
    """AgentChangeBench's later files store every task's reward_basis as null (deprecated in its data model)."""
    for task in document["tasks"]:
        if task.get("evaluation_criteria"):
            task["evaluation_criteria"]["reward_basis"] = None


def tidied_echoes(document: dict[str, Any]) -> None:
    """The judge echoes each NL assertion and the file stores the echo; in real files the echo lost a double space
    or a stray quote of the task's text (3 simulations of AgentChangeBench's airline files)."""
    for task in document["tasks"]:
        criteria = task.get("evaluation_criteria") or {}
        criteria["nl_assertions"] = [a.replace(" ", "  ", 1) + " " for a in criteria.get("nl_assertions") or []] or None


@pytest.mark.parametrize("shape", [as_stored, null_reward_basis, tidied_echoes])
def test_every_simulations_tsr_and_channels_are_reproduced_with_the_files_own_verdicts(tmp_path: Path, shape) -> None:
    if not SAMPLE.is_file():
        pytest.skip(f"AgentChangeBench's results sample is not at {SAMPLE} (it lives in ../shared/reference)")
    document = json.loads(SAMPLE.read_text())
    shape(document)
    source = tmp_path / "sample.json"
    source.write_text(json.dumps(document))
    db = tmp_path / "i.db"
    result = CliRunner().invoke(
        bench_cli(["tau2"]),
        ["import", "tau2-results", str(source), "--plugin", "banking", "--plugin", "changebench", "--plugin", "gsrt", "--db", str(db)],
    )
    assert result.exit_code == 0, result.output
    assert "skipped" not in result.output, result.output
    expected = {sim["id"]: sim["reward_info"]["info"]["tsr_details"] for sim in document["simulations"]}
    store = Store(db)
    try:
        rows = store.conversations(store.runs()[0]["id"])
        values = {
            (r["conversation_id"], r["metric"]): r
            for r in store.db.query("select conversation_id, metric, value, details_json from metric_values where plugin = 'changebench'")
        }
    finally:
        store.close()
    assert len(rows) == len(expected) == 13
    for row in rows:
        stored = expected[json.loads(row["attributes_json"])["simulation_id"]]  # the file's simulation id is kept
        got = {m: values[(row["id"], m)]["value"] for m in ("tsr", "tsr.action", "tsr.nl", "tsr.communicate")}
        assert got["tsr"] == pytest.approx(stored["overall_tsr"]), row["task_id"]
        assert got["tsr.action"] == pytest.approx(stored["action"]), row["task_id"]
        assert got["tsr.nl"] == pytest.approx(stored["nl_assertion"]), row["task_id"]
        if stored["communicate_info"] is None:
            assert got["tsr.communicate"] is None
        else:
            assert got["tsr.communicate"] == pytest.approx(stored["communicate_info"]), row["task_id"]
        assert {(row["id"], m) for m in ("tue", "tcrr")} <= set(values)
        if shape is null_reward_basis:  # no component gates the reward, as in AgentChangeBench's evaluator
            assert row["reward"] == 1.0, row["task_id"]
