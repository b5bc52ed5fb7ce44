"""One episode: a bench conversation in which the policy's side waits for the policy's next action.

The policy's participant (participants.py) is an ordinary bench agent or user simulator whose `respond` hands what
arrived to the episode and awaits the action `step` delivers. The conversation itself is bench's own `run_unit`:
set up, played by the kernel's loop, evaluated, scored and stored as any run's conversation.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import attrs

from bench_kernel import ConversationResult, ConversationSetup, Message, ParticipantError, ParticipantMessage, Task

from .actions import action_message, call_ids
from .config import Side

CURRENT: contextvars.ContextVar[Episode | None] = contextvars.ContextVar("bench_gym_episode", default=None)
"""The episode whose conversation runs in this task (set by the driver when it starts the conversation)."""


@attrs.define(eq=False)
class Episode:
    """The handover between a policy's steps and one conversation on bench's event loop."""

    task: Task
    trial: int
    side: Side
    arrived: Callable[[Episode], None]
    """Called (on the loop) when the episode waits for the policy or has ended."""
    setup: ConversationSetup | None = None
    incoming: list[Message] = attrs.field(factory=list)
    """What arrived for the policy's pending turn."""
    turns: int = 0
    """The policy's turns so far (1 once the first observation is out)."""
    cursor: int = 0
    """How many of the conversation's messages the policy has seen or sent."""
    action: asyncio.Future[ParticipantMessage] | None = None
    runner: asyncio.Task[ConversationResult] | None = None
    result: ConversationResult | None = None
    ids: Iterator[str] = attrs.field(factory=call_ids)
    failure: BaseException | None = None
    """What escaped the conversation's task (run_unit stores every Exception itself: only the likes of SystemExit)."""
    reported: bool = False
    """True once the end (reward, termination) went out to the policy."""

    @property
    def waiting(self) -> bool:
        """True while the conversation waits for the policy's action."""
        return self.action is not None and not self.action.done()

    @property
    def over(self) -> bool:
        """True once the conversation has ended and been evaluated (and stored when asked)."""
        return self.result is not None or self.failure is not None

    async def policy_turn(self, incoming: Sequence[Message]) -> ParticipantMessage:
        """Hand what arrived to the policy and wait for its action (the policy participant's `respond`)."""
        assert self.setup is not None
        self.incoming = list(incoming)
        self.cursor = self.setup.events.position() or 0
        self.action = asyncio.get_running_loop().create_future()
        self.turns += 1
        self.arrived(self)
        try:
            message = await self.action
        finally:
            self.action = None
        self.cursor += 1  # the policy's own message
        return message

    def act(self, action: Any) -> None:
        """Deliver the policy's action: its message, or the error that ends the episode as the policy's."""
        assert self.action is not None and not self.action.done(), "the episode is not waiting for an action"
        try:
            message = action_message(action, self.side, self.ids)
        except ParticipantError as exc:
            self.action.set_exception(exc)
            return
        self.action.set_result(message)

    def ended(self, runner: asyncio.Task[ConversationResult]) -> None:
        """The conversation's task finished (it stores its own failures, so only a cancellation has no result)."""
        if runner.cancelled():
            return
        self.failure = runner.exception()
        self.result = None if self.failure is not None else runner.result()
        self.arrived(self)
