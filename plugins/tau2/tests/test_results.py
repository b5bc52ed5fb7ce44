"""tau2 results files: our export re-scored by our import, and a real AgentChangeBench file once banking exists."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_kernel import Store
from bench_kernel.testing import bench_cli

SHARED = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference"


cli = bench_cli(["tau2"])


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.fixture
def exported(tmp_path: Path) -> Path:
    db = tmp_path / "run.db"
    invoke("run", "--plugin", "mock", "--trials", "2", "--run-id", "source", "--db", str(db), "--format", "none")
    out = tmp_path / "results.json"
    invoke("export", "tau2-results", "source", "--db", str(db), "-o", str(out))
    return out


def rewards(db: Path, run_id: str) -> dict[tuple[str, int], float]:
    store = Store(db)
    try:
        return {(r["task_id"], r["trial"]): r["reward"] for r in store.conversations(run_id) if r["arm"] == "agent"}
    finally:
        store.close()


def test_export_has_tau2_shape(exported: Path) -> None:
    document = json.loads(exported.read_text())
    assert set(document) == {"timestamp", "info", "tasks", "simulations"}
    assert document["info"]["environment_info"]["domain_name"] == "mock"
    sim = document["simulations"][0]
    assert {"id", "task_id", "trial", "seed", "termination_reason", "reward_info", "messages"} <= set(sim)
    assert sim["messages"][0] == {**sim["messages"][0], "role": "assistant", "content": "Hi! How can I help you today?"}
    assert set(sim["reward_info"]) >= {"reward", "db_check", "action_checks", "reward_basis", "reward_breakdown"}


# The fields tau2's own pydantic models require (tau2-bench src/tau2/data_model: simulation.Info, ActionCheck,
# EnvAssertionCheck; tasks.Action, EnvAssertion; environment.EnvironmentInfo), with the JSON types they accept.
TAU2_INFO = {"git_commit": str, "num_trials": int, "max_steps": int, "max_errors": int}
TAU2_ACTION = {"action_id": str, "requestor": str, "name": str, "arguments": dict}
TAU2_ENV_ASSERTION = {"env_type": str, "func_name": str, "arguments": dict, "assert_value": bool}


def has_fields(value: object, fields: dict[str, type]) -> bool:
    return isinstance(value, dict) and all(isinstance(value.get(k), t) for k, t in fields.items())


def test_export_loads_as_tau2_results(exported: Path) -> None:
    document = json.loads(exported.read_text())
    info = document["info"]
    assert has_fields(info, TAU2_INFO), info
    assert info["git_commit"].startswith("bench-kernel")
    assert isinstance(info["agent_info"]["implementation"], str) and isinstance(info["user_info"]["implementation"], str)
    assert isinstance(info["environment_info"]["domain_name"], str) and isinstance(info["environment_info"]["policy"], str)
    tasks = {t["id"]: t for t in document["tasks"]}
    checked = {"action": 0, "env": 0}
    for sim in document["simulations"]:
        criteria = tasks[sim["task_id"]]["evaluation_criteria"]
        actions, assertions = sim["reward_info"]["action_checks"], sim["reward_info"]["env_assertions"]
        assert [c["action"] for c in actions] == (criteria.get("actions") or [])
        assert [c["env_assertion"] for c in assertions] == (criteria.get("env_assertions") or [])
        for check in actions:
            assert has_fields(check["action"], TAU2_ACTION) and isinstance(check["action_match"], bool), check
            assert check["action_reward"] == float(check["action_match"])
        for check in assertions:
            assert has_fields(check["env_assertion"], TAU2_ENV_ASSERTION) and isinstance(check["met"], bool), check
        checked["action"] += len(actions)
        checked["env"] += len(assertions)
    assert checked["action"] > 0 and checked["env"] > 0


def test_import_rescores_an_export_and_agrees(exported: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["import", "tau2-results", str(exported), "--plugin", "mock", "--db", str(tmp_path / "i.db")])
    assert result.exit_code == 0, result.output
    assert "our reward equals theirs for 24" in result.output
    store = Store(tmp_path / "i.db")
    run_id = store.runs()[0]["id"]
    store.close()
    assert rewards(tmp_path / "i.db", run_id) == rewards(tmp_path / "run.db", "source")


def test_import_replays_tool_calls_so_a_missing_write_fails(exported: Path, tmp_path: Path) -> None:
    document = json.loads(exported.read_text())
    sim = next(s for s in document["simulations"] if s["task_id"] == "upgrade_by_email")
    sim["messages"] = [m for m in sim["messages"] if not any(c["name"] == "change_plan" for c in m.get("tool_calls") or [])]
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(document))
    result = CliRunner().invoke(cli, ["import", "tau2-results", str(tampered), "--plugin", "mock", "--db", str(tmp_path / "t.db")])
    assert result.exit_code == 0, result.output
    assert "differs: upgrade_by_email/" in result.output and "ours 0.0" in result.output


def test_a_file_that_is_not_a_results_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text("[]")
    result = CliRunner().invoke(cli, ["import", "tau2-results", str(path), "--plugin", "mock", "--db", str(tmp_path / "x.db")])
    assert result.exit_code != 0 and "not a tau2 results file" in result.output


def test_agentchangebench_sample_imports_once_banking_exists(tmp_path: Path) -> None:
    sample = SHARED / "agentchangebench" / "results" / "banking_gpt-4o-mini_sample.json"
    if not sample.exists():
        pytest.skip(f"reference data absent: {sample}")
    if importlib.util.find_spec("bench_banking") is None:
        pytest.skip("waits on the banking domain plugin (bench-banking), not built yet")
    invoke("import", "tau2-results", str(sample), "--plugin", "banking", "--db", str(tmp_path / "b.db"))
