"""bench-view: `bench view` serves a results database read-only in Datasette with our own pages.

The run page shows the report with every figure linking to the conversations behind it; the conversation
page shows the transcript with tool calls, events, reward checks, metrics and model calls; canned queries
and facets answer the common questions; /-/bench/compare puts two runs side by side.
"""

from __future__ import annotations

from pathlib import Path

import click

import bench_kernel
from bench_kernel import ConfigError, db_option


@click.command(name="view")
@click.argument("run_id", required=False)
@db_option
@click.option("--port", type=click.IntRange(1, 65535), default=8001, show_default=True, help="Port to listen on.")
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to bind (127.0.0.1: this machine only; the database is served to anyone who can reach it).",
)
def view_command(run_id: str | None, db_path: str, port: int, host: str) -> None:
    """Browse the results database in Datasette (read-only): run pages, conversations, canned queries, comparisons."""
    from bench_view import server
    from bench_view.pages import run_url
    from bench_view.readonly import open_read_only

    path = Path(db_path)
    server.prepare(path)
    if run_id:
        store = open_read_only(path)
        try:
            store.run(run_id)  # an unknown run is one clean error, before serving
        finally:
            store.close()
    start = run_url(run_id) if run_id else "/-/bench"
    click.echo(f"serving {path} read-only at http://{host}:{port}{start} (Ctrl-C stops)", err=True)
    server.serve(path, port, host)


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench view`."""
    if "view" in cli.commands:
        raise ConfigError("the bench CLI already has a 'view' command")
    cli.add_command(view_command)
