"""The `bench` command line, driven in-process with click's CliRunner against the toy domain."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from click.testing import CliRunner, Result
from plugin_factory import needs_report
from toy_domain import TASKS, ToyDomain, _instructions

from bench_kernel import GOLD_FAILURES_EVENT, hookimpl
from bench_kernel.cli import cli
from bench_kernel.errors import ResumeConflictError, TaskFileError
from bench_kernel.store.store import Store

MISSING_COUNTER_TASKS = [
    {
        "id": f"missing-{n}",
        "user_scenario": {"instructions": _instructions("Add one to counter zzz.")},
        "evaluation_criteria": {"actions": [{"action_id": "1", "name": "increment", "arguments": {"name": "zzz"}}], "reward_basis": ["DB"]},
    }
    for n in (1, 2)
]
# The oracle switches the lamp on, and the assertion wants it off: a task the oracle fails, so reports are not all 1.0.
# Broken by design (its assertion fails on the gold state): runs that include it pass --allow-broken-tasks.
LAMP_OFF_TASK = {
    "id": "lamp-off",
    "user_scenario": {"instructions": _instructions("My lamp is off.")},
    "evaluation_criteria": {
        "actions": [{"action_id": "1", "requestor": "user", "name": "switch_lamp", "arguments": {"on": True}}],
        "env_assertions": [{"env_type": "user", "func_name": "lamp_is", "arguments": {"on": False}}],
        "reward_basis": ["ENV_ASSERTION"],
    },
}


class Misspelt:
    """A plugin with a misspelt hook, to show how `bench plugins` reports a failed plugin."""

    @hookimpl
    def register_domain(self, register: Callable[..., None]) -> None:
        """Never called."""


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """Run `bench ARGS` in-process."""
    return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=True)


def assert_clean_error(result: Result, *fragments: str) -> str:
    """A non-zero exit with exactly one `Error:` line holding every fragment, and no traceback."""
    assert result.exit_code != 0, result.output
    assert isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and result.stderr.strip() == errors[0], result.stderr
    for fragment in fragments:
        assert fragment in errors[0]
    return errors[0]


# --------------------------------------------------------------------------- plugins


def test_plugins_lists_non_builtin_plugins(use_plugins: Callable[..., None]) -> None:
    result = invoke("plugins")

    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["toy  - -  register_domains"]


def test_plugins_all_includes_the_builtins(use_plugins: Callable[..., None]) -> None:
    result = invoke("plugins", "--all")

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("bench_kernel.builtin.participants  bench-kernel ")
    assert lines[0].endswith("register_agents, register_user_simulators")
    assert lines[1].startswith("bench_kernel.builtin.evaluation  bench-kernel ")
    assert lines[2].startswith("bench_kernel.builtin.channels  bench-kernel ")
    assert lines[3].startswith("bench_kernel.builtin.executors  bench-kernel ") and lines[3].endswith("register_executors")
    assert lines[4] == "toy  - -  register_domains"


def test_plugins_json(use_plugins: Callable[..., None]) -> None:
    result = invoke("plugins", "--all", "--format", "json")

    assert result.exit_code == 0, result.output
    listed = {p["name"]: p for p in json.loads(result.stdout)}
    builtin = listed["bench_kernel.builtin.participants"]
    assert builtin["builtin"] is True and builtin["error"] is None
    assert builtin["components"] == {"agent": ["do-nothing", "oracle"], "user simulator": ["scripted"]}
    assert listed["toy"] == {
        "name": "toy",
        "distribution": None,
        "version": None,
        "builtin": False,
        "error": None,
        "hooks": ["register_domains"],
        "components": {"domain": ["toy"]},
    }


def test_plugins_reports_a_failed_plugin_and_exits_zero(use_plugins: Callable[..., None]) -> None:
    use_plugins(extra=[("misspelt", Misspelt())])

    table = invoke("plugins")
    as_json = invoke("plugins", "--format", "json")

    assert table.exit_code == 0 and as_json.exit_code == 0
    [line] = [line for line in table.stdout.splitlines() if line.startswith("misspelt ")]
    assert "FAILED:" in line and "Misspelt" in line and "register_domain (did you mean 'register_domains'?)" in line
    [failed] = [p for p in json.loads(as_json.stdout) if p["error"]]
    assert failed["name"] == "misspelt" and failed["hooks"] == []


# --------------------------------------------------------------------------- tasks and check


def test_tasks_lists_the_domain_tasks(use_plugins: Callable[..., None]) -> None:
    table = invoke("tasks")
    as_json = invoke("tasks", "--format", "json")

    assert table.exit_code == 0 and as_json.exit_code == 0, table.output + as_json.output
    assert table.stdout.splitlines()[0] == "3 tasks in domain toy (memory), all valid"
    rows = json.loads(as_json.stdout)
    assert [r["task_id"] for r in rows] == ["inc-a", "lamp", "read-b"]  # in reading order (task_id_key)
    assert rows[1]["user_actions"] == 1 and rows[2]["reward_basis"] == ["DB", "COMMUNICATE"]


def test_check_passes_and_exits_zero(use_plugins: Callable[..., None]) -> None:
    result = invoke("check")

    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[0] == "toy: 3 tasks, gold replay ok for 3, failing 0"
    assert "FAIL" not in result.stdout


def test_check_prints_one_line_per_failing_task_and_exits_one(use_plugins: Callable[..., None]) -> None:
    use_plugins(tasks=TASKS + MISSING_COUNTER_TASKS)

    result = invoke("check")

    assert result.exit_code == 1, result.output
    assert result.stdout.splitlines()[0] == "toy: 5 tasks, gold replay ok for 3, failing 2"
    fails = [line.strip() for line in result.stdout.splitlines() if line.strip().startswith("FAIL")]
    assert fails == ["FAIL missing-1: 1 increment: Error: Counter zzz not found", "FAIL missing-2: 1 increment: Error: Counter zzz not found"]


def test_check_json_prints_one_record_per_task(use_plugins: Callable[..., None]) -> None:
    use_plugins(tasks=TASKS + MISSING_COUNTER_TASKS)

    result = invoke("check", "--format", "json")
    again = invoke("check", "--format", "json")

    assert result.exit_code == 1, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["task_id"] for r in records] == ["inc-a", "lamp", "missing-1", "missing-2", "read-b"]  # in reading order
    by_id = {r["task_id"]: r for r in records}
    for record in records:
        assert {"task_id", "gold_db_hash", "gold_action_errors"} <= set(record)
        assert re.fullmatch(r"[0-9a-f]{64}", record["gold_db_hash"])
    assert by_id["inc-a"]["gold_action_errors"] == [] and by_id["inc-a"]["ok"] is True
    assert by_id["missing-1"]["gold_action_errors"] == ["1 increment: Error: Counter zzz not found"]
    assert by_id["inc-a"]["gold_db_hash"] != by_id["read-b"]["gold_db_hash"]  # incrementing changes the state
    assert by_id["read-b"]["gold_db_hash"] == by_id["missing-1"]["gold_db_hash"]  # reading and failing do not
    assert again.stdout == result.stdout  # hashes are deterministic


def write_broken_task_file(tmp_path: Path) -> Path:
    """A task file with an unknown key in task 1 and an unknown reward type in task 2."""
    path = tmp_path / "broken.json"
    tasks = [TASKS[0], {**TASKS[1], "colour": "red"}, {**TASKS[2], "evaluation_criteria": {"reward_basis": ["NOPE"]}}]
    path.write_text(json.dumps(tasks))
    return path


@pytest.mark.parametrize("command", ["tasks", "check"])
def test_a_broken_task_file_is_one_clean_error_naming_file_and_json_paths(use_plugins: Callable[..., None], tmp_path: Path, command: str) -> None:
    path = write_broken_task_file(tmp_path)

    result = invoke(command, "--tasks-file", str(path))

    line = assert_clean_error(result, str(path), "@ $[1]", "colour", "@ $[2].evaluation_criteria.reward_basis[0]")
    assert "unknown reward component 'NOPE'" in line


def test_a_task_file_that_is_not_json_names_file_and_position(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text('[{"id": "x",]')

    assert_clean_error(invoke("tasks", "--tasks-file", str(path)), str(path), "not valid JSON", "line 1")


def test_bench_debug_reraises_the_task_file_error(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    path = write_broken_task_file(tmp_path)

    result = invoke("tasks", "--tasks-file", str(path), env={"BENCH_DEBUG": "1"})

    assert isinstance(result.exception, TaskFileError)
    assert result.exception.path == str(path)


# --------------------------------------------------------------------------- run, report, runs


def run_toy(db: Path, *args: str) -> Result:
    """`bench run` into db with the lamp-off task added, printing no report."""
    return invoke("run", "--db", str(db), "--format", "none", *args)


def only_run_id(db: Path) -> str:
    """The id of the single run stored in db, via `bench runs --format json`."""
    result = invoke("runs", "--db", str(db), "--format", "json")
    assert result.exit_code == 0, result.output
    [run] = json.loads(result.stdout)
    return run["id"]


@needs_report()
def test_run_then_report_agree(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    use_plugins(tasks=[*TASKS, LAMP_OFF_TASK], report=True)
    db = tmp_path / "runs.db"

    ran = invoke("run", "--db", str(db), "--trials", "2", "--format", "json", "--allow-broken-tasks")
    assert ran.exit_code == 0, ran.output
    run_id = only_run_id(db)
    shown = invoke("report", run_id, "--db", str(db), "--format", "json")
    assert shown.exit_code == 0, shown.output

    report = json.loads(shown.stdout)
    assert json.loads(ran.stdout) == report
    assert report["run_id"] == run_id and report["status"] == "complete"
    assert report["conversations"] == 8 and report["config"]["trials"] == 2
    assert report["average_reward"]["value"] == 0.75
    assert [(t["task_id"], t["successes"]) for t in report["tasks"]] == [("inc-a", 2), ("lamp", 2), ("lamp-off", 0), ("read-b", 2)]
    assert report["counts"] == "8 agent conversations scored (4 tasks x 2 trials), 0 infrastructure errors excluded, 4 baseline conversations"
    [broken] = report["gold_failures"]
    assert broken["task_id"] == "lamp-off" and "lamp_is" in broken["problems"][0] and not broken["scored_as_reference"]


def test_a_run_refuses_tasks_whose_gold_replay_fails_before_storing_anything(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    broken_action = {
        **TASKS[1],
        "id": "read-z",
        "evaluation_criteria": {"actions": [{"action_id": "z1", "name": "get_counter", "arguments": {"name": "zz"}}], "reward_basis": ["DB"]},
    }
    use_plugins(tasks=[*TASKS, LAMP_OFF_TASK, broken_action])
    db = tmp_path / "runs.db"

    refused = run_toy(db)

    message = assert_clean_error(
        refused,
        "2 of 5 selected tasks of domain 'toy' cannot be scored",
        "lamp-off (env assertion user:lamp_is({'on': False}) fails on the gold state",
        "read-z (gold action z1 get_counter: Error: Counter zz not found)",
        "--allow-broken-tasks",
    )
    assert "inc-a" not in message
    assert not db.exists() or sqlite3.connect(db).execute("select count(*) from runs").fetchone()[0] == 0
    assert run_toy(db, "--task-id", "inc-a", "--task-id", "lamp").exit_code == 0  # the sound tasks alone run

    allowed = invoke("run", "--db", str(db), "--allow-broken-tasks", "--run-id", "b", "--format", "none")
    assert allowed.exit_code == 0, allowed.output
    store = Store(db)
    stored = store.last_run_event("b", (GOLD_FAILURES_EVENT,))  # what the report lists (bench-report's tests)
    store.close()
    failures = {f["task_id"]: f for f in (stored or {})["tasks"]}
    assert set(failures) == {"lamp-off", "read-z"} and not failures["read-z"]["scored_as_reference"]
    assert failures["read-z"]["problems"] == ["gold action z1 get_counter: Error: Counter zz not found"]


def test_a_domain_whose_reference_scores_failing_gold_actions_runs_them_and_says_so(
    use_plugins: Callable[..., None], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken_action = {
        **TASKS[1],
        "id": "read-z",
        "evaluation_criteria": {"actions": [{"action_id": "z1", "name": "get_counter", "arguments": {"name": "zz"}}], "reward_basis": ["DB"]},
    }
    original = ToyDomain.load
    monkeypatch.setattr(ToyDomain, "load", lambda self, options: attrs.evolve(original(self, options), failed_gold_actions_scored=True))
    use_plugins(tasks=[*TASKS, broken_action])
    db = tmp_path / "runs.db"

    ran = invoke("run", "--db", str(db), "--run-id", "r", "--format", "none")

    assert ran.exit_code == 0, ran.output
    store = Store(db)
    [scored] = (store.last_run_event("r", (GOLD_FAILURES_EVENT,)) or {})["tasks"]  # what the report lists
    store.close()
    assert scored == {"task_id": "read-z", "problems": ["gold action z1 get_counter: Error: Counter zz not found"], "scored_as_reference": True}
    use_plugins(tasks=[*TASKS, broken_action, LAMP_OFF_TASK])  # a failing assertion is refused whatever the domain says
    assert_clean_error(invoke("run", "--db", str(db), "--run-id", "s"), "1 of 5 selected tasks", "lamp-off")


def test_runs_lists_the_run(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    assert run_toy(db, "--run-id", "first").exit_code == 0

    table = invoke("runs", "--db", str(db))
    as_json = invoke("runs", "--db", str(db), "--format", "json")

    assert table.exit_code == 0 and as_json.exit_code == 0
    assert table.stdout.startswith("first  complete  6 conversations  mean reward 1.000  ")
    [run] = json.loads(as_json.stdout)
    assert (run["id"], run["status"], run["conversations"], run["mean_reward"]) == ("first", "complete", 6, 1.0)


def test_rerunning_the_same_configuration_resumes(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    first = run_toy(db, "--task-id", "inc-a")
    second = run_toy(db)  # all tasks now: another configuration, so another derived run id
    third = run_toy(db, "--task-id", "inc-a")

    assert first.exit_code == second.exit_code == third.exit_code == 0
    assert ": 2 conversations to run, 0 already stored" in first.stderr
    assert ": 0 conversations to run, 2 already stored" in third.stderr
    assert len(json.loads(invoke("runs", "--db", str(db), "--format", "json").stdout)) == 2


def test_resuming_with_a_changed_configuration_is_a_clean_error(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    assert run_toy(db, "--run-id", "fixed", "--trials", "1").exit_code == 0

    result = run_toy(db, "--run-id", "fixed", "--trials", "2")

    assert_clean_error(result, "run 'fixed' exists with a different configuration", "changed: trials", "--run-id")


def test_bench_debug_reraises_the_resume_conflict(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    assert run_toy(db, "--run-id", "fixed", "--trials", "1").exit_code == 0

    result = invoke("run", "--db", str(db), "--format", "none", "--run-id", "fixed", "--trials", "2", env={"BENCH_DEBUG": "1"})

    assert isinstance(result.exception, ResumeConflictError)
    assert "changed: trials" in str(result.exception)


def test_report_without_a_database_is_a_clean_error(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    missing = tmp_path / "missing.db"

    assert_clean_error(invoke("report", "some-run", "--db", str(missing)), f"no results database at {missing}")
    assert_clean_error(invoke("runs", "--db", str(missing)), "no results database")
    assert not missing.exists()


def test_report_of_an_unknown_run_lists_recent_runs(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    assert run_toy(db, "--run-id", "known").exit_code == 0

    assert_clean_error(invoke("report", "unknown", "--db", str(db)), "no run 'unknown'", "recent: known")


@pytest.mark.parametrize(
    ("option", "kind", "known"), [("--agent", "agent", "do-nothing, oracle"), ("--user", "user simulator", "scripted"), ("--judge", "judge", "none")]
)
def test_run_with_an_unknown_component_lists_the_known_ones_and_stores_nothing(
    use_plugins: Callable[..., None], tmp_path: Path, option: str, kind: str, known: str
) -> None:
    db = tmp_path / "runs.db"
    assert run_toy(db, "--run-id", "good").exit_code == 0

    result = run_toy(db, option, "nope")

    assert_clean_error(result, f"no {kind} named 'nope' (registered: {known})")
    # A mistyped name must not leave a half-begun run behind.
    assert [r["id"] for r in json.loads(invoke("runs", "--db", str(db), "--format", "json").stdout)] == ["good"]


def test_run_exits_non_zero_with_the_count_when_conversations_end_in_infrastructure_errors(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    from seam_plugins import Registers
    from test_seams import UnreachableAgent

    use_plugins(extra=[("down", Registers(agents=[UnreachableAgent()]))])
    result = invoke("run", "--agent", "unreachable", "--no-baseline", "--db", str(tmp_path / "r.db"), "--format", "none")
    assert result.exit_code == 1 and "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert errors == [
        f"Error: {len(TASKS)} of {len(TASKS)} conversations ended in an infrastructure error (stored, "
        "excluded from every score; run the same command again to retry them)"
    ]
    store = Store(tmp_path / "r.db")
    assert [r["status"] for r in store.runs()] == ["failed"]
    store.close()


def test_plugin_commands_are_loaded_only_for_command_lines_that_may_name_one() -> None:
    from bench_kernel.cli import needs_plugin_commands

    assert not needs_plugin_commands(["run", "--plugin", "mock"])  # a leaf built-in: no plugin is imported for it
    assert not needs_plugin_commands(["report", "r1", "--format", "json"])
    assert needs_plugin_commands([])  # bench --help lists plugin commands
    assert needs_plugin_commands(["--help"])
    assert needs_plugin_commands(["import", "tau2"])  # a built-in group that plugins extend
    assert needs_plugin_commands(["some-plugin-command"])
    assert needs_plugin_commands(["run", "--ray-address", "auto"])  # an option a plugin adds to a leaf command
    assert needs_plugin_commands(["run", "--help"])  # its help lists the options plugins add
    assert needs_plugin_commands(["run", "-h"])
    assert not needs_plugin_commands(["run", "-p", "mock", "--snr", "-2"])  # a negative value is no option
    assert not needs_plugin_commands(["run", "--plugin=mock", "--", "--not-an-option"])
