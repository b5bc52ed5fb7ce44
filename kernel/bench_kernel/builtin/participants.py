"""Built-in offline participants, so `bench run` needs no model: the oracle agent, the do-nothing agent and the scripted user."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import attrs

from bench_kernel.conversation.participants import STOP_TOKENS, Agent, AgentSession, ConversationSetup, UserSession, UserSimulator
from bench_kernel.markers import hookimpl
from bench_kernel.profiles.profile import Profile
from bench_kernel.schema.events import GoalShift
from bench_kernel.schema.messages import AssistantMessage, Message, Mode, ToolCall, ToolMessage, UserMessage
from bench_kernel.schema.tasks import Action, StructuredUserInstructions

STOP = "###STOP###"
DEVICE_REQUEST = "Please do this on your device: "
PLAN = "shift_plan"
"""The task extension holding a task's goals in order, when a plugin gives it some (docs/plugins.md says its shape)."""


def device_request(name: str, arguments: Mapping[str, Any] | None = None) -> str:
    """The oracle's sentence asking the user to perform a device action (a user tool): `...: name({"key": value})`."""
    return f"{DEVICE_REQUEST}{name}({json.dumps(dict(arguments or {}), sort_keys=True)})"


class Scripted:
    """A built-in participant that sends no model request: a run with it is custom under any profile, and says why."""

    name: str
    session: ClassVar[type[Any]]
    """The session class `start` makes for each conversation."""

    def start(self, setup: ConversationSetup) -> Any:
        """A fresh session of the participant's kind."""
        return self.session(setup)

    async def profile_deviations(self, options: Mapping[str, Any], profile: Profile) -> list[str]:
        """One reason: scripted, no model request to compare with the profile's."""
        return ["scripted, sends no model request"]


@attrs.define
class OracleSession(AgentSession):
    """Replays the task's gold actions in order, then tells the user what it must communicate."""

    setup: ConversationSetup
    position: int = 0
    closed_goal: int = -1

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """The next gold action (of the goals raised so far), a device request, or the closing message."""
        actions = self._actions_so_far()
        if self.position < len(actions):
            action = actions[self.position]
            self.position += 1
            return self._perform(action)
        if self.setup.mode is Mode.NO_USER:  # alone, every action is done by now
            return AssistantMessage(content=f"{self._closing()} {STOP}")
        goal = self._current_goal()
        if self.closed_goal >= goal:
            return AssistantMessage(content="Is there anything else I can help you with?")
        self.closed_goal = goal
        return AssistantMessage(content=self._closing())

    def _current_goal(self) -> int:
        return len(self.setup.events.typed(GoalShift))

    def _actions_so_far(self) -> list[Action]:
        """Every action without a shift plan; with one, the actions of the goals the user has raised (or all, alone)."""
        actions = self.setup.task.oracle_actions()
        plan = self.setup.task.extension(PLAN)
        if plan is None or self.setup.mode is Mode.NO_USER:
            return actions
        goal = self._current_goal()
        return [a for a in actions if plan.goal_of(a.action_id) <= goal]

    def _perform(self, action: Action) -> AssistantMessage:
        if action.requestor == "user" and self.setup.mode is not Mode.NO_USER:
            return AssistantMessage(content=device_request(action.name, action.arguments))
        call = ToolCall(id=f"oracle-{self.position}", name=action.name, arguments=dict(action.arguments))
        return AssistantMessage(tool_calls=[call])

    def _closing(self) -> str:
        info = (self.setup.task.evaluation_criteria.communicate_info or []) if self.setup.task.evaluation_criteria else []
        facts = " ".join(f"{fact}." for fact in info)
        return f"All done. {facts}".strip()

    def is_stop(self, message: AssistantMessage) -> bool:
        """Only a solo (no-user) oracle stops, after its last action."""
        return self.setup.mode is Mode.NO_USER and STOP in (message.content or "")


@attrs.define(kw_only=True)
class OracleAgent(Scripted, Agent):
    """Replays gold actions: a ceiling showing each task is solvable as written."""

    name: str = "oracle"
    description: str = "Replays the task's gold actions, then ends (no model)."
    calls_models_itself: bool = False
    session = OracleSession


@attrs.define
class DoNothingSession(AgentSession):
    """Never calls a tool; declines politely (solo: stops at once)."""

    setup: ConversationSetup

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """A refusal, or a stop in the no-user mode."""
        return AssistantMessage(content=STOP if self.setup.mode is Mode.NO_USER else "I'm sorry, I can't help with that.")

    def is_stop(self, message: AssistantMessage) -> bool:
        """Stops only in the no-user mode."""
        return self.setup.mode is Mode.NO_USER and STOP in (message.content or "")


@attrs.define(kw_only=True)
class DoNothingAgent(Scripted, Agent):
    """The baseline every report shows: what passes without the agent doing anything."""

    name: str = "do-nothing"
    description: str = "Calls no tool and helps with nothing: the baseline."
    calls_models_itself: bool = False
    session = DoNothingSession


@attrs.define
class ScriptedSession(UserSession):
    """Opens with the scenario, performs the device actions it is asked for, then stops."""

    setup: ConversationSetup
    # A task history in which the user already spoke has said the opening line.
    spoken: int = attrs.field(
        init=False, default=attrs.Factory(lambda s: int(any(isinstance(m, UserMessage) and m.has_text() for m in s.setup.history)), takes_self=True)
    )
    calls: int = 0
    turns_on_goal: int = 0

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        """The requested device actions, the next scripted line (the next goal, with a shift plan), or the stop token."""
        self.turns_on_goal += 1
        if incoming and all(isinstance(m, ToolMessage) for m in incoming):
            results = "; ".join(m.content or "" for m in incoming if isinstance(m, ToolMessage))
            return UserMessage(content=f"I did that. The result was: {results}")
        lines = self._lines()
        plan = self.setup.task.extension(PLAN)
        limit = plan.turns_per_goal if plan is not None else None
        if limit is not None and self.turns_on_goal > limit and 0 < self.spoken < len(lines):
            return self._say(lines[self.spoken], reason=f"after {limit} turns on the goal")
        requested = self._requested_calls(_last_text(incoming))
        if requested:
            return UserMessage(tool_calls=requested)
        if self.spoken and "repeat" in _last_text(incoming).lower():
            return UserMessage(content=self._repeated(lines[self.spoken - 1]))
        if self.spoken < len(lines):
            return self._say(lines[self.spoken], reason="the agent finished the goal")
        return UserMessage(content=f"Thank you, that is all. {STOP}")

    def _repeated(self, line: str) -> str:
        """Asked to say it again (e.g. misheard over a voice channel): what the user knows, else the last line."""
        instructions = self.setup.task.user_scenario.instructions
        known = None if isinstance(instructions, str) else instructions.known_info
        return known or line

    def _say(self, line: str, *, reason: str = "") -> UserMessage:
        plan = self.setup.task.extension(PLAN)
        if plan is not None and self.spoken > 0:
            # The event is stamped with the index of the message about to be sent: the true shift turn.
            goals = plan.goals
            self.setup.events.emit(
                GoalShift(goal_index=self.spoken, goal=goals[self.spoken].task_id, previous_goal=goals[self.spoken - 1].task_id, reason=reason),
                source="scripted",
            )
        self.spoken += 1
        self.turns_on_goal = 0
        return UserMessage(content=line)

    def _lines(self) -> list[str]:
        scenario = self.setup.task.user_scenario
        plan = self.setup.task.extension(PLAN)
        if plan is not None:
            return [goal.opening for goal in plan.goals]
        if scenario.script:
            return list(scenario.script)
        return [opening_line(scenario.instructions)]

    def _requested_calls(self, text: str) -> list[ToolCall]:
        found = find_calls(text, [t["function"]["name"] for t in self.setup.user_tools or []])
        first, self.calls = self.calls, self.calls + len(found)
        return [ToolCall(id=f"user-{first + n}", name=name, arguments=arguments, requestor="user") for n, (name, arguments) in enumerate(found, 1)]


def opening_line(instructions: StructuredUserInstructions | str) -> str:
    """What the scripted user says first: why it calls and what it knows."""
    # Without the stop tokens the scenario mentions ("say ###STOP### when done"): they would end the conversation at once.
    if isinstance(instructions, str):
        return _without_stop_tokens(instructions)
    parts = [instructions.reason_for_call, instructions.known_info or "", instructions.task_instructions]
    return _without_stop_tokens(" ".join(p.strip() for p in parts if p and p.strip()))


def _without_stop_tokens(text: str) -> str:
    for token in STOP_TOKENS:
        text = text.replace(token, "")
    return text


def _last_text(incoming: Sequence[Message]) -> str:
    texts = [m.content for m in incoming if isinstance(m, AssistantMessage) and m.content]
    return texts[-1] if texts else ""


def find_calls(text: str, names: Sequence[str]) -> list[tuple[str, dict[str, Any]]]:
    """Calls written as name({json}) or name() in text, for the given tool names only."""
    if not names or not text:
        return []
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\(")
    return [(match.group(1), found) for match in pattern.finditer(text) if (found := _json_object_at(text, match.end())) is not None]


def _json_object_at(text: str, start: int) -> dict[str, Any] | None:
    if text[start : start + 1] == ")":
        return {}
    try:
        value, end = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) and text[end : end + 1] == ")" else None


@attrs.define(kw_only=True)
class ScriptedUser(Scripted, UserSimulator):
    """Plays the task's scenario without an LLM."""

    name: str = "scripted"
    description: str = "Speaks the scenario (or its script), performs requested device actions, stops."
    session = ScriptedSession


@hookimpl
def register_agents(register: Callable[[Agent], None]) -> None:
    """The oracle and do-nothing agents (bench-trust adds the audit's other floors, talk-only and refuse)."""
    register(OracleAgent())
    register(DoNothingAgent())


@hookimpl
def register_user_simulators(register: Callable[[UserSimulator], None]) -> None:
    """The scripted user."""
    register(ScriptedUser())
