"""A plugin's tests on the kernel's practice domain (`--plugin practice`): whole runs, what they stored, their report.

def test_my_agent(practice_run):                       # the pytest fixture: one results file per test
    played = practice_run("mine", agent="mine")         # `bench run --plugin practice --plugin mine --agent mine`
    assert {r["task_id"]: r["reward"] for r in played.conversations()}["which_items"] == 1.0
    played.report()                                     # `bench report RUN --format json`, as a dict
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
from click.testing import CliRunner

from bench_kernel.run.runner import RunConfig, RunSummary, run
from bench_kernel.store.store import Store
from bench_kernel.tasks.domain import DomainData, DomainOptions
from bench_kernel.testing.commands import bench_cli

PRACTICE = "practice"


@attrs.frozen
class PracticeRun:
    """One finished run of a plugin on the practice domain: its results file, summary, conversations and report."""

    plugin: str
    db: Path
    summary: RunSummary

    @property
    def run_id(self) -> str:
        """The run's id."""
        return self.summary.run_id

    def conversations(self, arm: str | None = "agent") -> list[dict[str, Any]]:
        """The stored conversations (task_id, trial, termination_reason, reward, error, ...); arm None: baseline too."""
        store = Store(self.db)
        try:
            return [row for row in store.conversations(self.run_id) if arm is None or row["arm"] == arm]
        finally:
            store.close()

    def query(self, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
        """Rows of any query on the results file (messages, metric_values, conversation_events, ...)."""
        store = Store(self.db)
        try:
            return list(store.db.query(sql, params or []))
        finally:
            store.close()

    def report(self, *options: str) -> dict[str, Any]:
        """`bench report RUN --format json [options]` with this plugin loaded, as a dict."""
        result = CliRunner().invoke(bench_cli([PRACTICE, self.plugin]), ["report", self.run_id, "--db", str(self.db), "--format", "json", *options])
        assert result.exit_code == 0, result.output
        return dict(json.loads(result.stdout))


def play_practice(plugin: str, db: Path, **config: Any) -> PracticeRun:
    """Run the plugin on the practice domain into db: RunConfig's fields as keywords (agent=..., channel=..., mode=...).

    Without a baseline unless asked (`baseline=True`); the split `base` (three tasks, no judge needed) unless
    `split="judged"` or `task_ids` say otherwise.
    """
    settings = {"baseline": False, **config}
    summary = run(RunConfig(domain=PRACTICE, plugins=[PRACTICE, plugin], **settings), db)
    return PracticeRun(plugin=plugin, db=db, summary=summary)


def practice_data(split: str | None = None) -> DomainData:
    """The practice domain loaded (its tasks by split: `base`, the default, or `judged`)."""
    from bench_kernel.builtin.practice import PracticeDomain

    return PracticeDomain().load(DomainOptions(split=split))
