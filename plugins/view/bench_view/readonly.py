"""The immutable connections the pages read the results database through, one per request."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

from bench_kernel import ConfigError, Store


def open_read_only(path: Path | str) -> Store:
    """A results database opened immutable (no migration, no lock, no write possible): for the pages and their threads.

    Immutable readers skip the WAL, so open the database once normally first (`bench_view.server.prepare` applies pending migrations
    and checkpoints the WAL) and serve it while no run writes to it.
    """
    resolved = Path(path).resolve()
    if not resolved.is_file():
        raise ConfigError(f"no results database at {path} (run `bench run` first, or pass --db)")
    connection = sqlite3.connect(f"file:{quote(str(resolved))}?immutable=1", uri=True, check_same_thread=False)
    return Store.over(connection, resolved)  # Store() would migrate, i.e. write
