"""The `bench services` command group."""

from __future__ import annotations

from pathlib import Path

import click


@click.group(name="services")
def services_group() -> None:
    """The services domain's own commands."""


@services_group.command(name="generate")
@click.option("--seed", type=int, default=None, help="Random seed (default: the seed of the shipped suite).")
@click.option("--medium", type=int, default=None, help="How many medium tasks (default: as shipped).")
@click.option("--complex", "complex_", type=int, default=None, help="How many complex tasks (default: as shipped).")
@click.option(
    "--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True, help="Directory to write db.json and tasks.json into."
)
def generate_command(seed: int | None, medium: int | None, complex_: int | None, out_dir: Path) -> None:
    """Generate our own multi-goal suite (database and gold-verified tasks) from a seed."""
    from .generate import DEFAULT_COUNTS, DEFAULT_SEED, write_suite

    counts = {
        "medium": DEFAULT_COUNTS["medium"] if medium is None else medium,
        "complex": DEFAULT_COUNTS["complex"] if complex_ is None else complex_,
    }
    tasks = write_suite(out_dir, DEFAULT_SEED if seed is None else seed, counts)
    click.echo(f"wrote {len(tasks)} tasks to {out_dir}")
