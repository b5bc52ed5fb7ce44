"""AgentChangeBench's task fields, owned by this plugin: goal shifts (user scenario) and action sets (evaluation criteria)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from bench_kernel import Action, Task, TaskExtension, structure


@attrs.frozen(kw_only=True)
class GoalShifts:
    """The goals a user pursues, in order; `required_shifts` should be one less than their number."""

    required_shifts: int
    goals: list[str]


@attrs.frozen(kw_only=True)
class AllowedTool:
    """A tool that satisfies an action set, with the parameters that must match (a subset of the call's)."""

    function_name: str
    params: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ActionSet:
    """One expected step: any of its allowed tools, called with the listed parameters."""

    action_id: str
    allowed_tools: list[AllowedTool]
    required_parameters: Any = None
    max_score: Any = None
    scoring_rules: Any = None
    """Carried but not scored: AgentChangeBench's scorer ignores these three fields too."""


@attrs.frozen
class ActionSets:
    """A task's action sets; the oracle agent performs the first allowed tool of each, with its listed parameters."""

    sets: list[ActionSet]

    def oracle_actions(self) -> list[Action]:
        """One action per set (the kernel's oracle agent asks for these when a task has no gold actions)."""
        return [
            Action(action_id=s.action_id, name=s.allowed_tools[0].function_name, arguments=dict(s.allowed_tools[0].params))
            for s in self.sets
            if s.allowed_tools
        ]


@attrs.define(kw_only=True)
class GoalShiftsExtension(TaskExtension):
    """`user_scenario.goal_shifts`: the ordered goals of a goal-shift task."""

    name: str = "goal_shifts"
    field: str = "goal_shifts"
    parent: Any = "user_scenario"
    type: Any = GoalShifts
    description: str = "AgentChangeBench's goal shifts: required_shifts and the ordered goals."

    def attributes(self, value: GoalShifts) -> Mapping[str, str]:
        """Report breakdowns by number of shifts and by first goal."""
        return {"shifts": str(value.required_shifts), "first_goal": value.goals[0] if value.goals else ""}

    def problems(self, value: GoalShifts) -> list[str]:
        """required_shifts must equal the number of goals minus one (AgentChangeBench's own invariant)."""
        expected = max(0, len(value.goals) - 1)
        if value.required_shifts != expected:
            return [
                f"required_shifts is {value.required_shifts} but {len(value.goals)} goals allow {expected} ({', '.join(value.goals) or 'no goals'})"
            ]
        return []


@attrs.define(kw_only=True)
class ActionSetsExtension(TaskExtension):
    """`evaluation_criteria.action_sets`: the steps a task expects, each satisfiable by several tools."""

    name: str = "action_sets"
    field: str = "action_sets"
    parent: Any = "evaluation_criteria"
    type: Any = list[ActionSet]
    description: str = "AgentChangeBench's action sets: any allowed tool with the listed parameters."

    def load(self, raw: Any, *, source: str, root: str) -> ActionSets:
        """The sets, wrapped so that the oracle agent can perform them."""
        return ActionSets(sets=structure(raw, list[ActionSet], source=source, root=root))


def expected_steps(task: Task) -> list[list[tuple[str, Mapping[str, Any]]]]:
    """The task's action sets as (tool, parameters) alternatives; legacy gold actions become one-tool sets."""
    found: ActionSets | None = task.extension("action_sets")
    steps: list[list[tuple[str, Mapping[str, Any]]]] = []
    if found is not None and found.sets:
        return [[(t.function_name, t.params) for t in s.allowed_tools] for s in found.sets]
    for action in task.gold_actions():
        params = {k: v for k, v in action.arguments.items() if action.compare_args is None or k in action.compare_args}
        steps.append([(action.name, params)])
    return steps
