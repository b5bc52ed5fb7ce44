"""`bench audit` on real suites: the issue's done-when on tau2's airline, and a sane audit of every other domain
(tau2's retail, telecom and banking_knowledge, bench's banking and services, and a domain `bench new domain` writes).

The tau2 data is read from ../shared/reference/tau2 (or $BENCH_REFERENCE/tau2); tests that need it skip without it.
Telecom runs its `small` split by default; BENCH_AUDIT_FULL=1 audits its 2,285 tasks (about half a minute).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from bench_trust.audit.auditing import audit_tasks
from click.testing import CliRunner

import bench_kernel
from bench_kernel import RunConfig, collect, get_plugin_manager, installed_entry_points, is_success, load_domain, open_store
from bench_kernel.testing import bench_cli

REPO = Path(__file__).resolve().parents[3]
REFERENCE = Path(os.environ.get("BENCH_REFERENCE") or REPO.parent / "shared" / "reference") / "tau2"


def reference(domain: str) -> Path:
    """tau2's data directory of a domain, or a skip saying where it was looked for."""
    path = REFERENCE / domain
    if not path.is_dir():
        pytest.skip(f"tau2's {domain} data is not at {path} (set BENCH_REFERENCE to the folder holding tau2/)")
    return path


def needs_plugin(name: str) -> None:
    if name not in installed_entry_points():
        pytest.skip(f"the {name} domain plugin is not installed (bash scripts/dev.sh setup)")


def audit_json(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(bench_cli(["trust"]), ["audit", *args, "--db", str(tmp_path / "audit.db"), "--format", "json"])
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout))


def test_airline_done_when(tmp_path: Path) -> None:
    needs_plugin("airline")
    data_dir = reference("airline")
    document = audit_json(tmp_path, "--plugin", "airline", "--data-dir", str(data_dir))
    audits = {a["id"]: a for a in document["tasks"]}
    assert len(audits) == 50 and all(a["ceiling"] == 1.0 for a in audits.values())
    # actions_unscored: exactly the tasks whose criteria hold actions while the basis lacks ACTION (read from the file).
    raw = json.loads((data_dir / "tasks.json").read_text())
    unscored = {t["id"] for t in raw if (t["evaluation_criteria"].get("actions") and "ACTION" not in t["evaluation_criteria"]["reward_basis"])}
    assert {i for i, a in audits.items() if "actions_unscored" in a["flags"]} == unscored
    assert len(unscored) == 43
    # The do-nothing floor passes exactly the tasks a real run's baseline arm passes.
    summary = bench_kernel.run(RunConfig(plugins=["airline"], data_dir=str(data_dir), agent="talk-only"), tmp_path / "run.db")
    store = open_store(tmp_path / "run.db")
    try:
        baseline = {r["task_id"] for r in store.conversations(summary.run_id) if r["arm"] == "baseline" and is_success(r["reward"])}
    finally:
        store.close()
    assert {i for i, a in audits.items() if is_success(a["floors"]["do-nothing"])} == baseline
    assert len(baseline) == 23


@pytest.mark.parametrize(
    ("plugin", "tau2", "extra"),
    [
        ("retail", True, []),
        ("telecom", True, [] if os.environ.get("BENCH_AUDIT_FULL") == "1" else ["--split", "small"]),
        ("banking_knowledge", True, []),
        ("banking", False, []),
        ("services", False, []),
    ],
)
def test_every_domain_audits(tmp_path: Path, plugin: str, tau2: bool, extra: list[str]) -> None:
    needs_plugin(plugin)
    args = ["--plugin", plugin, *(["--data-dir", str(reference(plugin))] if tau2 else []), *extra]
    document = audit_json(tmp_path, *args)
    tasks = document["tasks"]
    assert document["domain"] == plugin and document["summary"]["tasks"] == len(tasks) > 0
    judged = [a for a in tasks if "notes" not in a]
    assert judged and all(a["ceiling"] is not None for a in judged)
    assert document["summary"]["any_flag"] == sum(bool(a["flags"]) for a in tasks)


def test_a_domain_made_by_bench_new_audits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "audited_shop"
    target = tmp_path / name
    made = CliRunner().invoke(bench_cli([]), ["new", "domain", name, str(target)])
    assert made.exit_code == 0, made.output
    monkeypatch.syspath_prepend(str(target))
    module = importlib.import_module(f"bench_{name}")
    try:
        registry = collect(get_plugin_manager(["trust"], extra=[(name, module)]))
        data = load_domain(registry, RunConfig(domain=name))
        audits = asyncio.run(audit_tasks(registry, data, data.tasks))
    finally:
        for loaded in [m for m in sys.modules if m == f"bench_{name}" or m.startswith(f"bench_{name}.")]:
            del sys.modules[loaded]
    assert len(audits) == len(data.tasks) > 0
    assert all(a["ceiling"] == 1.0 for a in audits)
