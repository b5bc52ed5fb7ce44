"""`bench retail ...` commands."""

from __future__ import annotations

from pathlib import Path

import click


@click.group(name="retail")
def retail_group() -> None:
    """The retail domain's own commands."""


@retail_group.command(name="generate")
@click.option("--seed", type=int, default=None, help="Generator seed (default: the seed of the shipped suite).")
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    required=True,
    help="Directory to write db.json, tasks.json, split_tasks.json and policy.md into.",
)
def generate_command(seed: int | None, out_dir: Path) -> None:
    """Generate our own retail suite (database, tasks, splits, policy) from a seed."""
    from .generate import DEFAULT_SEED, write_suite

    written = write_suite(DEFAULT_SEED if seed is None else seed, out_dir)
    click.echo(f"wrote {len(written['tasks'])} tasks to {out_dir}")
