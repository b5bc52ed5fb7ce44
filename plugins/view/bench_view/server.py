"""Build the Datasette app over a results database (immutable, our plugin registered in-process) and serve it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from bench_kernel import ConfigError, Store

TEMPLATES = Path(__file__).parent / "templates"
HOST = "127.0.0.1"


def register_plugin() -> None:
    """Register our Datasette plugin in Datasette's plugin manager (once per process)."""
    from datasette.plugins import pm

    from bench_view import datasette_plugin

    if not pm.is_registered(datasette_plugin):
        pm.register(datasette_plugin, name="bench_view.datasette_plugin")


def prepare(db_path: Path) -> None:
    """Apply pending migrations and checkpoint the WAL once, so that the immutable connections see every row."""
    if not db_path.is_file():
        raise ConfigError(f"no results database at {db_path} (run `bench run` first, or pass --db)")
    Store(db_path).close()
    wal = db_path.with_name(db_path.name + "-wal")
    if wal.exists() and wal.stat().st_size:
        # Another connection (a run in progress) keeps the WAL: what it holds is not shown.
        print(f"warning: {db_path} is being written (its WAL is in use): the viewer shows it as of now", file=sys.stderr)


def build_app(db_path: Path) -> Any:
    """The Datasette instance serving db_path read-only with our pages, canned queries and facets."""
    from datasette.app import Datasette

    from bench_view.datasette_plugin import NAME
    from bench_view.queries import metadata

    register_plugin()
    database = db_path.stem
    meta = metadata(database)
    meta["plugins"] = {NAME: {"database": database, "path": str(db_path.resolve())}}
    return Datasette(
        immutables=[str(db_path)],
        metadata=meta,
        template_dir=str(TEMPLATES),
        settings={"default_page_size": 50, "sql_time_limit_ms": 5000, "allow_download": False},
    )


def serve(db_path: Path, port: int, host: str = HOST) -> None:
    """Serve until interrupted."""
    import uvicorn

    datasette = build_app(db_path)
    uvicorn.run(datasette.app(), host=host, port=port, log_level="warning", lifespan="on")
