"""Conversation events: typed facts (attrs classes with a ``kind`` class variable) that participants, channels and metrics record."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal, TypeVar

import attrs

from bench_kernel.serialization import converter, unstructure

T = TypeVar("T")


@attrs.frozen(kw_only=True)
class Event:
    """One recorded event, as stored: kind, the message index it belongs to, who emitted it and its data."""

    kind: str
    data: dict[str, Any] = attrs.field(factory=dict)
    message_index: int | None = None
    source: str = ""
    ts_utc: str | None = None

    def as_type(self, cls: type[T]) -> T:
        """The event's data structured as a typed event class."""
        return converter.structure(self.data, cls)


@attrs.frozen(kw_only=True)
class GoalShift:
    """The user moved to another goal (AgentChangeBench's goal shifts, bench-changebench's shift plans on any domain)."""

    kind: ClassVar[str] = "goal.shift"
    goal_index: int
    goal: str
    previous_goal: str | None = None
    reason: str = ""
    """Why the shift happened now, e.g. 'goal done' or 'after 6 turns'."""


@attrs.frozen(kw_only=True)
class ChannelTranscript:
    """What a channel did to one message: the text meant and the text the other side received."""

    kind: ClassVar[str] = "channel.transcript"
    direction: Literal["to_agent", "to_user"]
    meant: str | None
    heard: str | None
    details: dict[str, Any] = attrs.field(factory=dict)
    """Channel specifics, e.g. word error rate, audio hash and duration, engine latency."""


def _no_position() -> int | None:
    return None


@attrs.define
class EventLog:
    """The events of one conversation; `emit` stamps each with the current message index."""

    events: list[Event] = attrs.field(factory=list)
    position: Callable[[], int | None] = _no_position
    """The index the next message will get (bound by the orchestrator while the conversation runs)."""
    clock: Callable[[], str] | None = None

    def emit(self, event: Any, *, source: str = "", message_index: int | None = None) -> Event:
        """Record a typed event (or a ready `Event`); the message index defaults to the next message's."""
        index = self.position() if message_index is None else message_index
        stamp = self.clock() if self.clock is not None else None
        if isinstance(event, Event):
            recorded = attrs.evolve(
                event,
                message_index=event.message_index if event.message_index is not None else index,
                source=event.source or source,
                ts_utc=event.ts_utc or stamp,
            )
        else:
            recorded = Event(kind=type(event).kind, data=unstructure(event), message_index=index, source=source, ts_utc=stamp)
        self.events.append(recorded)
        return recorded

    def of_kind(self, kind: str) -> list[Event]:
        """The recorded events of one kind, in order."""
        return [e for e in self.events if e.kind == kind]

    def typed(self, cls: type[T]) -> list[tuple[Event, T]]:
        """Events of a typed event class, each with its data structured as that class."""
        kind = cls.kind  # type: ignore[attr-defined]
        return [(e, e.as_type(cls)) for e in self.events if e.kind == kind]
