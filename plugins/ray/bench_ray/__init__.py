"""bench-ray: `bench run --executor ray [--ray-address ADDR]` plays conversations as Ray actors; the run's process stores."""

from __future__ import annotations

from collections.abc import Callable

import click

import bench_kernel
from bench_ray.executor import RayExecutor

__all__ = ["RayExecutor"]


@bench_kernel.hookimpl
def register_executors(register: Callable[[bench_kernel.Executor], None]) -> None:
    """The ray executor."""
    register(RayExecutor())


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """--ray-address on `bench run` (the executor option `address`)."""
    command = cli.commands.get("run")
    if command is not None:
        bench_kernel.executor_option(
            command,
            "--ray-address",
            "address",
            envvar="BENCH_RAY_ADDRESS",
            help_text="Ray cluster to play conversations on with --executor ray (e.g. ray://head:10001 or auto; default: start a local one).",
        )
