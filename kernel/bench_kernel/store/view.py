"""RunView: the read-only window on one stored run that report sections and metric summaries read."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import attrs
from sqlite_utils import Database

from bench_kernel.errors import ConfigError
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
        """Stored conversation rows with their task `attributes` (agent arm by default; None for both arms).

        Infrastructure errors are left out unless `scored_only=False`: no figure counts them.
        """
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


def open_read_only(path: Path | str) -> Store:
    """A results database opened immutable (no migration, no lock, no write possible): for viewers and their threads.

    Immutable readers skip the WAL, so open the database once normally first (`Store(path).close()` applies
    pending migrations and checkpoints the WAL) and serve it while no run writes to it.
    """
    resolved = Path(path).resolve()
    if not resolved.is_file():
        raise ConfigError(f"no results database at {path} (run `bench run` first, or pass --db)")
    connection = sqlite3.connect(f"file:{quote(str(resolved))}?immutable=1", uri=True, check_same_thread=False)
    return Store.over(connection, resolved)  # Store() would migrate, i.e. write
