"""Hand-built conversations for the formula tests: messages, goal.status events at chosen message indexes, a task with goals."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bench_atod import Goal, GoalStatusChange

from bench_kernel import (
    AssistantMessage,
    ConversationResult,
    Environment,
    EventLog,
    GoldReplay,
    Message,
    MetricContext,
    State,
    Task,
    TerminationReason,
    ToolCall,
    Toolkit,
    ToolMessage,
    UserMessage,
    UserScenario,
)


class NoTools(Toolkit):
    """No database."""


def goal(goal_id: str, content: str, *, deps: Sequence[str] = (), slots: dict[str, Any] | None = None, **annotated: Any) -> Goal:
    """A goal with our own wording."""
    return Goal(id=goal_id, domain="Demo", intent="Demo", content=content, dependencies=list(deps), slot_values=slots or {}, **annotated)


def task(goals: Sequence[Goal], complexity: str = "medium") -> Task:
    """A multi-goal task."""
    return Task(id="t", user_scenario=UserScenario(instructions="demo"), attributes={"complexity": complexity}, extensions={"goals": list(goals)})


def events(*changes: tuple[int | None, str, str]) -> EventLog:
    """goal.status events: (message index, goal id, new status)."""
    log = EventLog()
    for index, goal_id, status in changes:
        log.emit(GoalStatusChange(goal_id=goal_id, status=status), source="test", message_index=index)
    return log


def context(
    messages: Sequence[Message], log: EventLog, the_task: Task, *, models: Any = None, termination: TerminationReason = TerminationReason.USER_STOP
) -> MetricContext:
    """A metric context over a hand-built conversation (empty database)."""
    env = Environment(agent_tools=NoTools(State(tables={})))
    result = ConversationResult(
        run_id="r",
        arm="agent",
        task_id=the_task.id,
        trial=0,
        seed=7,
        agent="a",
        user="u",
        termination_reason=termination,
        messages=list(messages),
        reward_info=None,
        started_utc="",
        ended_utc="",
        duration_ms=0,
        attributes=dict(the_task.attributes),
    )
    gold = GoldReplay(agent_hash="", user_hash=None, action_errors=[], assertion_checks=[])
    return MetricContext(task=the_task, result=result, events=log, final_env=env, gold=gold, models=models)


def say(text: str) -> AssistantMessage:
    """An agent utterance."""
    return AssistantMessage(content=text)


def user(text: str) -> UserMessage:
    """A user utterance."""
    return UserMessage(content=text)


def call(name: str, call_id: str) -> AssistantMessage:
    """A tool call without text (not an utterance)."""
    return AssistantMessage(tool_calls=[ToolCall(id=call_id, name=name, arguments={})])


def result(call_id: str, text: str, *, error: bool = False) -> ToolMessage:
    """A tool result (not an utterance)."""
    return ToolMessage(id=call_id, content=text, error=error)


def section_figures(output: str) -> dict[tuple[str, str, str], Any]:
    """The atod section's table from a JSON report: (figure, averaging, group) -> value."""
    document = json.loads(output[output.index("{") :])
    [section] = [s for s in document["sections"] if s["plugin"] == "atod" and s["name"] == "atod"]
    table = section["tables"][0]
    groups = table["headers"][2:]
    return {(row[0], row[1], group): value for row in table["rows"] for group, value in zip(groups, row[2:], strict=True)}
