"""Third-party results files: each shape the seeds' own tools write is imported, what bench cannot use is named and skipped.

Every test starts from a results file of our own (a mock run exported in tau2's format) and gives it one shape
found in real tau2 or AgentChangeBench files; none copies their data.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from bench_tau2.results import ImportedVerdicts
from click.testing import CliRunner

from bench_kernel import ConfigError, JudgeRequest, Store, Task, UserScenario
from bench_kernel.testing import bench_cli

cli = bench_cli(["tau2"])


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("source")
    runner = CliRunner()
    assert runner.invoke(cli, ["run", "--plugin", "mock", "--run-id", "source", "--db", str(folder / "run.db"), "--format", "none"]).exit_code == 0
    out = folder / "results.json"
    assert runner.invoke(cli, ["export", "tau2-results", "source", "--db", str(folder / "run.db"), "-o", str(out)]).exit_code == 0
    return json.loads(out.read_text())


@pytest.fixture
def document(exported: dict[str, Any]) -> dict[str, Any]:
    return json.loads(json.dumps(exported))


def run_import(target: Path, tmp_path: Path, *plugins: str) -> tuple[int, str, Path]:
    db = tmp_path / "i.db"
    options = [a for p in (plugins or ("mock",)) for a in ("--plugin", p)]
    result = CliRunner().invoke(cli, ["import", "tau2-results", str(target), *options, "--db", str(db)])
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output, db


def import_document(document: dict[str, Any], tmp_path: Path, *plugins: str, name: str = "f.json") -> tuple[int, str, Path]:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return run_import(path, tmp_path, *plugins)


def stored(db: Path) -> list[dict[str, Any]]:
    store = Store(db)
    try:
        return [dict(r) for r in store.conversations(store.runs()[0]["id"])]
    finally:
        store.close()


def sim_of(document: dict[str, Any], task_id: str) -> tuple[int, dict[str, Any]]:
    return next((i, s) for i, s in enumerate(document["simulations"]) if s["task_id"] == task_id)


# --------------------------------------------------------------------------- AgentChangeBench's null reward_basis


def test_a_null_reward_basis_is_the_empty_basis_agentchangebench_grades_with(document: dict[str, Any], tmp_path: Path) -> None:
    # AgentChangeBench declares reward_basis optional, default null (deprecated); its evaluator multiplies the
    # components of `reward_basis or []`, so nothing gates the reward: 1.0 unless the conversation ended prematurely.
    for task in document["tasks"]:
        task["evaluation_criteria"]["reward_basis"] = None
    _i, cut = sim_of(document, "upgrade_by_email")
    cut["messages"] = [m for m in cut["messages"] if not any(c["name"] == "change_plan" for c in m.get("tool_calls") or [])]
    _j, early = sim_of(document, "billing_dispute_ticket")
    early["termination_reason"] = "max_steps"
    code, output, db = import_document(document, tmp_path)
    assert code == 0, output
    assert "note: 12 task(s) have reward_basis null (AgentChangeBench: deprecated)" in output
    rewards = {r["task_id"]: r["reward"] for r in stored(db)}
    assert rewards["upgrade_by_email"] == 1.0  # its missing write gates nothing
    assert rewards["billing_dispute_ticket"] == 0.0
    assert set(rewards.values()) == {0.0, 1.0} and len(rewards) == 12


# --------------------------------------------------------------------------- where the domain comes from


def test_the_domain_comes_from_info_domain(document: dict[str, Any], tmp_path: Path) -> None:
    document["info"] = {"domain": "mock", "num_trials": 1}  # a leaderboard trajectory: no environment_info
    code, output, _db = import_document(document, tmp_path, "mock", "airline")
    assert code == 0 and "(mock); our reward equals theirs for 12 of 12" in output, output


def test_a_file_naming_no_domain_takes_the_only_domain_plugin_loaded(document: dict[str, Any], tmp_path: Path) -> None:
    del document["info"]["environment_info"]
    code, output, _db = import_document(document, tmp_path)
    assert code == 0 and "(mock); our reward equals theirs for 12 of 12" in output, output


def test_a_file_naming_no_domain_with_two_domain_plugins_loaded_is_one_clean_error(document: dict[str, Any], tmp_path: Path) -> None:
    del document["info"]["environment_info"]
    code, output, _db = import_document(document, tmp_path, "mock", "airline")
    assert code == 1 and "f.json: the file names no domain" in output and "(loaded: airline, mock)" in output, output


def test_a_leaderboard_submission_names_the_domain_of_each_trajectory_file(document: dict[str, Any], tmp_path: Path) -> None:
    submission = tmp_path / "my-model_acme_2025-01-15"
    (submission / "trajectories").mkdir(parents=True)
    (submission / "submission.json").write_text(
        json.dumps(
            {
                "model_name": "m",
                "trajectory_files": {"mock": "my-model_mock_default_4trials.json", "airline": "my-model_airline_default_4trials.json"},
            }
        )
    )
    del document["info"]["environment_info"]
    path = submission / "trajectories" / "my-model_mock_default_4trials.json"
    path.write_text(json.dumps(document))
    code, output, _db = run_import(path, tmp_path, "mock", "airline")
    assert code == 0 and "(mock); our reward equals theirs for 12 of 12" in output, output


# --------------------------------------------------------------------------- tau2's directory format


def directory_format(document: dict[str, Any], folder: Path) -> Path:
    """tau2's "dir" format: metadata and a simulation index in results.json, one file per simulation beside it."""
    (folder / "simulations").mkdir(parents=True)
    sims = document.pop("simulations")
    document["simulation_index"] = [{"id": s["id"], "task_id": s["task_id"], "trial": s["trial"], "reward": s["reward_info"]["reward"]} for s in sims]
    document["format_version"] = 2
    for sim in sims:
        (folder / "simulations" / f"{sim['id']}.json").write_text(json.dumps(sim))
    (folder / "results.json").write_text(json.dumps(document))
    return folder


def test_the_directory_format_imports_from_the_folder_or_its_results_json(document: dict[str, Any], tmp_path: Path) -> None:
    folder = directory_format(document, tmp_path / "run")
    for n, target in enumerate((folder, folder / "results.json")):
        (tmp_path / f"db{n}").mkdir()
        code, output, _db = run_import(target, tmp_path / f"db{n}")
        assert code == 0 and "imported 12 conversations" in output and "equals theirs for 12 of 12" in output, output


def test_a_simulation_the_index_lists_without_its_file_is_named(document: dict[str, Any], tmp_path: Path) -> None:
    folder = directory_format(document, tmp_path / "run")
    gone = sorted((folder / "simulations").glob("*.json"))[0]
    gone.unlink()
    code, output, _db = run_import(folder, tmp_path)
    assert code == 0 and "equals theirs for 11 of 11; 1 skipped" in output, output
    assert f"warning: skipped {folder / 'results.json'}: simulation '{gone.stem}'" in output
    assert "@ $.simulation_index[" in output and f"no file {gone}" in output


# --------------------------------------------------------------------------- simulations


def test_a_full_duplex_simulation_with_malformed_ticks_is_named_and_skipped(document: dict[str, Any], tmp_path: Path) -> None:
    """Well-formed full-duplex simulations are imported (test_duplex.py); a malformed tick is named by its JSON path."""
    index, sim = sim_of(document, "upgrade_by_email")
    sim.update(messages=None, mode="full_duplex", ticks=[{"tick_id": 0, "timestamp": "t", "agent_chunk": "hello"}])
    code, output, _db = import_document(document, tmp_path)
    assert code == 0 and "equals theirs for 11 of 11; 1 skipped" in output, output
    assert (
        f"warning: skipped {tmp_path / 'f.json'}: simulation '{sim['id']}' (task 'upgrade_by_email') @ $.simulations[{index}]: "
        f"agent_chunk must be an object or null @ $.simulations[{index}].ticks[0].agent_chunk" in output
    )


def test_simulations_without_trial_numbers_take_their_tasks_next_free_trials(document: dict[str, Any], tmp_path: Path) -> None:
    copy = json.loads(json.dumps(sim_of(document, "upgrade_by_email")[1]))
    document["simulations"].append(copy)
    for sim in document["simulations"]:
        if sim["task_id"] == "upgrade_by_email":
            sim["trial"] = None  # tau2's SimulationRun.trial is optional
    code, output, db = import_document(document, tmp_path)
    assert code == 0 and "equals theirs for 13 of 13" in output, output
    assert "note: 2 simulation(s) have no trial number: each took its task's next free trial" in output
    assert sorted(r["trial"] for r in stored(db) if r["task_id"] == "upgrade_by_email") == [0, 1]


def test_a_simulation_repeating_a_task_and_trial_is_named_not_dropped(document: dict[str, Any], tmp_path: Path) -> None:
    first, sim = sim_of(document, "upgrade_by_email")
    document["simulations"].append({**sim, "id": "again"})
    code, output, _db = import_document(document, tmp_path)
    assert code == 0 and "equals theirs for 12 of 12; 1 skipped" in output, output
    assert (
        f"simulation 'again' (task 'upgrade_by_email') @ $.simulations[12]: repeats task 'upgrade_by_email' trial 0 of "
        f"{tmp_path / 'f.json'} @ $.simulations[{first}]" in output
    )


def test_a_simulation_without_a_reward_is_graded_not_compared(document: dict[str, Any], tmp_path: Path) -> None:
    document["simulations"][0]["reward_info"] = None
    document["simulations"][1]["reward_info"] = {"reward": None, "db_check": None, "reward_basis": None, "info": None}
    code, output, db = import_document(document, tmp_path)
    assert code == 0 and "equals theirs for 10 of 10" in output and "2 with no reward in the file: graded, not compared" in output
    assert "differs" not in output and len(stored(db)) == 12


def test_termination_reasons_of_newer_tau2_versions_are_premature_ends_and_named(document: dict[str, Any], tmp_path: Path) -> None:
    for sim, reason in zip(document["simulations"][:3], ["context_window_exceeded", "unexpected_error", "timeout"], strict=True):
        sim["termination_reason"] = reason
        sim["reward_info"]["reward"] = 0.0
    code, output, db = import_document(document, tmp_path)
    assert code == 0 and "equals theirs for 12 of 12" in output, output
    assert "note: termination reasons bench does not have (context_window_exceeded: 1, unexpected_error: 1): stored as agent_error" in output
    assert sorted(r["termination_reason"] for r in stored(db))[:3] == ["agent_error", "agent_error", "timeout"]


def test_when_every_simulation_is_skipped_the_import_fails_cleanly(document: dict[str, Any], tmp_path: Path) -> None:
    for sim in document["simulations"]:
        sim["messages"].append({"role": "robot"})
    code, output, _db = import_document(document, tmp_path)
    assert code == 1 and "none of its simulations could be imported (12 skipped, named above)" in output, output
    assert output.count("warning: skipped") == 12


# --------------------------------------------------------------------------- tasks


def test_a_repeated_task_id_keeps_the_last_as_tau2_does(document: dict[str, Any], tmp_path: Path) -> None:
    index = next(i for i, t in enumerate(document["tasks"]) if t["id"] == "upgrade_by_email")
    older = json.loads(json.dumps(document["tasks"][index]))
    older["evaluation_criteria"] = None  # graded 1.0 were it used
    document["tasks"].insert(index, older)
    _i, sim = sim_of(document, "upgrade_by_email")
    sim["messages"] = [m for m in sim["messages"] if not any(c["name"] == "change_plan" for c in m.get("tool_calls") or [])]
    code, output, db = import_document(document, tmp_path)
    assert code == 0, output
    assert (
        f"note: task id repeated in the file, the last one used (as tau2 does): 'upgrade_by_email' @ $.tasks[{index}] and "
        f"$.tasks[{index + 1}]" in output
    )
    assert {r["task_id"]: r["reward"] for r in stored(db)}["upgrade_by_email"] == 0.0


def test_an_unreadable_embedded_task_costs_only_its_own_simulations(document: dict[str, Any], tmp_path: Path) -> None:
    index = next(i for i, t in enumerate(document["tasks"]) if t["id"] == "close_fixed_ticket")
    document["tasks"][index]["evaluation_criteria"]["actions"] = "not a list"
    _i, sim = sim_of(document, "close_fixed_ticket")
    code, output, _db = import_document(document, tmp_path, "mock", name="g.json")
    assert code == 0 and "equals theirs for 11 of 11; 1 skipped" in output, output
    assert f"simulation '{sim['id']}' (task 'close_fixed_ticket') @ $.simulations[" in output
    assert "its embedded task could not be read: " in output and f"@ $.tasks[{index}].evaluation_criteria.actions" in output


def test_instructions_given_as_a_plain_string_import(document: dict[str, Any], tmp_path: Path) -> None:
    for task in document["tasks"]:
        task["user_scenario"]["instructions"] = "You were charged twice; ask for a refund."
    code, output, _db = import_document(document, tmp_path)
    assert code == 0 and "equals theirs for 12 of 12" in output, output


def test_fields_of_other_tau2_versions_in_tasks_are_ignored_as_tau2_ignores_them(document: dict[str, Any], tmp_path: Path) -> None:
    task = document["tasks"][0]
    task.update(required_documents=["doc_1"], user_tools=None, something_new={"a": 1})
    task["initial_state"] = {
        "message_history": [
            {"role": "assistant", "content": "Hi", "is_audio": False, "turn_idx": 0, "generation_time_seconds": 0.4, "contains_speech": True}
        ]
    }
    code, output, _db = import_document(document, tmp_path)
    assert code == 0 and "imported 12 conversations" in output, output


# --------------------------------------------------------------------------- messages


def test_message_fields_of_other_versions_and_free_form_usage_import(document: dict[str, Any], tmp_path: Path) -> None:
    for sim in document["simulations"]:
        for n, message in enumerate(sim["messages"]):
            message.update(is_audio=False, meta=None, display_content=message.get("content"), turn_idx=n)
            if message["role"] in ("assistant", "user"):
                message.update(
                    usage={"prompt_tokens": 12, "completion_tokens": None, "completion_tokens_details": {"reasoning_tokens": 3}},
                    cost="n/a",
                    raw_data="text",
                    timestamp=1_700_000_000,
                )
    code, output, _db = import_document(document, tmp_path)
    assert code == 0 and "equals theirs for 12 of 12" in output, output


def test_grouped_tool_results_are_one_message_each(document: dict[str, Any], tmp_path: Path) -> None:
    # tau2's Message union includes MultiToolMessage: {"role": "tool", "tool_messages": [...]}.
    _i, sim = sim_of(document, "upgrade_by_email")
    tools = [j for j, m in enumerate(sim["messages"]) if m["role"] == "tool"]
    grouped = [sim["messages"][j] for j in tools]
    sim["messages"] = [m for j, m in enumerate(sim["messages"]) if j not in tools[1:]]
    sim["messages"][tools[0]] = {"role": "tool", "tool_messages": grouped}
    code, output, db = import_document(document, tmp_path)
    assert code == 0 and "equals theirs for 12 of 12" in output, output
    store = Store(db)
    try:
        row = next(r for r in stored(db) if r["task_id"] == "upgrade_by_email")
        contents = [json.loads(m["message_json"]).get("content") for m in store.messages(row["id"])]
    finally:
        store.close()
    assert [g["content"] for g in grouped] == [c for c in contents if c in {g["content"] for g in grouped}]


# --------------------------------------------------------------------------- NL verdicts


def judge(verdicts: list[tuple[str, bool, str]], assertions: list[str]) -> list[tuple[bool, str]]:
    sim = {"reward_info": {"nl_assertions": [{"nl_assertion": a, "met": m, "justification": j} for a, m, j in verdicts]}}
    found = ImportedVerdicts.of(sim)
    assert found is not None
    task = Task(id="t", user_scenario=UserScenario(instructions="x"))
    checks = asyncio.run(found.judge(JudgeRequest(task=task, messages=[], assertions=assertions, seed=0)))
    return [(c.met, c.detail) for c in checks]


def test_verdicts_whose_text_the_judge_tidied_are_paired_by_their_words() -> None:
    # The judge echoes each assertion; the file stores the echo, spaces and a stray quote tidied away.
    assertions = [
        "Reservation X1 is updated to economy. ",
        'Agent charges $5 on card_1", and $4 on card_2.',
        "Agent does not cancel  any other reservation.",
    ]
    verdicts = [
        ("Agent does not cancel any other reservation.", False, "no"),
        ("Reservation X1 is updated to economy.", True, "yes"),
        ("Agent charges $5 on card_1, and $4 on card_2.", True, "ok"),
    ]
    assert [met for met, _ in judge(verdicts, assertions)] == [True, True, False]
    assert all("(same words)" in detail for _, detail in judge(verdicts, assertions))


def test_verdicts_left_over_pair_in_order_when_as_many_remain() -> None:
    got = judge([("A holds.", True, "a"), ("The agent was polite", False, "b")], ["A holds.", "Agent is courteous."])
    assert got[0] == (True, "imported verdict: a")
    assert got[1][0] is False and "in order: the file's text is 'The agent was polite'" in got[1][1]


def test_an_assertion_without_a_verdict_is_still_an_error() -> None:
    with pytest.raises(ConfigError, match=r"no verdict for: 'B holds\.'"):
        judge([("A holds.", True, "a")], ["A holds.", "B holds."])
