"""The `bench` command line as `bench` itself builds it, for tests of plugins that add commands."""

from __future__ import annotations

from collections.abc import Sequence

import click

from bench_kernel.cli import cli
from bench_kernel.plugins import apply_commands, get_plugin_manager


def bench_cli(selected: Sequence[str] | None = None) -> click.Group:
    """The root click group with the selected installed plugins' commands added (all installed when None)."""
    apply_commands(get_plugin_manager(list(selected) if selected is not None else None), cli)
    return cli
