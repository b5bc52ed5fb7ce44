"""The built-in identity channel, registered like any plugin's channel."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel.conversation.channels import Channel, IdentityChannel
from bench_kernel.markers import hookimpl


@hookimpl
def register_channels(register: Callable[[Channel], None]) -> None:
    """The identity channel (the default)."""
    register(IdentityChannel())
