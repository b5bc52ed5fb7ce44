"""RunView: the read-only window on one stored run that report sections and metric summaries read."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from typing import Any

import attrs
from sqlite_utils import Database

from bench_kernel.schema.messages import TerminationReason
from bench_kernel.store.store import RunRecord, Store

INFRA = TerminationReason.INFRASTRUCTURE_ERROR.value


@attrs.frozen
class RunView:
    """One stored run as report sections and `Metric.summarize` see it; the report refuses writes while they read."""

    store: Store
    run: RunRecord
    plugin: str = ""
    """The plugin whose section or summary is being built: a metric finds its own values with `values(name, plugin=view.plugin)`."""

    @property
    def config(self) -> dict[str, Any]:
        """The run's stored configuration."""
        return self.run.config

    def conversations(self, arm: str | None = "agent", *, scored_only: bool = True) -> list[dict[str, Any]]:
        """Stored conversation rows with their task `attributes` (agent arm by default, None for both; infra errors only if not scored_only)."""
        rows = [r for r in self.store.conversations(self.run.id) if arm is None or r["arm"] == arm]
        if scored_only:
            rows = [r for r in rows if r["termination_reason"] != INFRA]
        return [{**r, "attributes": json.loads(r["attributes_json"]) if r.get("attributes_json") else {}} for r in rows]

    def values(self, metric: str | None = None, *, plugin: str | None = None, arm: str | None = "agent") -> list[dict[str, Any]]:
        """Stored metric values of scored conversations (agent arm by default), optionally of one metric and/or plugin."""
        sql = (
            "select v.* from metric_values v join conversations c on c.id = v.conversation_id "
            "where v.run_id = ? and c.termination_reason != ? and c.superseded_by is null"
        )
        params: list[Any] = [self.run.id, INFRA]
        for column, wanted in (("c.arm", arm), ("v.metric", metric), ("v.plugin", plugin)):
            if wanted is not None:
                sql += f" and {column} = ?"
                params.append(wanted)
        return self.query(sql + " order by v.conversation_id, v.plugin, v.metric", params)

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Stored conversation events of the run, optionally of one kind."""
        sql = "select * from conversation_events where run_id = ?" + (" and kind = ?" if kind else "")
        return self.query(sql + " order by conversation_id, idx", [self.run.id, kind] if kind else [self.run.id])

    def messages(self, conversation_id: str) -> list[dict[str, Any]]:
        """One conversation's stored messages, in order."""
        return self.store.messages(conversation_id)

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of any read-only query (a plugin's own tables)."""
        return list(self.store.db.query(sql, list(params)))


@contextlib.contextmanager
def read_only(db: Database) -> Iterator[None]:
    """Refuse every write on db inside the block (SQLite's query_only), restoring the previous setting after."""
    previous = int(db.execute("PRAGMA query_only").fetchone()[0])
    db.execute("PRAGMA query_only = 1")
    try:
        yield
    finally:
        db.execute(f"PRAGMA query_only = {previous}")
