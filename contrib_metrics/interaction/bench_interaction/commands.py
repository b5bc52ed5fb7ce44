"""`bench interaction-plots`: a full-duplex run's charts as PNG files."""

from __future__ import annotations

from pathlib import Path

import click

from bench_kernel import ConfigError, RunView, Store, db_option, require_db


@click.command(name="interaction-plots")
@click.argument("run_id")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=True, help="Directory for the PNG files.")
@db_option
def interaction_plots(run_id: str, out_dir: str, db_path: str) -> None:
    """Write a full-duplex run's latency histogram and one timeline strip per conversation as PNGs."""
    from .plots import write_plots

    require_db(db_path)
    store = Store(db_path)
    try:
        run = store.run(run_id, missing_ok=True)
        if run is None:
            raise ConfigError(f"no run {run_id!r} in {db_path}")
        paths = write_plots(RunView(store, run), Path(out_dir))
    finally:
        store.close()
    click.echo(f"wrote {len(paths)} plots to {out_dir}", err=True)
