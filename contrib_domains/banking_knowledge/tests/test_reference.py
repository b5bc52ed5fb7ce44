"""tau2's own data through our plugin: tasks, gold replays, DB hashes and policies equal tau2's (pinned by us from tau2's code)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from bench_banking_knowledge.domain import load_from

from bench_kernel import DomainData, DomainOptions, replay_gold

A_HANDFUL = ("task_001", "task_015", "task_017", "task_034", "task_102")


def test_every_task_loads_and_what_tau2_ignores_is_reported(reference_data: DomainData) -> None:
    assert len(reference_data.tasks) == 97
    assert [t.id for t in reference_data.tasks] == sorted(t.id for t in reference_data.tasks)
    assert {"task_009", "task_011", "task_013", "task_030", "task_042"}.isdisjoint(t.id for t in reference_data.tasks)
    problems = "\n".join(reference_data.task_problems)
    assert "task_058: initial_state.initialization_data has fields tau2 ignores" in problems
    assert "task_091: user_scenario has fields tau2 ignores (so does bench): persoca" in problems


@pytest.mark.parametrize("task_id", A_HANDFUL)
def test_a_handful_of_gold_hashes_equal_tau2s(reference_data: DomainData, pinned: dict[str, Any], task_id: str) -> None:
    gold = replay_gold(reference_data, reference_data.task(task_id), with_reference=True)
    assert gold.reference_hash == pinned["gold_db_hash"][task_id]
    assert gold.reference_user_hash == gold.reference_hash  # one database for both sides


def test_every_gold_replay_runs_and_hashes_as_tau2s(reference_data: DomainData, pinned: dict[str, Any]) -> None:
    errors, differ = {}, []
    for task in reference_data.tasks:
        gold = replay_gold(reference_data, task, with_reference=True)
        if gold.action_errors:
            errors[task.id] = gold.action_errors
        if gold.reference_hash != pinned["gold_db_hash"][task.id]:
            differ.append(task.id)
    assert not errors
    assert not differ, f"{len(differ)} of 97 gold hashes differ from tau2's: {differ}"


@pytest.mark.parametrize("variant", ["no_knowledge", "full_kb"])
def test_policies_equal_tau2s(reference_dir: Path, pinned: dict[str, Any], variant: str) -> None:
    data = load_from(reference_dir, DomainOptions(retrieval=variant))
    assert hashlib.sha256(data.policy.encode()).hexdigest() == pinned["policy_sha256"][variant]


@pytest.mark.parametrize("task_id", ["task_001", "task_046", "task_102"])
def test_golden_retrieval_policies_equal_tau2s(reference_dir: Path, pinned: dict[str, Any], task_id: str) -> None:
    data = load_from(reference_dir, DomainOptions(retrieval="golden_retrieval"))
    assert data.task_policy is not None
    text = data.task_policy(data.task(task_id))
    assert hashlib.sha256(text.encode()).hexdigest() == pinned["policy_sha256"][f"golden_retrieval:{task_id}"]
