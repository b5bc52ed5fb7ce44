"""The `bench banking` command group."""

from __future__ import annotations

from pathlib import Path

import click


@click.group(name="banking")
def banking_group() -> None:
    """The banking domain's own commands."""


@banking_group.command(name="generate")
@click.option("--seed", type=int, default=None, help="Random seed (default: the seed of the shipped suite).")
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True, help="Directory to write db.json and tasks.json into."
)
def generate_command(seed: int | None, out_dir: Path) -> None:
    """Generate our own banking suite (database and verified tasks) from a seed."""
    from .generate import DEFAULT_SEED, write_suite

    click.echo(f"wrote {len(write_suite(out_dir, DEFAULT_SEED if seed is None else seed))} tasks to {out_dir}")
