"""bench-profiles: reading profile directories (`bench run --profile DIR`) and `bench profile show/copy`.

bench's own profile is the kernel's and needs nothing from here. This plugin registers the reader the kernel asks
for a profile directory (`register_profile_readers`): profile.toml, texts and tool schemas, each checked, with what a
partial directory lacks taken from bench's own profile (docs/profiles.md). Importing it imports none of that work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import click

import bench_kernel

if TYPE_CHECKING:
    from bench_kernel import ProfileReader


@bench_kernel.hookimpl
def register_profile_readers(register: Callable[[ProfileReader], None]) -> None:
    """The reader of profile directories, named like this plugin (the kernel asks the plugin `profiles` for it)."""
    from .reader import DirectoryReader

    register(DirectoryReader())


@bench_kernel.hookimpl
def register_commands(cli: click.Group) -> None:
    """`bench profile show` and `bench profile copy`."""
    from .commands import profile_group

    cli.add_command(profile_group)
