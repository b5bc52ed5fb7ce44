"""tau2's own data through our plugin: tasks, gold replays, DB hashes and policies equal tau2's (pinned by us from tau2's code)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from bench_banking_knowledge.domain import load_from

from bench_kernel import ConfigError, DomainData, DomainOptions, replay_gold
from bench_kernel.testing import bench_cli

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


EXACT_POLICIES = (
    "no_knowledge",
    "full_kb",
    "bm25",
    "bm25_grep",
    "bm25_reranker",
    "bm25_reranker_grep",
    "grep_only",
    "openai_embeddings",
    "openai_embeddings_grep",
    "openai_embeddings_reranker",
    "openai_embeddings_reranker_grep",
    "qwen_embeddings",
    "qwen_embeddings_grep",
    "qwen_embeddings_reranker",
    "qwen_embeddings_reranker_grep",
    "terminal_use",
    "terminal_use_write",
)
"""Every variant but alltools and alltools-qwen, whose sentence naming the dense search's model is ours."""


@pytest.mark.parametrize("variant", EXACT_POLICIES)
def test_policies_equal_tau2s(reference_dir: Path, pinned: dict[str, Any], variant: str) -> None:
    try:
        data = load_from(reference_dir, DomainOptions(retrieval=variant))
    except ConfigError as exc:  # the shell variants refuse to load without a sandbox
        pytest.skip(str(exc))
    assert data.retrieval == variant
    assert hashlib.sha256(data.policy.encode()).hexdigest() == pinned["policy_sha256"][variant]


@pytest.mark.parametrize("task_id", ["task_001", "task_046", "task_102"])
def test_golden_retrieval_policies_equal_tau2s(reference_dir: Path, pinned: dict[str, Any], task_id: str) -> None:
    data = load_from(reference_dir, DomainOptions(retrieval="golden_retrieval"))
    assert data.task_policy is not None
    text = data.task_policy(data.task(task_id))
    assert hashlib.sha256(text.encode()).hexdigest() == pinned["policy_sha256"][f"golden_retrieval:{task_id}"]


def _run(*args: str) -> dict[str, Any]:
    from click.testing import CliRunner

    result = CliRunner().invoke(
        bench_cli(["banking_knowledge"]), ["run", "--plugin", "banking_knowledge", *args, "--format", "json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.output[result.output.index("{") :]))


@pytest.mark.parametrize("agent", ["oracle", "do-nothing"])
def test_the_oracle_passes_every_task_and_doing_nothing_none(reference_dir: Path, tmp_path: Path, agent: str) -> None:
    ids = [f"--task-id={p.stem}" for p in sorted((reference_dir / "tasks").glob("task_*.json")) if p.stem != "task_102"]
    report = _run(
        "--data-dir", str(reference_dir), "--retrieval", "no_knowledge", "--agent", agent, "--db", str(tmp_path / "run.db"), *ids
    )  # task_102 adds an NL assertion: it needs a judge
    assert report["average_reward"]["value"] == (1.0 if agent == "oracle" else 0.0)
    assert report["average_reward"]["n"] == 96
