"""The user's plan of a multi-goal task: the moves it makes, in order (raise, resume, follow up, abandon).

A task's plugin-owned field `plan` lists the moves; each move concerns one goal and says what the
user says. The gold actions of move k carry ids `m<k>.<n>`, so the kernel's oracle (which works
goal by goal through a task's `shift_plan`) performs, after each move of the user, exactly the
actions that move asks for. The domain gives every task a `shift_plan` view of its plan
(`MovePlan`): the planned user moves on emitting a `GoalShift` per move, and the kernel's scripted
user can speak the same lines.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import attrs

from bench_kernel import TaskExtension

Act = Literal["raise", "resume", "follow_up", "abandon", "mention"]
SHIFT_PLAN = "shift_plan"
"""The task extension the kernel's oracle agent and scripted user read to work move by move."""


@attrs.frozen(kw_only=True)
class Move:
    """One move of the user: which goal, what it does with it, what it says, and the status it then expects."""

    goal: str
    act: Act
    say: str
    expect: str | None = None
    """The goal status the user waits for before moving on (None: none, e.g. when abandoning)."""


@attrs.frozen(kw_only=True)
class UserPlan:
    """The moves of a task, in order."""

    moves: list[Move]
    proactive: bool = False
    """True when the agent must follow up pending bookings without being asked (complex tasks)."""


@attrs.frozen(kw_only=True)
class PlanStep:
    """A move as the kernel's shift machinery sees a goal: an id and an opening line."""

    task_id: str
    opening: str


@attrs.frozen(kw_only=True)
class MovePlan:
    """The `shift_plan` view of a user plan: the move each gold action belongs to."""

    goals: list[PlanStep]
    turns_per_goal: int | None = None

    def goal_of(self, action_id: str) -> int:
        """The index of the move an action (`m<k>.<n>`) belongs to; 0 for any other id."""
        head = action_id.split(".", 1)[0]
        return int(head[1:]) if head.startswith("m") and head[1:].isdigit() else 0


def shift_view(plan: UserPlan) -> MovePlan:
    """The plan as the kernel's oracle and scripted user read it."""
    return MovePlan(goals=[PlanStep(task_id=f"{m.goal}:{m.act}", opening=m.say) for m in plan.moves])


def action_id(move: int, n: int) -> str:
    """The id of a move's n-th gold action."""
    return f"m{move}.{n}"


@attrs.define(kw_only=True)
class PlanExtension(TaskExtension):
    """The task field `plan`: the moves the user makes through its goals."""

    name: str = "services_plan"
    field: str = "plan"
    type: Any = UserPlan
    description: str = "bench-services: the user's moves through a multi-goal task (raise, resume, follow up, abandon)"

    def attributes(self, value: Any) -> Mapping[str, str]:
        """How many moves the plan has."""
        return {"moves": str(len(value.moves))}

    def problems(self, value: Any) -> list[str]:
        """Moves that expect an unknown status."""
        return [
            f"move {i} expects unknown status {m.expect!r}"
            for i, m in enumerate(value.moves)
            if m.expect not in (None, "open", "pending", "completed")
        ]
