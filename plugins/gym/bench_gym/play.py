"""bench play (placeholder while the driver is built)."""

from __future__ import annotations

import click


@click.command(name="play")
def play_command() -> None:
    """Play one side of a conversation in the terminal."""
