"""Against tau2's own retail data (read from ../shared/reference, never copied): hashes and failing gold actions."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from bench_retail.records import reference_hash

from bench_kernel import build_environment, replay_gold

# The tau2 tasks whose gold actions raise (tau2 swallows the errors; the gold state is what is left).
TASKS_WITH_FAILING_GOLD_ACTIONS = ["2", "3", "4", "35", "37", "38", "39", "46", "47", "54", "55", "64", "67", "68", "105"]


@pytest.fixture(scope="module")
def sample(reference_dir: Path) -> dict[str, Any]:
    """The retail part of the reference hash sample."""
    path = reference_dir.parent / "expected_hashes_sample.json"
    if not path.is_file():
        pytest.skip(f"reference hash sample not found at {path}")
    return json.loads(path.read_text())["domains"]["retail"]


def test_loading_tau2s_db_gives_its_initial_hash(tau2_data, sample) -> None:
    assert reference_hash(tau2_data.agent_state) == sample["initial_agent_db_hash"]
    assert sample["initial_user_db_hash"] is None


def test_sample_tasks_start_from_the_pristine_db(tau2_data, sample) -> None:
    for task_id, expected in sample["tasks"].items():
        env = build_environment(tau2_data, tau2_data.task(task_id))
        assert reference_hash(env.agent_tools.state) == expected["start_agent"], task_id


def test_gold_replay_hashes_and_errors_match_the_sample(tau2_data, sample) -> None:
    assert sample["tasks"]
    for task_id, expected in sample["tasks"].items():
        gold = replay_gold(tau2_data, tau2_data.task(task_id), with_reference=True)
        assert gold.reference_hash == expected["gold_agent"] == expected["live_agent"], task_id
        # ours read "<id> <tool>: Error: <message>", tau2's "<id>: <message>"
        ours = [f"{e.split(' ', 1)[0]}: {e.split(': Error: ', 1)[1]}" for e in gold.action_errors]
        assert ours == expected["gold_action_errors"], task_id


def test_every_tau2_task_replays_and_leaves_shared_records_untouched(tau2_data) -> None:
    assert len(tau2_data.tasks) == 114
    failing = [t.id for t in tau2_data.tasks if replay_gold(tau2_data, t).action_errors]
    assert failing == TASKS_WITH_FAILING_GOLD_ACTIONS
    assert tau2_data.agent_state.verify_untouched() == []


def test_bench_check_lists_the_failing_tasks_by_id(reference_dir: Path) -> None:
    bench = Path(sys.executable).with_name("bench")
    done = subprocess.run([str(bench), "check", "--plugin", "retail", "--data-dir", str(reference_dir)], capture_output=True, text=True, check=False)
    assert done.stdout.splitlines()[0] == "retail: 114 tasks, gold replay ok for 99, failing 15"
    listed = {line.split()[1].rstrip(":") for line in done.stdout.splitlines() if line.strip().startswith("FAIL")}
    assert listed == set(TASKS_WITH_FAILING_GOLD_ACTIONS)
