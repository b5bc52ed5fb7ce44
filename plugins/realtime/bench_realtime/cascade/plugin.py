"""The cascade's registrations (the package's `__init__` re-exports these hook implementations)."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Metric, hookimpl


@hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """`realtime_asr_wer`: the word error rate of what a realtime agent's recogniser heard."""
    from .wer import RealtimeAsrWer

    register(RealtimeAsrWer())
