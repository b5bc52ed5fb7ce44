"""The immutable connections the pages read through: every row of a migrated database, and no write."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from bench_view.readonly import open_read_only

from bench_kernel import ConfigError, Store


def test_open_read_only_reads_and_refuses_writes(tmp_path: Path) -> None:
    db = tmp_path / "runs.db"
    written = Store(db)
    written.begin_run("r", {"agent": "oracle"}, "hash", [], {}, 0)
    written.close()
    store = open_read_only(db)
    try:
        assert store.run("r") is not None and store.conversations("r") == []
        with pytest.raises(sqlite3.OperationalError, match="readonly"):
            store.db.execute("delete from runs")
    finally:
        store.close()
    with pytest.raises(ConfigError, match="no results database"):
        open_read_only(tmp_path / "missing.db")
