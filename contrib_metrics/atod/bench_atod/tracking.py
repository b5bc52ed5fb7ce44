"""Goal lifecycles read from a conversation's `goal.status` events, on ATOD's turn scale.

ATOD numbers utterances of both speakers from 1 (one utterance per turn). A bench trajectory also
holds tool calls without text and tool results; those are not utterances. A message's turn is the
number of utterances before it plus one, so an utterance gets its own ATOD number and a tool step
gets the number of the next utterance (the reply that reports what the tool did). An event belongs
to the message index it was emitted at, hence to that message's turn.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import attrs

from bench_kernel import AssistantMessage, EventLog, Message, UserMessage

from .goals import DECIDED, Goal, GoalStatusChange

NOT_MENTIONED = "not_mentioned"


def is_utterance(message: Message) -> bool:
    """A user or agent message with text (what ATOD counts as one turn)."""
    return isinstance(message, UserMessage | AssistantMessage) and message.has_text()


def utterance_turns(messages: Sequence[Message]) -> list[int]:
    """ATOD's turn of every message index, plus one entry for the index after the last message."""
    turns, said = [], 0
    for message in messages:
        turns.append(said + 1)
        said += is_utterance(message)
    turns.append(said + 1)
    return turns


def turn_of(turns: Sequence[int], message_index: int | None) -> int:
    """The turn of a message index (an index past the end belongs to the turn after the last utterance)."""
    if message_index is None or message_index >= len(turns):
        return turns[-1]
    return turns[max(0, message_index)]


@attrs.frozen(kw_only=True)
class Change:
    """One status change of one goal: the message it belongs to, its turn, and the new status."""

    goal_id: str
    status: str
    message_index: int | None
    turn: int
    source: str = ""


@attrs.frozen(kw_only=True)
class Lifecycle:
    """One goal's status changes in order, and what ATOD reads from them."""

    goal_id: str
    changes: tuple[Change, ...] = ()

    @property
    def final_status(self) -> str:
        """The last change's status (not_mentioned when the goal never changed)."""
        return self.changes[-1].status if self.changes else NOT_MENTIONED

    @property
    def first_mentioned_turn(self) -> int | None:
        """The turn of the first change to a status other than not_mentioned."""
        return next((c.turn for c in self.changes if c.status != NOT_MENTIONED), None)

    @property
    def end_turn(self) -> int | None:
        """For a decided goal, the turn of the last change to its final status (ATOD: completion or last failure)."""
        if self.final_status not in DECIDED:
            return None
        return next(c.turn for c in reversed(self.changes) if c.status == self.final_status)

    def status_before(self, turn: int) -> str:
        """The goal's status before a turn (changes at earlier turns only)."""
        earlier = [c for c in self.changes if c.turn < turn]
        return earlier[-1].status if earlier else NOT_MENTIONED


def event_changes(events: EventLog, messages: Sequence[Message]) -> list[Change]:
    """Every goal status change of a conversation, in the order recorded, with its ATOD turn."""
    turns = utterance_turns(messages)
    found = []
    for event, change in events.typed(GoalStatusChange):
        found.append(
            Change(
                goal_id=change.goal_id,
                status=change.status.lower(),
                message_index=event.message_index,
                turn=turn_of(turns, event.message_index),
                source=event.source,
            )
        )
    return found


def lifecycles(goals: Sequence[Goal], changes: Iterable[Change]) -> dict[str, Lifecycle]:
    """Each task goal's lifecycle (changes of ids the task does not list are left out, as ATOD scores its goal list only)."""
    by_goal: dict[str, list[Change]] = {g.id: [] for g in goals}
    for change in changes:
        if change.goal_id in by_goal:
            by_goal[change.goal_id].append(change)
    return {goal_id: Lifecycle(goal_id=goal_id, changes=tuple(found)) for goal_id, found in by_goal.items()}


@attrs.frozen(kw_only=True)
class Outcome:
    """What dGCR and NTC need of one goal: its final status, first mention and end turns."""

    goal_id: str
    final_status: str
    first_mentioned_turn: int | None = None
    end_turn: int | None = None


def event_outcomes(lives: dict[str, Lifecycle]) -> list[Outcome]:
    """Each goal's outcome from its recorded lifecycle."""
    return [
        Outcome(goal_id=life.goal_id, final_status=life.final_status, first_mentioned_turn=life.first_mentioned_turn, end_turn=life.end_turn)
        for life in lives.values()
    ]


def annotated_outcomes(goals: Sequence[Goal]) -> list[Outcome]:
    """Each goal's gold outcome as ATOD's scripts read it: `status`, `first_mentioned_turn`, and as end
    `completion_turn` for a completed goal or the last failed entry of `status_history` for a failed one."""
    out = []
    for goal in goals:
        end = goal.completion_turn if goal.status == "completed" else None
        if goal.status == "failed":
            end = next((e.turn for e in reversed(goal.status_history) if e.status == "failed"), None)
        out.append(Outcome(goal_id=goal.id, final_status=goal.status, first_mentioned_turn=goal.first_mentioned_turn, end_turn=end))
    return out


def is_annotated(goals: Sequence[Goal]) -> bool:
    """True when the goal list carries a gold lifecycle (ATOD's released dialogues): a status history or the turns of one.

    A final `status` alone is not a lifecycle: a generated task's says only what its plan expects.
    """
    return any(g.status_history or g.first_mentioned_turn is not None or g.completion_turn is not None for g in goals)
