"""Parity with tau2-bench: hashes of the pristine and gold databases, generated tasks field for field, split ids."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bench_compose import verify
from click.testing import CliRunner

from bench_kernel import ConfigError, DomainData, Task, structure, unstructure
from bench_kernel.testing import cli


def test_pristine_databases_hash_as_tau2s(tau2_small: DomainData, expected_hashes: dict[str, Any]) -> None:
    sample = expected_hashes
    assert tau2_small.reference_hash is not None and tau2_small.reference_user_hash is not None
    assert tau2_small.reference_hash(tau2_small.agent_state) == sample["initial_agent_db_hash"]
    assert tau2_small.reference_user_hash(tau2_small.user_state) == sample["initial_user_db_hash"]


def test_the_twenty_small_tasks_regenerate_field_for_field(tau2_dir: Path, tau2_small: DomainData) -> None:
    reference = json.loads((tau2_dir / "tasks_small.json").read_text())
    generated = {t.id: {k: v for k, v in unstructure(t).items() if k != "attributes"} for t in tau2_small.tasks}  # ours only
    assert list(generated) == [r["id"] for r in reference]
    for raw in reference:
        expected = {k: v for k, v in unstructure(structure(raw, Task, source="tasks_small.json")).items() if k != "attributes"}
        assert generated[raw["id"]] == expected, raw["id"]


def test_every_split_selects_the_same_ids_in_the_same_order(tau2_dir: Path, loader: Callable[..., DomainData]) -> None:
    splits = json.loads((tau2_dir / "split_tasks.json").read_text())
    full = loader(tau2_dir, "full")
    assert len(full.tasks) == 2285
    assert [t.id for t in full.tasks] == splits["full"]
    for name in ("base", "train", "test", "small"):
        assert sorted(t.id for t in loader(tau2_dir, name).tasks) == sorted(splits[name]), name


def test_bench_check_prints_tau2s_gold_hashes(tau2_dir: Path, expected_hashes: dict[str, Any]) -> None:
    sample = expected_hashes["tasks"]
    result = CliRunner().invoke(cli, ["check", "--plugin", "telecom", "--data-dir", str(tau2_dir), "--split", "base", "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = {r["task_id"]: r for r in map(json.loads, result.output.splitlines())}
    assert len(rows) == 114 and all(r["ok"] and not r["gold_action_errors"] for r in rows.values())
    for task_id, hashes in sample.items():
        assert (rows[task_id]["gold_db_hash"], rows[task_id]["gold_user_db_hash"]) == (hashes["gold_agent"], hashes["gold_user"])


def test_every_composition_is_verified(tau2_dir: Path, loader: Callable[..., DomainData]) -> None:
    data = loader(tau2_dir, "composed")
    counts = {intent: sum(t.id.startswith(f"[{intent}]") for t in data.tasks) for intent in ("mobile_data_issue", "service_issue", "mms_issue")}
    assert counts == {"mobile_data_issue": 382, "service_issue": 47, "mms_issue": 2976}
    assert [p for task in data.tasks for p in verify(data, task)] == []
    unfixable = [t for t in data.tasks if "ACTION" in (t.evaluation_criteria.reward_basis if t.evaluation_criteria else [])]
    assert all([a.name for a in t.gold_actions()] == ["transfer_to_human_agents"] for t in unfixable)


def test_a_split_naming_unknown_ids_is_refused(tmp_path: Path, tau2_dir: Path, loader: Callable[..., DomainData]) -> None:
    for name in ("db.toml", "user_db.toml", "main_policy.md", "main_policy_solo.md", "tech_support_manual.md", "tasks_small.json"):
        (tmp_path / name).write_bytes((tau2_dir / name).read_bytes())
    (tmp_path / "split_tasks.json").write_text(json.dumps({"odd": ["[mms_issue]no_such_fault[PERSONA:None]"]}))
    with pytest.raises(ConfigError, match="names 1 task ids the telecom generator does not compose"):
        loader(tmp_path, "odd")
