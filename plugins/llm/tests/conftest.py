"""Shared fixtures: the mock domain, a scripted model backend, and a helper that runs real conversations."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_llm.testing import ScriptedModel, ScriptedModelPlugin
from bench_mock import MockDomain

from bench_kernel import (
    ChatRequest,
    ChatResponse,
    DomainData,
    DomainOptions,
    ModelConfig,
    RunConfig,
    Store,
    get_plugin_manager,
    run,
)


@pytest.fixture(scope="session")
def data() -> DomainData:
    """The packaged mock domain."""
    return MockDomain(name="mock").load(DomainOptions())


@attrs.define
class Outcome:
    """A finished run: its conversations (by arm and task), their messages and what the models were asked."""

    store: Store
    run_id: str
    model: ScriptedModel

    def conversation(self, task_id: str, arm: str = "agent") -> dict[str, Any]:
        """The stored row of one conversation (trial 0)."""
        rows = [r for r in self.store.conversations(self.run_id) if r["task_id"] == task_id and r["arm"] == arm]
        assert len(rows) == 1, rows
        return rows[0]

    def messages(self, task_id: str, arm: str = "agent") -> list[dict[str, Any]]:
        """A conversation's stored messages, each as its full JSON."""
        return [json.loads(m["message_json"]) for m in self.store.messages(f"{self.run_id}/{arm}/{task_id}/0")]

    def tool_calls(self, task_id: str) -> list[dict[str, Any]]:
        """A conversation's stored tool calls, in order."""
        sql = "select * from tool_calls where conversation_id = ? order by message_idx, call_id"
        return list(self.store.db.query(sql, [f"{self.run_id}/agent/{task_id}/0"]))

    def requests(self, model: str) -> list[ChatRequest]:
        """Every request the named scripted model received."""
        return self.model.requests.get(model, [])

    def component(self, task_id: str, name: str) -> dict[str, Any]:
        """One reward component of a conversation."""
        info = json.loads(self.conversation(task_id)["reward_info_json"])
        return next(c for c in info["components"] if c["component"] == name)


@pytest.fixture
def run_bench(tmp_path: Path) -> Iterator[Callable[..., Outcome]]:
    """Run the mock domain with bench-llm loaded and scripted models: run_bench(scripts, task_ids=[...], agent=..., ...)."""
    stores: list[Store] = []

    def go(scripts: dict[str, Callable[[ChatRequest], ChatResponse]], *, extra: Sequence[tuple[str, object]] = (), **config: Any) -> Outcome:
        model = ScriptedModel(scripts=scripts)
        plugins = get_plugin_manager(["mock", "llm", "judging"], extra=[("scripted-model", ScriptedModelPlugin(model)), *extra])
        assert plugins.failures() == []
        models = {role: ModelConfig(backend="scripted", model=role) for role in ("agent", "user", "judge") if role in scripts}
        path = tmp_path / f"r{len(stores)}.db"
        config = {"domain": "mock", "plugins": ["mock", "llm"], "baseline": False, "models": models, **config}
        summary = run(RunConfig(**config), path, plugins=plugins)
        # A run with infrastructure errors never says complete (they are re-run on resume).
        assert summary.status == (
            "complete" if not summary.infrastructure_errors else "failed" if summary.infrastructure_errors == summary.planned else "incomplete"
        )
        stores.append(Store(path))
        return Outcome(stores[-1], summary.run_id, model)

    yield go
    for store in stores:
        store.close()
