"""The planned user: a scripted multi-goal user that follows a task's plan, move by move, and says so in events.

On every move it emits a `GoalShift` (after the first move: the kernel's oracle counts them to
know which goal's actions are due) and, for the goal concerned, `open` when it raises a goal not
yet raised (or one that failed and is tried again) and `abandoned` when it gives one up. Before
moving on it checks that the previous move's goal reached the status the plan expects (the
domain's events say so); if not, it asks again, at most `RETRIES` times, then moves on. Once the
plan is done it asks once about each booking still pending, then stops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs
from bench_atod import GoalStatusChange, task_goals

from bench_kernel import ConversationSetup, GoalShift, Message, UserMessage, UserSession, UserSimulator

from .plan import Move, UserPlan

STOP = "###STOP###"
RETRIES = 2
SOURCE = "user"
REACHED = {"open": {"open", "pending", "completed", "failed"}, "pending": {"pending", "completed", "failed"}, "completed": {"completed", "failed"}}


def status_of(setup: ConversationSetup, goal_id: str) -> str:
    """A goal's current status from the conversation's events (not_mentioned before any)."""
    changes = [c.status for _, c in setup.events.typed(GoalStatusChange) if c.goal_id == goal_id]
    return changes[-1] if changes else "not_mentioned"


@attrs.define
class PlannedSession(UserSession):
    """Speaks the plan's moves in order, emitting the goal events of each."""

    setup: ConversationSetup
    plan: UserPlan
    spoken: int = 0
    retries: int = 0
    asked_after: set[str] = attrs.field(factory=set)

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        """The next move, a repeated request, a question about a pending booking, or the stop."""
        moves = self.plan.moves
        if self.spoken and self._unmet(moves[self.spoken - 1]) and self.retries < RETRIES:
            self.retries += 1
            return UserMessage(content=f"Could you please take care of that first? {moves[self.spoken - 1].say}")
        if self.spoken < len(moves):
            return self._move(moves[self.spoken])
        for goal in task_goals(self.setup.task):
            if goal.id not in self.asked_after and status_of(self.setup, goal.id) == "pending":
                self.asked_after.add(goal.id)
                return UserMessage(content=f"Before we finish: has my request to {goal.content} gone through?")
        return UserMessage(content=f"That is everything I needed, thank you. {STOP}")

    def _unmet(self, move: Move) -> bool:
        return move.expect is not None and status_of(self.setup, move.goal) not in REACHED[move.expect]

    def _move(self, move: Move) -> UserMessage:
        events = self.setup.events
        if self.spoken:
            previous = self.plan.moves[self.spoken - 1]
            events.emit(
                GoalShift(goal_index=self.spoken, goal=f"{move.goal}:{move.act}", previous_goal=f"{previous.goal}:{previous.act}", reason=move.act),
                source=SOURCE,
            )
        status = status_of(self.setup, move.goal)
        if move.act == "abandon" and status not in ("completed", "failed", "abandoned"):
            events.emit(GoalStatusChange(goal_id=move.goal, status="abandoned", previous_status=status), source=SOURCE)
        elif move.act != "abandon" and status in ("not_mentioned", "failed", "abandoned"):
            events.emit(GoalStatusChange(goal_id=move.goal, status="open", previous_status=status), source=SOURCE)
        self.spoken += 1
        self.retries = 0
        return UserMessage(content=move.say)


@attrs.define(kw_only=True)
class PlannedUser(UserSimulator):
    """Plays a multi-goal task's plan without an LLM (tasks without a plan: their scenario, then stop)."""

    name: str = "planned"
    description: str = "Follows a multi-goal task's plan (raise, suspend, resume, abandon goals), emitting goal events; no model."

    def start(self, setup: ConversationSetup) -> UserSession:
        """A fresh planned session."""
        plan = setup.task.extension("services_plan", None)
        if plan is None:
            plan = UserPlan(moves=[Move(goal="", act="raise", say=_opening(setup))])
        return PlannedSession(setup, plan)


def _opening(setup: ConversationSetup) -> str:
    instructions: Any = setup.task.user_scenario.instructions
    if isinstance(instructions, str):
        return instructions
    return " ".join(p for p in (instructions.reason_for_call, instructions.known_info or "") if p)
