"""A small domain whose table is deferred (built on first use, as airline's and retail's databases are), registered in
this process only: forked workers reuse the run's registry, so they play it without an entry point."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any

import attrs

from bench_kernel import Domain, DomainData, DomainOptions, State, ToolError, ToolKind, Toolkit, hookimpl, structure_tasks, tool

COUNTERS = {"a": {"value": 0}, "b": {"value": 41}}


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


def _task(task_id: str, text: str, action: dict[str, Any], **criteria: Any) -> dict[str, Any]:
    scenario = {"instructions": {"domain": "counters", "reason_for_call": text, "task_instructions": text}}
    return {"id": task_id, "user_scenario": scenario, "ticket": text, "evaluation_criteria": {"actions": [action], **criteria}}


TASKS = [
    _task("inc-a", "Add one to counter a.", {"action_id": "1", "name": "increment", "arguments": {"name": "a", "by": 1}}, reward_basis=["DB"]),
    _task(
        "read-b",
        "What is counter b?",
        {"action_id": "1", "name": "get_counter", "arguments": {"name": "b"}},
        communicate_info=["41"],
        reward_basis=["DB", "COMMUNICATE"],
    ),
]
BROKEN_READ = _task("read-z", "Read counter zz.", {"action_id": "z1", "name": "get_counter", "arguments": {"name": "zz"}}, reward_basis=["DB"])
"""A task whose gold action fails: the gold check refuses the run (or lists it with --allow-broken-tasks)."""


class Loader:
    """Builds the counters table, counting its calls; `fail` makes it raise instead."""

    def __init__(self, fail: BaseException | None = None) -> None:
        self.calls = 0
        self.fail = fail
        self.lock = threading.Lock()

    def __call__(self) -> Mapping[str, Mapping[str, Any]]:
        with self.lock:
            self.calls += 1
        if self.fail is not None:
            raise self.fail
        return {"counters": {k: dict(v) for k, v in COUNTERS.items()}}


@attrs.define(kw_only=True)
class CountersDomain(Domain):
    """Counters on the agent side; the table deferred unless `deferred` is False."""

    name: str = "counters"
    tasks: list[dict[str, Any]] = attrs.field(factory=lambda: list(TASKS))
    loader: Loader = attrs.field(factory=Loader)
    deferred: bool = True

    def load(self, options: DomainOptions) -> DomainData:
        """The tasks and the (deferred) table, in memory."""
        state = State.deferred({"counters": None}, self.loader) if self.deferred else State.from_records({"counters": COUNTERS})
        return DomainData(
            name=self.name,
            tasks=structure_tasks(self.tasks, options.vocabulary, source=self.name),
            policy="Help with counters.",
            solo_policy="Solve the ticket alone.",
            agent_toolkit=CounterTools,
            agent_state=state,
            source="memory",
        )


class CountersPlugin:
    """Registers one counters domain."""

    def __init__(self, domain: CountersDomain | None = None) -> None:
        self.domain = domain or CountersDomain()

    @hookimpl
    def register_domains(self, register: Callable[[Domain], None]) -> None:
        """The counters domain."""
        register(self.domain)
