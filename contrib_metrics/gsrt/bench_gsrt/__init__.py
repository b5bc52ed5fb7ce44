"""bench-gsrt: goal-shift recovery (AgentChangeBench's GSRT) for any domain, measured from the true shift turns."""

from __future__ import annotations

from collections.abc import Callable

from bench_changebench import ShiftTransform

from bench_kernel import Metric, TaskTransform, hookimpl

from .metric import GoalShiftRecovery

__all__ = ["GoalShiftRecovery", "register_metrics", "register_task_transforms"]


@hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """The gsrt metric (it asks for one shift per conversation when a run gives no shift plan)."""
    register(GoalShiftRecovery())


@hookimpl
def register_task_transforms(register: Callable[[TaskTransform], None]) -> None:
    """bench-changebench's shift plans, which chain tasks when a run loading this plugin asks for no shifts."""
    register(ShiftTransform())  # bench-changebench registers the same one: the kernel keeps it once
