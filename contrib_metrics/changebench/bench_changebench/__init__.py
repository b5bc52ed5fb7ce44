"""bench-changebench: AgentChangeBench for bench: goal shifts and action sets as task data, shift plans and personas on any
domain, and the TSR, TUE and TCRR metrics."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Metric, TaskExtension, TaskTransform, hookimpl

from .extensions import ActionSet, ActionSetsExtension, GoalShifts, GoalShiftsExtension
from .metrics import TaskSuccessRate, ToolCallRedundancy, ToolUseEfficiency
from .personas import Persona, PersonaChange, PersonaTransform, apply_personas, changebench_personas, persona_texts, read_persona_file
from .shifts import PLAN, PlannedGoal, ShiftPlan, ShiftTransform, chain, named_chains, plan_chains, read_plan_file

__all__ = [
    "PLAN",
    "ActionSet",
    "GoalShifts",
    "Persona",
    "PersonaChange",
    "PersonaTransform",
    "PlannedGoal",
    "ShiftPlan",
    "ShiftTransform",
    "apply_personas",
    "chain",
    "changebench_personas",
    "named_chains",
    "persona_texts",
    "plan_chains",
    "read_persona_file",
    "read_plan_file",
    "register_metrics",
    "register_task_extensions",
    "register_task_transforms",
]


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
def register_task_transforms(register: Callable[[TaskTransform], None]) -> None:
    """Shift plans (`--shifts`, `--shift-plan`, `--turns-per-goal`) and personas (`--persona`, `--persona-file`) on any domain."""
    register(ShiftTransform())
    register(PersonaTransform())
