"""The kill test: a `bench run` killed with SIGKILL mid-run resumes to exactly the results of an uninterrupted run."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from plugin_factory import BENCH, KERNEL_TESTS, PluginPackage, bench_env, needs_installed, run_bench

TRIALS = 40
STEPS = 100  # gold actions of each long task: the oracle makes this many tool calls per conversation
KILL_AFTER = 20  # stored conversations
TASKS = 7  # the toy domain's three tasks, three long ones and one the oracle fails
EXPECTED_UNITS = TASKS * TRIALS + TASKS  # agent trials plus one do-nothing baseline conversation per task

# The toy domain lives in the test directory, not in an installed distribution: this module, installed
# by hand with a `toy` entry point, registers it with long tasks added so the run lasts long enough to kill.
TOY_E2E = PluginPackage(
    dist="bench-toy-e2e",
    module="bench_toy_e2e",
    entry="toy",
    source=f"""\
    import bench_kernel
    from toy_domain import TASKS, ToyDomain, _instructions

    LONG = [
        {{"id": f"long-{{n}}", "user_scenario": {{"instructions": _instructions("Add {STEPS} to counter a.")}},
          "evaluation_criteria": {{"actions": [{{"action_id": str(i), "name": "increment", "arguments": {{"name": "a"}}}}
                                              for i in range({STEPS})],
                                  "reward_basis": ["DB"]}}}}
        for n in range(3)
    ]
    # The oracle switches the lamp on but the assertion wants it off: rewards are not all 1.0.
    LAMP_OFF = {{
        "id": "lamp-off", "user_scenario": {{"instructions": _instructions("My lamp is off.")}},
        "evaluation_criteria": {{"actions": [{{"action_id": "1", "requestor": "user", "name": "switch_lamp",
                                             "arguments": {{"on": True}}}}],
                                "env_assertions": [{{"env_type": "user", "func_name": "lamp_is", "arguments": {{"on": False}}}}],
                                "reward_basis": ["ENV_ASSERTION"]}},
    }}


    @bench_kernel.hookimpl
    def register_domains(register):
        register(ToyDomain(tasks=TASKS + LONG + [LAMP_OFF]))
    """,
)


def run_args(db: Path, mode: str = "default") -> list[str]:
    """The one run configuration of this test, into db."""
    return [
        "run",
        "--plugin",
        "toy",
        "--db",
        str(db),
        "--trials",
        str(TRIALS),
        "--concurrency",
        "4",
        "--mode",
        mode,
        "--max-steps",
        str(4 * STEPS),
        "--format",
        "none",
        "--allow-broken-tasks",
    ]  # LAMP_OFF is broken by design


def stored_conversations(db: Path) -> int | None:
    """Conversations stored so far, read through a read-only connection (None before the table exists)."""
    if not db.exists():
        return None
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("select count(*) from conversations").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.OperationalError:  # not created yet, or mid-migration
        return None


def kill_when_stored(process: subprocess.Popen[str], db: Path, at_least: int, limit_s: float = 120) -> int:
    """Poll the store until at_least conversations are in it, then SIGKILL the run; return the count seen."""
    deadline = time.monotonic() + limit_s  # a safety net against a hung run, not a timing assertion
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"the run exited (code {process.returncode}) before {at_least} conversations were stored: "
                "raise TRIALS or STEPS so there is a run to kill"
            )
        count = stored_conversations(db)
        if count is not None and count >= at_least:
            process.send_signal(signal.SIGKILL)
            process.wait()
            return count
        time.sleep(0.005)
    pytest.fail(f"no {at_least} conversations stored within {limit_s}s")


def comparable(report: Any) -> Any:
    """A report without its run id, status and timing fields."""
    if isinstance(report, dict):
        return {k: comparable(v) for k, v in report.items() if k not in ("run_id", "status") and not k.endswith(("_ms", "_utc", "_s"))}
    if isinstance(report, list):
        return [comparable(v) for v in report]
    return report


def report_json(run_id: str, db: Path, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    """`bench report RUN --format json`."""
    done = run_bench(["report", run_id, "--db", str(db), "--format", "json"], env, cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("mode", ["default", pytest.param("full-duplex", marks=needs_installed("duplex"))])
def test_a_killed_run_resumes_to_the_same_results(tmp_path: Path, mode: str) -> None:
    site = tmp_path / "site"
    TOY_E2E.install_by_hand(site)
    env = bench_env([site, KERNEL_TESTS])
    killed_db, clean_db = tmp_path / "killed.db", tmp_path / "clean.db"

    with (tmp_path / "killed.out").open("w") as out, (tmp_path / "killed.err").open("w") as err:
        process = subprocess.Popen([str(BENCH), *run_args(killed_db, mode)], env=env, cwd=tmp_path, stdout=out, stderr=err, text=True)
        try:
            kill_when_stored(process, killed_db, KILL_AFTER)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == -signal.SIGKILL, "the run ended by itself instead of being killed"

    with sqlite3.connect(killed_db) as conn:
        at_kill = conn.execute("select count(*) from conversations").fetchone()[0]
        [(run_id, status)] = conn.execute("select id, status from runs").fetchall()
        # Every stored conversation is whole: one transaction each, so no half-written one survives a kill.
        partial = conn.execute("""select count(*) from conversations c
                                  where c.num_messages != (select count(*) from messages m where m.conversation_id = c.id)
                                     or not exists (select 1 from metric_values v where v.conversation_id = c.id)""").fetchone()[0]
    assert KILL_AFTER <= at_kill < EXPECTED_UNITS
    assert status == "running" and partial == 0

    resumed = run_bench(run_args(killed_db, mode), env, tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert f"run {run_id}: {EXPECTED_UNITS - at_kill} conversations to run, {at_kill} already stored" in resumed.stderr

    with sqlite3.connect(killed_db) as conn:
        units = conn.execute(
            "select arm, task_id, trial, count(*) from conversations where run_id = ? group by arm, task_id, trial", [run_id]
        ).fetchall()
        total, infra = conn.execute("select count(*), sum(termination_reason = 'infrastructure_error') from conversations").fetchone()
        [(final_status,)] = conn.execute("select status from runs").fetchall()
    assert total == len(units) == EXPECTED_UNITS
    assert all(count == 1 for *_, count in units)
    tasks = {task for _, task, _, _ in units}
    expected = {("agent", t, n) for t in tasks for n in range(TRIALS)} | {("baseline", t, 0) for t in tasks}
    assert len(tasks) == TASKS and {(a, t, n) for a, t, n, _ in units} == expected
    assert infra == 0 and final_status == "complete"

    clean = run_bench(run_args(clean_db, mode), env, tmp_path)
    assert clean.returncode == 0, clean.stderr
    assert f"run {run_id}: {EXPECTED_UNITS} conversations to run, 0 already stored" in clean.stderr

    resumed_report = report_json(run_id, killed_db, env, tmp_path)
    clean_report = report_json(run_id, clean_db, env, tmp_path)
    assert resumed_report["conversations"] == TASKS * TRIALS and resumed_report["infrastructure_errors"] == 0
    if "average_reward" in resumed_report:  # bench-report's full report (the kernel alone prints its summary)
        assert resumed_report["average_reward"]["value"] == pytest.approx((TASKS - 1) / TASKS, abs=1e-6)
        assert resumed_report["terminations"] == {"user_stop": TASKS * TRIALS}
        assert 0 < resumed_report["average_reward"]["low"] < resumed_report["average_reward"]["high"] <= 1
    else:
        assert resumed_report["mean_reward"] == pytest.approx((TASKS - 1) / TASKS, abs=1e-6)
    assert comparable(resumed_report) == comparable(clean_report)
