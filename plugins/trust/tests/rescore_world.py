"""The world test_rescore.py runs and rescores: a toy dual-control domain and the components a test changes in between.

Installed for a test as the plugin `rescore-toy` (test_rescore.py writes its dist-info, as pip would), so `bench run`,
`bench rescore` and `bench report` load it as they load any installed plugin. The domain: counters on the agent's
side, a lamp on the user's. The components: an oracle that counts its sessions (and cannot start on one task, an
infrastructure error), a judge that counts its verdicts, a metric and a reward component whose settings a test changes
between a run and its rescore (`WORLD.metric`, `WORLD.component`, `WORLD.tasks`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from bench_kernel import (
    AgentSession,
    Check,
    ComponentScore,
    ConversationSetup,
    Domain,
    DomainData,
    DomainOptions,
    Judge,
    JudgeRequest,
    Metric,
    MetricContext,
    MetricResult,
    OracleAgent,
    RewardComponent,
    RewardContext,
    State,
    ToolError,
    ToolKind,
    Toolkit,
    hookimpl,
    structure_tasks,
    tool,
)

PLUGIN = "rescore-toy"
CALLS = {"sessions": 0, "verdicts": 0}
BROKEN = "read-b"
"""The task whose conversations end in an infrastructure error (the agent's set-up fails)."""


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


def _scenario(text: str) -> dict[str, Any]:
    return {"instructions": {"domain": "toy", "reason_for_call": text, "task_instructions": text}}


TASKS: list[dict[str, Any]] = [
    {
        "id": "inc-a",
        "user_scenario": _scenario("Add one to counter a."),
        "ticket": "Add one to counter a.",
        "evaluation_criteria": {"actions": [{"action_id": "1", "name": "increment", "arguments": {"name": "a", "by": 1}}], "reward_basis": ["DB"]},
    },
    {
        "id": BROKEN,
        "user_scenario": _scenario("What is counter b?"),
        "ticket": "Tell the value of counter b.",
        "evaluation_criteria": {
            "actions": [{"action_id": "1", "name": "get_counter", "arguments": {"name": "b"}}],
            "communicate_info": ["41"],
            "reward_basis": ["DB", "COMMUNICATE"],
        },
    },
    {
        "id": "lamp",
        "user_scenario": _scenario("My lamp is off."),
        "ticket": "Get the user's lamp on.",
        "evaluation_criteria": {
            "actions": [{"action_id": "1", "requestor": "user", "name": "switch_lamp", "arguments": {"on": True}}],
            "env_assertions": [{"env_type": "user", "func_name": "lamp_is", "arguments": {"on": True}}],
            "reward_basis": ["ENV_ASSERTION"],
        },
    },
    {
        "id": "inc-a-brief",
        "user_scenario": _scenario("Add one to counter a."),
        "evaluation_criteria": {
            "actions": [{"action_id": "1", "name": "increment", "arguments": {"name": "a", "by": 1}}],
            "reward_basis": ["DB", "BREVITY"],
        },
    },
    {
        "id": "polite",
        "user_scenario": _scenario("Add one to counter a."),
        "evaluation_criteria": {
            "actions": [{"action_id": "1", "name": "increment", "arguments": {"name": "a", "by": 1}}],
            "nl_assertions": ["The agent was polite."],
            "reward_basis": ["DB", "NL_ASSERTION"],
        },
    },
]


@attrs.define(kw_only=True)
class ToyDomain(Domain):
    """Counters on the agent side, a lamp on the user side."""

    name: str = "toy"
    tasks: list[dict[str, Any]]

    def load(self, options: DomainOptions) -> DomainData:
        """Build the data in memory."""
        return DomainData(
            name=self.name,
            tasks=structure_tasks(self.tasks, options.vocabulary, source="toy"),
            policy="Help with counters.",
            solo_policy="Solve the ticket alone.",
            agent_toolkit=CounterTools,
            agent_state=State.from_records({"counters": {"a": {"value": 0}, "b": {"value": 41}}}),
            user_toolkit=LampTools,
            user_state=State.from_records({"device": {"lamp": {"on": False}}}),
            source="memory",
        )


@attrs.define(kw_only=True)
class CountingOracle(OracleAgent):
    """The oracle, counting its sessions; it cannot start on one task (an infrastructure error)."""

    name: str = "counting-oracle"

    def start(self, setup: ConversationSetup) -> AgentSession:
        """Count the session; fail the broken task's."""
        CALLS["sessions"] += 1
        if setup.task.id == BROKEN:
            raise RuntimeError("the agent's service is down")
        return super().start(setup)


@attrs.define(kw_only=True)
class CountingJudge(Judge):
    """Every assertion met, every verdict counted."""

    name: str = "counting-judge"

    async def judge(self, request: JudgeRequest) -> list[Check]:
        """Met, with a detail naming the count."""
        CALLS["verdicts"] += 1
        return [Check(subject=a, met=True, detail=f"verdict {CALLS['verdicts']}") for a in request.assertions]


@attrs.frozen(kw_only=True)
class LengthSeen:
    """What the metric saw."""

    kind = "length.seen"
    count: int


@attrs.define(kw_only=True)
class Length(Metric):
    """Messages per conversation, times a factor; it emits an event too (produced anew by a rescore, never doubled)."""

    name: str = "length"
    factor: float = 1.0

    async def score(self, context: MetricContext) -> MetricResult:
        """The count, and the tool results among the messages."""
        context.emit(LengthSeen(count=len(context.messages)))
        tools = sum(m.role == "tool" for m in context.messages)
        return MetricResult(values={"": len(context.messages) * self.factor, "tools": tools}, details={"": {"factor": self.factor}})


@attrs.define(kw_only=True)
class Brevity(RewardComponent):
    """1 when the conversation has at most `limit` messages."""

    name: str = "BREVITY"
    limit: int = 100

    async def score(self, context: RewardContext) -> ComponentScore:
        """Count the messages."""
        met = len(context.messages) <= self.limit
        return ComponentScore(
            component=self.name, score=1.0 if met else 0.0, checks=[Check(subject="brevity", met=met, detail=f"{len(context.messages)} messages")]
        )


@attrs.define
class World:
    """The plugin: the toy domain with these tasks, the counting oracle and judge, the metric and the component."""

    tasks: list[dict[str, Any]] = attrs.field(factory=lambda: list(TASKS))
    metric: Length = attrs.field(factory=Length)
    component: Brevity = attrs.field(factory=Brevity)

    def reset(self) -> None:
        """Back to the defaults, counters at zero."""
        self.tasks, self.metric, self.component = list(TASKS), Length(), Brevity()
        CALLS.update(sessions=0, verdicts=0)

    @hookimpl
    def register_domains(self, register: Callable[..., None]) -> None:
        """The toy domain."""
        register(ToyDomain(tasks=list(self.tasks)))

    @hookimpl
    def register_agents(self, register: Callable[..., None]) -> None:
        """The oracle."""
        register(CountingOracle())

    @hookimpl
    def register_judges(self, register: Callable[..., None]) -> None:
        """The judge."""
        register(CountingJudge())

    @hookimpl
    def register_metrics(self, register: Callable[..., None]) -> None:
        """The metric."""
        register(self.metric)

    @hookimpl
    def register_reward_components(self, register: Callable[..., None]) -> None:
        """The component."""
        register(self.component)


WORLD = World()
"""What the entry point `rescore-toy` loads."""
