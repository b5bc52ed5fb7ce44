"""Multi-goal tasks: a task's goals (ATOD's goal list), shared by the domains that pose them and the plugins that score them.

A task may carry `goals`: each goal has an id, a domain and intent, what the user wants (content and
a short core content), the goals it depends on and its slot values. When a conversation runs, the
user simulator and the domain record each status change as a `GoalStatusChange` event at the message
where it happens; metrics and evaluators read those events, never guess them from the text. The
annotation fields (`status`, `status_history`, `first_mentioned_turn`, `completion_turn`) hold the
gold lifecycle of annotated dialogues (ATOD's released data) and of generated tasks.

Every plugin that reads goals from task files (bench-atod, bench-services, bench-memory) registers the one
`GoalsExtension`, so each loads them alone; the kernel keeps a task extension registered by several plugins once
when it is the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs

from bench_kernel import TaskExtension

GOAL_STATUSES = ("not_mentioned", "open", "pending", "completed", "failed", "abandoned")
"""A goal's lifecycle: not_mentioned -> open -> pending -> completed / failed / abandoned (suspension and resumption allowed)."""
DECIDED = frozenset({"completed", "failed"})
FINISHED = frozenset({"completed", "failed", "abandoned"})


def _known_status(instance: Any, attribute: attrs.Attribute[Any], value: str) -> None:
    if value not in GOAL_STATUSES:
        raise ValueError(f"{attribute.name} must be one of {', '.join(GOAL_STATUSES)}, got {value!r}")


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


@attrs.frozen(kw_only=True)
class StatusEntry:
    """A goal's status from one turn on (turns count utterances, 1-based; 0 is before the dialogue)."""

    turn: int
    status: str = attrs.field(converter=_lower, validator=_known_status)


@attrs.frozen(kw_only=True)
class Goal:
    """One goal of a multi-goal task, in ATOD's shape."""

    id: str
    domain: str
    intent: str
    content: str
    core_content: str = ""
    dependencies: list[str] = attrs.field(factory=list)
    """Ids of the goals that must be finished before this one can be (payment after booking)."""
    slots: list[str] = attrs.field(factory=list)
    slot_values: dict[str, Any] = attrs.field(factory=dict)
    status: str = attrs.field(default="not_mentioned", converter=_lower, validator=_known_status)
    """The annotated final status."""
    status_history: list[StatusEntry] = attrs.field(factory=list)
    first_mentioned_turn: int | None = None
    completion_turn: int | None = None


@attrs.frozen(kw_only=True)
class GoalStatusChange:
    """A goal's status changed (ATOD: Not_Mentioned, Open, Pending, Completed, Failed, Abandoned)."""

    kind: ClassVar[str] = "goal.status"
    goal_id: str
    status: str
    previous_status: str | None = None


@attrs.define(kw_only=True)
class GoalsExtension(TaskExtension):
    """The task field `goals`: a list of goals with unique ids whose dependencies name goals of the same task."""

    name: str = "goals"
    field: str = "goals"
    type: Any = list[Goal]
    description: str = "ATOD-style goal list: several goals, their dependencies and (for annotated dialogues) their lifecycle"

    def attributes(self, value: Any) -> Mapping[str, str]:
        """The number of goals, for report breakdowns."""
        return {"goals": str(len(value))}

    def problems(self, value: Any) -> list[str]:
        """Duplicate ids, dependencies on unknown goals and dependency cycles."""
        return goal_problems(value)


def goal_problems(goals: Sequence[Goal]) -> list[str]:
    """What is inconsistent in a goal list."""
    ids = [g.id for g in goals]
    problems = [f"goal id {i!r} appears {ids.count(i)} times" for i in sorted(set(ids)) if ids.count(i) > 1]
    known = set(ids)
    problems += [f"goal {g.id!r} depends on unknown goal {d!r}" for g in goals for d in g.dependencies if d not in known]
    cycle = dependency_cycle(goals)
    if cycle:
        problems.append("dependency cycle: " + " -> ".join(cycle))
    return problems


def dependency_cycle(goals: Sequence[Goal]) -> list[str]:
    """One dependency cycle as a list of ids (first id repeated at the end), or [] when there is none."""
    edges = {g.id: list(g.dependencies) for g in goals}
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> list[str]:
        state[node] = 1
        for nxt in edges[node]:
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt in edges and nxt not in state:
                found = visit(nxt, [*path, nxt])
                if found:
                    return found
        state[node] = 2
        return []

    for goal_id in edges:
        if goal_id not in state:
            found = visit(goal_id, [goal_id])
            if found:
                return found
    return []


def task_goals(task: Any) -> list[Goal]:
    """A task's goals ([] for a single-goal task)."""
    return list(task.extension("goals", None) or [])
