"""Example policies that read only what an environment gives (observation and info): for checks, tests and benchmarks.

Each has `start(observation, info)` for the reset's result and `act(observation, info)` for every step's;
`GoldReplayPolicy` plays a task's gold actions as an agent (it should earn 1.0 wherever bench's oracle does),
`DoNothingPolicy` what bench's do-nothing baseline does, `ScriptedCustomerPolicy` the customer bench's scripted user
plays, `RandomPolicy` random messages from the environment's tools.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs

from bench_kernel import Action, StructuredUserInstructions, Task

DEVICE_REQUEST = "Please do this on your device: "
"""How the agent asks the customer for a device action (bench's scripted user performs `name({json})` it reads)."""
APOLOGY = "I'm sorry, I can't help with that."
STOP = "###STOP###"


def tool_call(name: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """An assistant message with one tool call, in the OpenAI chat format."""
    call = {"type": "function", "function": {"name": name, "arguments": json.dumps(dict(arguments))}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def say(text: str) -> dict[str, Any]:
    """An assistant message with text."""
    return {"role": "assistant", "content": text}


@attrs.define
class GoldReplayPolicy:
    """The agent that performs the task's gold actions one per step, asks the customer for the customer's, then says
    what the task wants communicated (working alone: with the stop token, or it calls `done` when there is nothing)."""

    plan: list[Action] = attrs.field(factory=list)
    facts: list[str] = attrs.field(factory=list)
    done_tool: str | None = None
    stop: str = STOP
    closed: bool = False

    def start(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> None:
        """Read the task's gold actions and facts from the reset's info."""
        task: Task = info["task"]
        self.plan = task.oracle_actions()
        criteria = task.evaluation_criteria
        self.facts = list(criteria.communicate_info or []) if criteria is not None else []
        self.done_tool = info.get("done_tool")
        self.stop = (info.get("stop_tokens") or [STOP])[0]
        self.closed = False

    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> dict[str, Any]:
        """The next gold action, a device request, the closing words, or `done`."""
        if self.plan:
            action = self.plan.pop(0)
            if action.requestor == "user" and self.done_tool is None:
                return say(f"{DEVICE_REQUEST}{action.name}({json.dumps(action.arguments, sort_keys=True)})")
            return tool_call(action.name, action.arguments)
        closing = " ".join(["All done.", *(f"{fact}." for fact in self.facts)])
        if self.done_tool is not None:  # alone: the facts go with the stop, else the `done` tool ends the work
            return say(f"{closing} {self.stop}") if self.facts else tool_call(self.done_tool, {})
        if self.closed:
            return say("Is there anything else I can help you with?")
        self.closed = True
        return say(closing)


@attrs.define
class DoNothingPolicy:
    """What bench's do-nothing baseline does: the agent declines (alone, it stops at once); the customer leaves."""

    side: str = "agent"
    done_tool: str | None = None

    def start(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> None:
        """Note the side and the `done` tool."""
        self.side, self.done_tool = info["side"], info.get("done_tool")

    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> dict[str, Any]:
        """Decline, stop, or leave."""
        if self.side == "user":
            return say(STOP)
        return tool_call(self.done_tool, {}) if self.done_tool else say(APOLOGY)


@attrs.define
class ScriptedCustomerPolicy:
    """The customer of bench's scripted user: says the scenario, performs the task's customer-side gold actions when
    the agent asks for them (by name), reports their results, and stops once it has nothing left to say."""

    lines: list[str] = attrs.field(factory=list)
    device: list[Action] = attrs.field(factory=list)
    stop: str = STOP

    def start(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> None:
        """Read the scenario and the customer's gold actions from the reset's info."""
        task: Task = info["task"]
        scenario = task.user_scenario
        self.lines = list(scenario.script) if scenario.script else [opening_line(scenario.instructions)]
        self.device = [a for a in task.gold_actions() if a.requestor == "user"]
        self.stop = (info.get("stop_tokens") or [STOP])[0]

    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> dict[str, Any]:
        """Results of device actions, a requested device action, the next line, or the stop."""
        messages = observation["messages"]
        if messages and all(m["role"] == "tool" for m in messages):
            return say("I did that. The result was: " + "; ".join(str(m.get("content") or "") for m in messages))
        heard = " ".join(str(m.get("content") or "") for m in messages if m["role"] == "user")  # the agent, in our chat
        if self.device and f"{self.device[0].name}(" in heard:
            action = self.device.pop(0)
            return tool_call(action.name, action.arguments)
        if self.lines:
            return say(self.lines.pop(0))
        return say(f"Thank you, that is all. {self.stop}")


def opening_line(instructions: StructuredUserInstructions | str) -> str:
    """What a scripted customer says first: why it calls, what it knows, what it wants."""
    if isinstance(instructions, str):
        return instructions
    parts = [instructions.reason_for_call, instructions.known_info or "", instructions.task_instructions]
    return " ".join(p.strip() for p in parts if p and p.strip())


@attrs.define
class RandomPolicy:
    """Random messages: tool calls of the episode's tools with arguments drawn from their schemas, random words, and
    on the user side the stop token now and then. Reproducible: seeded from `seed` and the episode's conversation seed."""

    seed: int = 0
    space: Any = None

    def start(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> None:
        """Take the episode's tools and seed the draws."""
        import numpy as np

        from .spaces import ChatAction  # gymnasium's, imported when a random policy is used

        tokens = info.get("stop_tokens")
        self.space = ChatAction(
            observation.get("tools") or [], stop=tokens[0] if tokens else None, seed=np.random.default_rng([self.seed, info["seed"]])
        )

    def act(self, observation: Mapping[str, Any], info: Mapping[str, Any]) -> dict[str, Any]:
        """A random message."""
        message: dict[str, Any] = self.space.sample()
        return message
