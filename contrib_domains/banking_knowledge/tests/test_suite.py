"""Our packaged suite: it loads offline, every gold replay runs, and the gold hashes equal what tau2's own tools compute on it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench_banking_knowledge import BankingKnowledgeDomain

from bench_kernel import DomainData, DomainOptions, replay_gold

SUITE_HASHES = Path(__file__).parent / "data" / "suite_hashes.json"


@pytest.fixture(scope="module")
def suite() -> DomainData:
    """Our packaged suite, variant bm25 (the default)."""
    return BankingKnowledgeDomain().load(DomainOptions())


def test_suite_loads_with_documents_tasks_and_both_sides(suite: DomainData) -> None:
    assert 12 <= len(suite.tasks) <= 20
    assert suite.retrieval == "bm25" and suite.shared_user_state and not suite.task_problems
    bases = {basis for task in suite.tasks for basis in task.evaluation_criteria.reward_basis}  # type: ignore[union-attr]
    assert bases == {"DB", "ACTION"}
    names = {a.name for task in suite.tasks for a in task.gold_actions()}
    assert {
        "call_discoverable_agent_tool",
        "give_discoverable_user_tool",
        "call_discoverable_user_tool",
        "log_verification",
        "transfer_to_human_agents",
    } <= names


def test_every_gold_replay_runs_and_hashes_as_tau2s_tools_do(suite: DomainData) -> None:
    pinned: dict[str, Any] = json.loads(SUITE_HASHES.read_text())["gold_db_hash"]
    errors, differ = {}, []
    for task in suite.tasks:
        gold = replay_gold(suite, task, with_reference=True)
        if gold.action_errors:
            errors[task.id] = gold.action_errors
        if gold.reference_hash != pinned[task.id]:
            differ.append(task.id)
    assert not errors
    assert not differ


def test_every_required_document_exists(suite: DomainData) -> None:
    documents = {p.stem for p in (Path(suite.source) / "documents").glob("*.json")}
    assert 30 <= len(documents) <= 60
    for task in suite.tasks:
        assert set(task.required_documents or []) <= documents, task.id


def test_a_malformed_task_file_is_named_with_the_json_path(tmp_path: Path) -> None:
    import shutil

    from bench_banking_knowledge.domain import find_data_dir

    from bench_kernel import BenchError

    data = tmp_path / "data"
    shutil.copytree(find_data_dir(DomainOptions()), data)
    broken = sorted((data / "tasks").glob("task_*.json"))[2]
    task = json.loads(broken.read_text())
    task["evaluation_criteria"]["actions"] = 5
    broken.write_text(json.dumps(task))
    with pytest.raises(BenchError, match=rf"{broken.name}: expected a list, got an integer 5 @ \$\.evaluation_criteria\.actions"):
        BankingKnowledgeDomain().load(DomainOptions(data_dir=data))
