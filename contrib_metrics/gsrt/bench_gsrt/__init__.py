"""bench-gsrt: goal-shift recovery (AgentChangeBench's GSRT) for any domain, measured from the true shift turns."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Metric, hookimpl

from .metric import GoalShiftRecovery

__all__ = ["GoalShiftRecovery", "register_metrics"]


@hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """The gsrt metric (it asks for one shift per conversation when a run gives no shift plan)."""
    register(GoalShiftRecovery())
