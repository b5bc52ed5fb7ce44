"""A tiny dual-control domain the kernel tests run against (no plugin package needed)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

import bench_kernel
from bench_kernel import Domain, DomainData, DomainOptions, State, ToolError, ToolKind, Toolkit, tool


class CounterTools(Toolkit):
    """Counters the agent reads and increments."""

    @tool(ToolKind.READ)
    def get_counter(self, name: str) -> dict:
        """Read a counter.

        Args:
            name: The counter's name.
        """
        if name not in self.state.counters:
            raise ToolError(f"Counter {name} not found")
        return self.state.counters[name]

    @tool(ToolKind.WRITE)
    def increment(self, name: str, by: int = 1) -> dict:
        """Increment a counter.

        Args:
            name: The counter's name.
            by: How much to add.
        """
        if name not in self.state.counters:
            raise ToolError(f"Counter {name} not found")
        record = self.state.counters.edit(name)
        record["value"] += by
        return record

    def counter_is(self, name: str, value: int) -> bool:
        """Assertion: the counter has this value."""
        return self.state.counters[name]["value"] == value


class LampTools(Toolkit):
    """The user's lamp."""

    @tool(ToolKind.READ)
    def look_at_lamp(self) -> str:
        """Say whether the lamp is on."""
        return "on" if self.state.device["lamp"]["on"] else "off"

    @tool(ToolKind.WRITE)
    def switch_lamp(self, on: bool) -> str:
        """Switch the lamp.

        Args:
            on: True to switch it on.
        """
        self.state.device["lamp"] = {"on": on}
        return "ok"

    def lamp_is(self, on: bool) -> bool:
        """Assertion: the lamp is in this position."""
        return self.state.device["lamp"]["on"] == on


def _instructions(text: str) -> dict[str, Any]:
    return {"domain": "toy", "reason_for_call": text, "task_instructions": text}


TASKS: list[dict[str, Any]] = [
    {
        "id": "inc-a",
        "user_scenario": {"instructions": _instructions("Add one to counter a.")},
        "ticket": "Add one to counter a.",
        "evaluation_criteria": {"actions": [{"action_id": "1", "name": "increment", "arguments": {"name": "a", "by": 1}}], "reward_basis": ["DB"]},
    },
    {
        "id": "read-b",
        "user_scenario": {"instructions": _instructions("What is counter b?")},
        "ticket": "Tell the value of counter b.",
        "evaluation_criteria": {
            "actions": [{"action_id": "1", "name": "get_counter", "arguments": {"name": "b"}}],
            "communicate_info": ["41"],
            "reward_basis": ["DB", "COMMUNICATE"],
        },
    },
    {
        "id": "lamp",
        "user_scenario": {"instructions": _instructions("My lamp is off.")},
        "ticket": "Get the user's lamp on.",
        "evaluation_criteria": {
            "actions": [{"action_id": "1", "requestor": "user", "name": "switch_lamp", "arguments": {"on": True}}],
            "env_assertions": [{"env_type": "user", "func_name": "lamp_is", "arguments": {"on": True}}],
            "reward_basis": ["ENV_ASSERTION"],
        },
    },
]


@attrs.define(kw_only=True)
class ToyDomain(Domain):
    """Counters on the agent side, a lamp on the user side."""

    name: str = "toy"
    tasks: list[dict[str, Any]] = attrs.field(factory=lambda: list(TASKS))

    def load(self, options: DomainOptions) -> DomainData:
        """Build the data in memory."""
        tasks = bench_kernel.structure_tasks(self.tasks, options.vocabulary, source="toy")
        if options.tasks_file is not None:
            tasks = bench_kernel.load_tasks(options.tasks_file, options.vocabulary)
        return DomainData(
            name=self.name,
            tasks=tasks,
            policy="Help with counters.",
            solo_policy="Solve the ticket alone.",
            agent_toolkit=CounterTools,
            agent_state=State.from_records({"counters": {"a": {"value": 0}, "b": {"value": 41}}}),
            user_toolkit=LampTools,
            user_state=State.from_records({"device": {"lamp": {"on": False}}}),
            source="memory",
        )


class ToyPlugin:
    """A plugin object registering the toy domain."""

    def __init__(self, domain: ToyDomain | None = None) -> None:
        self.domain = domain or ToyDomain()

    @bench_kernel.hookimpl
    def register_domains(self, register: Callable[[Domain], None]) -> None:
        """Register the toy domain."""
        register(self.domain)
