"""A small asynchronous test domain with goals: bookings turn pending, then confirmed (a car never is), payment needs a
confirmed booking; the world records goal.status events in `advance`, and a user simulator records the goals it raises."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import attrs
from bench_atod import GoalStatusChange, task_goals

import bench_kernel
from bench_kernel import (
    ConversationSetup,
    Domain,
    DomainData,
    DomainOptions,
    Environment,
    EventLog,
    Message,
    ScriptedUser,
    State,
    ToolError,
    ToolKind,
    Toolkit,
    UserMessage,
    UserSession,
    UserSimulator,
    read_tasks,
    tool,
)

TASKS = Path(__file__).parent / "data" / "errands_tasks.json"
CONFIRM_AFTER = 2
"""Steps a booking stays pending before the world confirms it."""


class ErrandTools(Toolkit):
    """Book, check and pay."""

    @tool(ToolKind.WRITE)
    def book(self, item: str) -> str:
        """Ask for a booking; it is pending until confirmed (cars are never available).

        Args:
            item: What to book.
        """
        status = "failed" if item == "car" else "pending"
        self.state["bookings"][item] = {"status": status, "reported": None, "age": 0, "paid": False, "paid_reported": False}
        return status

    @tool(ToolKind.READ)
    def check(self, item: str) -> str:
        """A booking's status.

        Args:
            item: The booked item.
        """
        if item not in self.state["bookings"]:
            raise ToolError(f"no booking for {item}")
        return str(self.state["bookings"][item]["status"])

    @tool(ToolKind.WRITE)
    def pay(self, item: str) -> str:
        """Pay a confirmed booking.

        Args:
            item: The booked item.
        """
        if item not in self.state["bookings"] or self.state["bookings"][item]["status"] != "confirmed":
            raise ToolError(f"{item} is not confirmed")
        self.state["bookings"].edit(item)["paid"] = True
        return "paid"


GOAL_STATUS = {"pending": "pending", "confirmed": "completed", "failed": "failed"}


def advance(env: Environment, position: int, events: EventLog) -> None:
    """Confirm bookings pending long enough; record each booking's and payment's new status as a goal.status event."""
    table = env.agent_tools.state["bookings"]
    for item in list(table):
        record = table.edit(item)
        if record["status"] == "pending":
            record["age"] += 1
            if record["age"] > CONFIRM_AFTER:
                record["status"] = "confirmed"
        if record["reported"] != record["status"]:
            events.emit(GoalStatusChange(goal_id=item, status=GOAL_STATUS[record["status"]], previous_status=record["reported"]), source="errands")
            record["reported"] = record["status"]
        if record["paid"] and not record["paid_reported"]:
            events.emit(GoalStatusChange(goal_id=f"pay_{item}", status="completed", previous_status="open"), source="errands")
            record["paid_reported"] = True


@attrs.define(kw_only=True)
class Errands(Domain):
    """The test domain."""

    name: str = "errands"

    def load(self, options: DomainOptions) -> DomainData:
        """Two tasks with goals, an empty bookings table."""
        return DomainData(
            name=self.name,
            tasks=read_tasks(TASKS, options),
            policy="Book, check and pay for the customer.",
            agent_toolkit=ErrandTools,
            agent_state=State.from_records({"bookings": {}}),
            advance=advance,
        )


@attrs.define
class GoalRaisingSession(UserSession):
    """The scripted user; its opening line raises every goal of the task (recorded as open)."""

    setup: ConversationSetup
    inner: UserSession
    spoken: int = 0

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        """The scripted reply; the first one opens the task's goals."""
        message = await self.inner.respond(incoming)
        if self.spoken == 0:
            for goal in task_goals(self.setup.task):
                self.setup.events.emit(GoalStatusChange(goal_id=goal.id, status="open", previous_status="not_mentioned"), source="goal-user")
        self.spoken += 1
        return message

    def is_stop(self, message: UserMessage) -> bool:
        """As the scripted user."""
        return self.inner.is_stop(message)


@attrs.define(kw_only=True)
class GoalUser(UserSimulator):
    """The scripted user that records the goals it raises."""

    name: str = "goal-user"

    def start(self, setup: ConversationSetup) -> UserSession:
        """A scripted session that records its goals."""
        return GoalRaisingSession(setup, ScriptedUser().start(setup))


class ErrandsPlugin:
    """Registers the test domain and its user."""

    @bench_kernel.hookimpl
    def register_domains(self, register: Callable[[Domain], None]) -> None:
        """The errands domain."""
        register(Errands())

    @bench_kernel.hookimpl
    def register_user_simulators(self, register: Callable[[UserSimulator], None]) -> None:
        """The goal-raising user."""
        register(GoalUser())
