"""Shared fixtures: runs of the mock domain through the bridge, with the scripted world as the models."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_llm.testing import ScriptedModel, ScriptedModelPlugin

from bench_kernel import ModelConfig, RunConfig, Store, get_plugin_manager, run
from bench_kernel.testing import plan_change_world

sys.path.insert(0, str(Path(__file__).parent))

from bridge_mini_framework import MiniRunner


@attrs.define
class Outcome:
    """A finished run: its conversations, their messages, tool calls and ledger rows."""

    store: Store
    run_id: str
    summary: Any

    def conversation(self, task_id: str = "upgrade_by_email") -> dict[str, Any]:
        rows = [r for r in self.store.conversations(self.run_id) if r["task_id"] == task_id and r["arm"] == "agent"]
        assert len(rows) == 1, rows
        return rows[0]

    def messages(self, task_id: str = "upgrade_by_email") -> list[dict[str, Any]]:
        return [json.loads(m["message_json"]) for m in self.store.messages(f"{self.run_id}/agent/{task_id}/0")]

    def calls(self, role: str = "agent") -> list[dict[str, Any]]:
        sql = "select * from llm_calls where run_id = ? and role = ? order by rowid"
        return list(self.store.db.query(sql, [self.run_id, role]))

    def turns(self, task_id: str = "upgrade_by_email") -> list[list[tuple[str, str]]]:
        """The agent's tool-call turns: (id, name) of each call, one list per assistant message."""
        return [[(c["id"], c["name"]) for c in m["tool_calls"]] for m in self.messages(task_id) if m["role"] == "assistant" and m.get("tool_calls")]


@pytest.fixture
def mini_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hand-written framework's runner, registered for the test."""
    from bench_bridge import runners

    monkeypatch.setattr(runners, "RUNNERS", [*runners.RUNNERS, MiniRunner()])


@pytest.fixture
def run_bridge(tmp_path: Path, mini_runner: None) -> Iterator[Callable[..., Outcome]]:
    """Run upgrade_by_email with the `framework` agent, the llm-user, and the scripted world as both models (in process)."""
    stores: list[Store] = []

    def go(factory: str = "bridge_mini_framework:make", *, world: Any = None, options: dict[str, Any] | None = None, **config: Any) -> Outcome:
        script = (world or plan_change_world()).respond
        plugins = get_plugin_manager(
            ["mock", "llm", "bridge"], extra=[("scripted-model", ScriptedModelPlugin(ScriptedModel(scripts={"world": script})))]
        )
        assert plugins.failures() == []
        models = {role: ModelConfig(backend="scripted", model="world") for role in ("agent", "user")}
        config = {
            "domain": "mock",
            "plugins": ["mock", "llm", "bridge"],
            "baseline": False,
            "models": models,
            "agent": "framework",
            "user": "llm-user",
            "task_ids": ["upgrade_by_email"],
            "agent_options": {"factory": factory, **(options or {})},
            **config,
        }
        path = tmp_path / f"r{len(stores)}.db"
        summary = run(RunConfig(**config), path, plugins=plugins)
        stores.append(Store(path))
        return Outcome(stores[-1], summary.run_id, summary)

    yield go
    for store in stores:
        store.close()
