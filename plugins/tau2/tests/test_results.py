"""tau2 results files: our export re-scored by our import, and a real AgentChangeBench file once banking exists."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
from pathlib import Path

import pytest
from bench_mock.domain import MockDomain
from bench_tau2.results import replay_trajectory
from click.testing import CliRunner

from bench_kernel import AssistantMessage, DomainOptions, Store, ToolCall, ToolMessage, UserMessage, replay_gold
from bench_kernel.testing import FakeOpenAIServer, bench_cli

SHARED = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference")


cli = bench_cli(["tau2", "profiles"])


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


def test_export_names_the_runs_profile_and_the_sampling_its_requests_carried(tmp_path: Path) -> None:
    db, profile = tmp_path / "run.db", tmp_path / "mine"
    invoke("profile", "copy", str(profile))
    (profile / "profile.toml").write_text(
        (profile / "profile.toml")
        .read_text()
        .replace('name = "bench"', 'name = "mine"')
        .replace("[sampling.user]\ntemperature = 0.0", "[sampling.user]\ntemperature = 0.5")
    )
    with FakeOpenAIServer(models=["m"]) as server:  # a configured role is checked against a live endpoint
        result = CliRunner().invoke(
            bench_cli(["tau2", "openai"]),
            [
                "run",
                "--plugin",
                "mock",
                "--plugin",
                "openai",
                "--run-id",
                "p",
                "--db",
                str(db),
                "--format",
                "none",
                "--profile",
                str(profile),
                "--user-model",
                "m",
                "--user-base-url",
                server.base_url,
            ],
            env={"OPENAI_API_KEY": "x"},
        )
    assert result.exit_code == 0, result.output
    out = tmp_path / "results.json"
    invoke("export", "tau2-results", "p", "--db", str(db), "-o", str(out))
    info = json.loads(out.read_text())["info"]
    store = Store(db)
    try:
        recorded = store.run("p")
    finally:
        store.close()
    assert recorded is not None
    assert info["bench_profile"]["name"] == "mine"
    assert info["bench_profile"]["sha256"] == recorded.config["profile"]["sha256"]
    assert info["user_info"]["llm_args"] == {"temperature": 0.5}  # the profile's default under the role's own (none)


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
    with sqlite3.connect(tmp_path / "t.db") as conn:  # the imported failure is attributed, by the run's rules
        labels = {label for (label,) in conn.execute("select attribution from conversations where task_id = 'upgrade_by_email' and reward < 1")}
    assert labels == {"agent"}


def test_replay_trajectory_rebuilds_the_final_state_from_the_tool_calls() -> None:
    data = MockDomain().load(DomainOptions())
    task = data.task("upgrade_by_email")
    change = ToolCall(id="c1", name="change_plan", arguments={"customer_id": "C-1001", "plan_id": "fiber-1000"})
    messages = [UserMessage(content="Upgrade me."), AssistantMessage(tool_calls=[change]), ToolMessage(id="c1", content="{}")]
    gold = replay_gold(data, task)
    assert replay_trajectory(data, task, messages).hashes()[0] == gold.agent_hash
    assert replay_trajectory(data, task, messages[:1]).hashes()[0] != gold.agent_hash


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


def import_file(document: dict, tmp_path: Path, *options: str, name: str = "f") -> tuple[int, str, Path]:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(document))
    db = tmp_path / f"{name}.db"
    result = CliRunner().invoke(cli, ["import", "tau2-results", str(path), "--plugin", "mock", "--db", str(db), *options])
    return result.exit_code, result.output, db


def test_reimporting_reports_the_agreement_found_before(exported: Path, tmp_path: Path) -> None:
    document = json.loads(exported.read_text())
    for _ in range(2):
        code, output, _db = import_file(document, tmp_path)
        assert code == 0 and "our reward equals theirs for 24 of 24" in output, output


def test_import_takes_a_run_id(exported: Path, tmp_path: Path) -> None:
    code, output, db = import_file(json.loads(exported.read_text()), tmp_path, "--run-id", "theirs")
    assert code == 0 and "into run theirs (mock)" in output
    assert set(rewards(db, "theirs").values()) == {1.0}


def changed_gold(document: dict) -> dict:
    """The file's copy of upgrade_by_email asks for another plan than the domain's."""
    task = next(t for t in document["tasks"] if t["id"] == "upgrade_by_email")
    action = next(a for a in task["evaluation_criteria"]["actions"] if a["name"] == "change_plan")
    action["arguments"]["plan_id"] = "fiber-100"
    return document


def test_tasks_embedded_grades_with_the_files_tasks_and_warns(exported: Path, tmp_path: Path) -> None:
    code, output, db = import_file(changed_gold(json.loads(exported.read_text())), tmp_path)
    assert code == 0, output
    assert (
        "warning: 1 task(s) differ between the file and domain 'mock' in evaluation_criteria (graded with the embedded version; "
        "--tasks current for the other): upgrade_by_email" in output
    )
    assert "our reward equals theirs for 22 of 24" in output
    assert {k: v for k, v in rewards(db, next(iter(run_ids(db)))).items() if k[0] == "upgrade_by_email"} == {
        ("upgrade_by_email", 0): 0.0,
        ("upgrade_by_email", 1): 0.0,
    }


def test_tasks_current_grades_with_the_domains_tasks(exported: Path, tmp_path: Path) -> None:
    code, output, _db = import_file(changed_gold(json.loads(exported.read_text())), tmp_path, "--tasks", "current")
    assert code == 0, output
    assert "our reward equals theirs for 24 of 24" in output and "graded with the current version" in output


def run_ids(db: Path) -> list[str]:
    store = Store(db)
    try:
        return [r["id"] for r in store.runs()]
    finally:
        store.close()


def test_an_infrastructure_error_stays_one(exported: Path, tmp_path: Path) -> None:
    document = json.loads(exported.read_text())
    sim = document["simulations"][0]
    sim.update(termination_reason="infrastructure_error", reward_info=None, messages=[])
    code, output, db = import_file(document, tmp_path)
    assert code == 0, output
    assert "our reward equals theirs for 23 of 23" in output and "1 stored as infrastructure errors" in output
    store = Store(db)
    try:
        [row] = [r for r in store.conversations(run_ids(db)[0]) if (r["task_id"], r["trial"]) == (sim["task_id"], sim["trial"])]
    finally:
        store.close()
    assert (row["termination_reason"], row["reward"]) == ("infrastructure_error", None)
    assert row["attribution"] == "infrastructure"  # labelled as a run's conversation would be


def test_an_unknown_agent_cost_is_exported_and_imported_as_null(tmp_path: Path) -> None:
    db = tmp_path / "run.db"
    invoke("run", "--plugin", "mock", "--run-id", "own", "--db", str(db), "--format", "none", "--no-baseline")
    store = Store(db)
    try:  # what an agent calling its models itself leaves (an HTTP or framework agent): an unknown cost, not 0.0
        unknown = store.db.execute("select id, task_id from conversations order by id limit 1").fetchone()
        store.db.execute("update conversations set agent_cost = null where id = ?", [unknown[0]])
        store.db.conn.commit()
    finally:
        store.close()
    out = tmp_path / "results.json"
    invoke("export", "tau2-results", "own", "--db", str(db), "-o", str(out))
    document = json.loads(out.read_text())
    costs = {s["task_id"]: s["agent_cost"] for s in document["simulations"]}
    assert costs.pop(unknown[1]) is None and set(costs.values()) == {0.0}
    code, output, imported = import_file(document, tmp_path)
    assert code == 0, output
    store = Store(imported)
    try:
        back = {r["task_id"]: r["agent_cost"] for r in store.conversations(run_ids(imported)[0])}
    finally:
        store.close()
    assert back[unknown[1]] is None and {v for k, v in back.items() if k != unknown[1]} == {0.0}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda sims: sims[3].pop("task_id"), "f.json: simulation '{id}' @ $.simulations[3]: no task_id @ $.simulations[3].task_id"),
        (
            lambda sims: sims[3].update(trial="x"),
            "f.json: simulation '{id}' (task '{task}') @ $.simulations[3]: trial must be a whole number from 0 to 2147483647, not 'x' "
            "@ $.simulations[3].trial",
        ),
        (
            lambda sims: sims[3]["messages"].append({"role": "robot"}),
            "f.json: simulation '{id}' (task '{task}') @ $.simulations[3]: unknown message role 'robot' @ $.simulations[3].messages[",
        ),
        (
            lambda sims: sims[3].update(task_id="nowhere"),
            "f.json: simulation '{id}' (task 'nowhere') @ $.simulations[3]: the task is in neither the file nor domain 'mock'",
        ),
    ],
)
def test_a_simulation_bench_cannot_read_is_named_and_skipped(exported: Path, tmp_path: Path, change, message: str) -> None:
    document = json.loads(exported.read_text())
    sim = document["simulations"][3]
    expected = message.format(id=sim["id"], task=sim["task_id"])
    change(document["simulations"])
    code, output, db = import_file(document, tmp_path)
    assert code == 0 and "our reward equals theirs for 23 of 23; 1 skipped" in output, output
    assert "warning: skipped " in output and expected in output and "Traceback" not in output, output
    assert len(rewards(db, run_ids(db)[0])) == 23


def test_a_failing_initial_state_names_file_and_simulation(exported: Path, tmp_path: Path) -> None:
    document = json.loads(exported.read_text())
    task = document["tasks"][3]
    task["initial_state"] = {"initialization_actions": [{"env_type": "assistant", "func_name": "no_such_function", "arguments": {}}]}
    index, sim = next((i, s) for i, s in enumerate(document["simulations"]) if s["task_id"] == task["id"])
    code, output, _db = import_file(document, tmp_path)
    assert code == 0 and "our reward equals theirs for 22 of 22; 2 skipped" in output, output
    assert f"f.json: simulation '{sim['id']}' (task '{sim['task_id']}') @ $.simulations[{index}]: Function 'no_such_function'" in output


def test_an_agentchangebench_airline_file_imports(tmp_path: Path) -> None:
    tasks_file = SHARED / "agentchangebench" / "airline" / "tasks_new.json"
    if not tasks_file.exists():
        pytest.skip(f"reference data absent: {tasks_file}")
    if importlib.util.find_spec("bench_airline") is None or importlib.util.find_spec("bench_changebench") is None:
        pytest.skip("needs bench-airline and bench-changebench")
    # Its tasks give initialization data to the user side, which airline has no tools for.
    task = json.loads(tasks_file.read_text())[0]
    assert task["initial_state"]["initialization_data"]["user_data"]
    sims = [
        {
            "id": "s1",
            "task_id": task["id"],
            "trial": 0,
            "termination_reason": "user_stop",
            "reward_info": {"reward": 0.0},
            "messages": [{"role": "assistant", "content": "Hi"}, {"role": "user", "content": "###STOP###"}],
        }
    ]
    path = tmp_path / "acb_airline.json"
    path.write_text(json.dumps({"info": {"environment_info": {"domain_name": "airline"}}, "tasks": [task], "simulations": sims}))
    result = CliRunner().invoke(
        bench_cli(["tau2", "airline", "changebench"]),
        ["import", "tau2-results", str(path), "--plugin", "airline", "--plugin", "changebench", "--db", str(tmp_path / "a.db")],
    )
    assert result.exit_code == 0, result.output
    assert "our reward equals theirs for 1 of 1" in result.output


@pytest.mark.parametrize("key", ["task_id", "trial", "seed", "duration", "reward_info", "messages", "termination_reason"])
def test_hostile_simulation_fields_are_clean_errors_or_imports(exported: Path, tmp_path: Path, key: str) -> None:
    for n, value in enumerate([2**70, -1, "x", [], {"a": 1}, None, True]):
        document = json.loads(exported.read_text())
        document["simulations"] = document["simulations"][:2]
        document["simulations"][1][key] = value
        code, output, _db = import_file(document, tmp_path, name=f"h{n}")
        assert code in (0, 1) and "Traceback" not in output, (key, value, output)
        if code == 1 or "skipped" in output:
            assert f"h{n}.json: simulation " in output and "@ $.simulations[1]" in output, (key, value, output)


TELECOM = SHARED / "tau2" / "telecom"
TELECOM_TASK = "[mobile_data_issue]user_abroad_roaming_enabled_off[PERSONA:None]"


@pytest.fixture
def telecom_file(tmp_path: Path) -> dict:
    """bench's export of a telecom run, its embedded tasks as tau2 writes them: without bench's own fields."""
    if not (TELECOM / "tasks_small.json").is_file():
        pytest.skip(f"tau2's telecom data is not under {TELECOM} (../shared/reference)")
    db, out = tmp_path / "telecom.db", tmp_path / "telecom.json"
    invoke(
        "run",
        "--plugin",
        "telecom",
        "--data-dir",
        str(TELECOM),
        "--task-id",
        TELECOM_TASK,
        "--run-id",
        "tel",
        "--no-baseline",
        "--db",
        str(db),
        "--format",
        "none",
    )
    invoke("export", "tau2-results", "tel", "--db", str(db), "-o", str(out))
    document = json.loads(out.read_text())
    for task in document["tasks"]:
        assert task.pop("attributes")  # telecom's intent, persona and fault count: labels bench derives from the task
        task.pop("extensions", None)
    return document


def import_telecom(document: dict, tmp_path: Path) -> str:
    path = tmp_path / "theirs.json"
    path.write_text(json.dumps(document))
    result = CliRunner().invoke(
        cli, ["import", "tau2-results", str(path), "--plugin", "telecom", "--data-dir", str(TELECOM), "--db", str(tmp_path / "import.db")]
    )
    assert result.exit_code == 0, result.output
    return result.output


def test_a_telecom_file_without_benchs_labels_raises_no_task_warning(telecom_file: dict, tmp_path: Path) -> None:
    output = import_telecom(telecom_file, tmp_path)
    assert "our reward equals theirs for 1 of 1" in output
    assert "differ between the file" not in output, output


def test_a_real_difference_in_a_telecom_task_is_named_with_its_fields(telecom_file: dict, tmp_path: Path) -> None:
    [task] = telecom_file["tasks"]
    task["description"] = {"purpose": "changed by the test"}
    output = import_telecom(telecom_file, tmp_path)
    assert (
        f"warning: 1 task(s) differ between the file and domain 'telecom' in description (graded with the embedded "
        f"version; --tasks current for the other): {TELECOM_TASK}" in output
    ), output
