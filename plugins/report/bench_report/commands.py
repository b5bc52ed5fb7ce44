"""`bench compare`: the command body parses options and calls the library (imported when it runs)."""

from __future__ import annotations

import click

from bench_kernel import db_option, format_option


@click.command(name="compare")
@click.argument("run_a")
@click.argument("run_b")
@db_option
@click.option("--db-b", "db_b", type=click.Path(dir_okay=False), help="Results database of RUN_B (default: --db).")
@format_option("table", "markdown", "json")
def compare_command(run_a: str, run_b: str, db_path: str, db_b: str | None, fmt: str) -> None:
    """Compare two runs of one suite: per-task differences, flips, mean reward and pass^k with paired bootstrap CIs."""
    from bench_kernel import open_store_for_reading, require_db, run_registry

    from .compare import compare_stored, render_comparison

    stores = []
    try:
        for path in (db_path, db_b or db_path):
            require_db(path)
            stores.append(open_store_for_reading(path))
        run = stores[0].run(run_a)  # an unknown run is one clean error
        assert run is not None
        comparison = compare_stored(stores[0], run_a, stores[-1], run_b, run_registry(run)[0])
        click.echo(render_comparison(comparison, fmt), nl=False)
    finally:
        for store in stores:
            store.close()
