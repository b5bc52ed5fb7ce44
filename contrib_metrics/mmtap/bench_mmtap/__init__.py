"""bench-mmtap: MM-tau-p²'s modality metrics and the mm-tap composite, decided deterministically."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Metric, hookimpl

from .metric import MmTap

__all__ = ["MmTap", "register_metrics"]


@hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """The mmtap metric."""
    register(MmTap())
