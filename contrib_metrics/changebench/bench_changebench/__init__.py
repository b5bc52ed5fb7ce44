"""bench-changebench: AgentChangeBench for bench: goal shifts and action sets as task data, and the TSR, TUE and TCRR metrics."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Metric, Persona, TaskExtension, hookimpl

from .extensions import ActionSet, ActionSetsExtension, GoalShifts, GoalShiftsExtension
from .metrics import TaskSuccessRate, ToolCallRedundancy, ToolUseEfficiency
from .personas import changebench_personas

__all__ = ["ActionSet", "GoalShifts", "register_metrics", "register_personas", "register_task_extensions"]


@hookimpl
def register_task_extensions(register: Callable[[TaskExtension], None]) -> None:
    """AgentChangeBench's task fields: user_scenario.goal_shifts and evaluation_criteria.action_sets."""
    register(GoalShiftsExtension())
    register(ActionSetsExtension())


@hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """TSR (with its channels), TUE and TCRR."""
    register(TaskSuccessRate())
    register(ToolUseEfficiency())
    register(ToolCallRedundancy())


@hookimpl
def register_personas(register: Callable[[Persona], None]) -> None:
    """AgentChangeBench's five persona keys for banking, airline and retail, in our own words."""
    for persona in changebench_personas():
        register(persona)
