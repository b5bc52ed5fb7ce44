"""Example plugins that pin the kernel's seams: each is the smallest real use of one seam.

- `ShiftingUser`: a user simulator that emits typed events (a goal shift) while it talks.
- `UppercaseChannel`: a channel that transforms what the agent hears.
- `TurnLedger`: a context metric that reads events, the final state and the gold replay, calls a
  model through its own role and writes rows to its own table (registered by `register_migrations`).
- `WeightedSum`: a combination rule with parameters, named by task files.
- `Goals`: a task extension owning a plugin-specific task field.
- `ShiftSection`: a report section computed from the store (events and the metric's own table);
  `TurnLedger.summarize` gives the metric's run-level figures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
from sqlite_utils import Migrations

import bench_kernel
from bench_kernel import (
    AssistantMessage,
    Channel,
    ChannelSession,
    ChatRequest,
    CombinationRule,
    ComponentScore,
    ConfigError,
    ConversationSetup,
    GoalShift,
    Message,
    Metric,
    MetricContext,
    MetricResult,
    ReportSection,
    RewardInfo,
    RunView,
    ScriptedUser,
    Section,
    SectionTable,
    TaskExtension,
    TerminationReason,
    UserMessage,
    UserSession,
    UserSimulator,
)


@attrs.frozen(kw_only=True)
class Goals:
    """A plugin-owned task field: ordered goals."""

    goals: list[str]


GOALS = TaskExtension(name="seam-goals", field="seam_goals", parent="user_scenario", type=Goals, description="Ordered goals (example extension).")


@attrs.define
class ShiftingSession(UserSession):
    """Wraps the scripted user and records a goal shift before its second message."""

    setup: ConversationSetup
    inner: UserSession
    spoken: int = 0

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        """The scripted user's message; the second one is announced by a GoalShift event."""
        message = await self.inner.respond(incoming)
        self.spoken += 1
        goals = self.setup.task.extension("seam-goals")
        if self.spoken == 2 and goals is not None and len(goals.goals) > 1:
            self.setup.events.emit(
                GoalShift(goal_index=1, goal=goals.goals[1], previous_goal=goals.goals[0], reason="first goal done"), source="shifting-user"
            )
        return message

    def is_stop(self, message: UserMessage) -> bool:
        """As the scripted user."""
        return self.inner.is_stop(message)


@attrs.define(kw_only=True)
class ShiftingUser(UserSimulator):
    """The scripted user, emitting a goal-shift event."""

    name: str = "shifting"

    def start(self, setup: ConversationSetup) -> UserSession:
        """A scripted session wrapped to emit events."""
        return ShiftingSession(setup, ScriptedUser().start(setup))


class UppercaseSession(ChannelSession):
    """The agent hears every user text in capitals."""

    async def to_agent(self, message: UserMessage) -> UserMessage:
        """Upper-case the user's text."""
        return attrs.evolve(message, content=message.content.upper()) if message.content else message

    async def to_user(self, message: AssistantMessage) -> AssistantMessage:
        """The user hears the agent unchanged."""
        return message


@attrs.define(kw_only=True)
class UppercaseChannel(Channel):
    """A channel that shouts."""

    name: str = "uppercase"

    def start(self, setup: ConversationSetup) -> ChannelSession:
        """A new shouting session."""
        return UppercaseSession()


migrations = Migrations("bench-seams")


@migrations(name="m001_turn_ledger")
def m001_turn_ledger(db: Any) -> None:
    db["seam_turns"].create({"conversation_id": str, "message_index": int, "role": str, "heard": str}, pk=("conversation_id", "message_index"))


@attrs.define(kw_only=True)
class TurnLedger(Metric):
    """Counts shifts and transcripts, checks the final state against gold, asks a model, writes its own rows."""

    name: str = "turn-ledger"
    model_roles: tuple[str, ...] = ()
    table: str = "seam_turns"

    async def score(self, context: MetricContext) -> MetricResult:
        """Per conversation: shifts, channel transcripts, gold state reached and (with a role) a model's verdict."""
        shifts = context.events.typed(GoalShift)
        transcripts = context.events.of_kind("channel.transcript")
        heard = {e.message_index: e.data["heard"] for e in transcripts}
        for index, message in enumerate(context.messages):
            if message.role in ("user", "assistant"):
                context.write(
                    self.table,
                    {"conversation_id": context.result.conversation_id, "message_index": index, "role": message.role, "heard": heard.get(index)},
                )
        values: dict[str, float | None] = {
            "shifts": len(shifts),
            "first_shift_at": shifts[0][0].message_index if shifts else None,
            "transcripts": len(transcripts),
            "gold_state": float(context.final_env.hashes()[0] == context.gold.agent_hash),
        }
        if context.role is not None:
            reply = await context.complete(ChatRequest(messages=[{"role": "user", "content": "verdict?"}]))
            values["model_says_yes"] = float((reply.content or "").strip().lower().startswith("yes"))
        return MetricResult(values=values, details={"shifts": {"goals": [s.goal for _, s in shifts]}})

    def summarize(self, view: RunView) -> Mapping[str, float | None]:
        """Run-level: conversations with a shift, and the latest first shift (a worst case)."""
        firsts = [v["value"] for v in view.values(f"{self.name}.first_shift_at") if v["value"] is not None]
        return {"conversations_with_a_shift": float(len(firsts)), "latest_first_shift": max(firsts, default=None)}


@attrs.define(kw_only=True)
class ShiftSection(ReportSection):
    """Per task: shifts recorded and participant turns in the metric's own table."""

    name: str = "shifts"
    title: str = "Goal shifts per task"

    def build(self, view: RunView) -> Section:
        """One row per task, from the events and the plugin's own table."""
        rows = []
        for convo in view.conversations():
            shifts = view.query(
                "select count(*) as n from conversation_events where conversation_id = ? and kind = ?", [convo["id"], GoalShift.kind]
            )[0]["n"]
            turns = view.query("select count(*) as n from seam_turns where conversation_id = ?", [convo["id"]])[0]["n"]
            rows.append([convo["task_id"], convo["trial"], shifts, turns])
        return Section(
            title=self.title,
            tables=[SectionTable(headers=["task", "trial", "shifts", "turns"], rows=rows)],
            notes=["turns: participant messages in the metric's own table"],
        )


@attrs.define(kw_only=True)
class WeightedSum(CombinationRule):
    """A weighted sum of the basis components (weights renormalised over those computed), with no stop rule."""

    name: str = "weighted-sum"

    def validate(self, params: Mapping[str, Any], basis: Sequence[str]) -> None:
        """Every weight names a basis component and is a non-negative number."""
        weights = params.get("weights")
        if not isinstance(weights, dict) or not weights:
            raise ConfigError("weighted-sum needs params.weights: {component: weight}")
        stray = [k for k in weights if k not in basis]
        if stray:
            raise ConfigError(f"weighted-sum weights name components not in the basis: {', '.join(stray)}")

    def combine(
        self, basis: Sequence[str], components: Sequence[ComponentScore], termination: TerminationReason, params: Mapping[str, Any]
    ) -> RewardInfo:
        """sum(w * score) / sum(w) over the basis components that were computed."""
        weights: dict[str, float] = params["weights"]
        scored = {c.component: c.score for c in components if c.component in weights and c.score is not None}
        total = sum(weights[name] for name in scored)
        reward = sum(weights[name] * value for name, value in scored.items()) / total if total else 0.0
        return RewardInfo(reward=reward, reward_basis=list(basis), components=list(components), rule=self.name)


class SeamPlugin:
    """Registers every example above (a plugin object, as a test would pass with `extra=`)."""

    def __init__(self, metric: TurnLedger | None = None) -> None:
        self.metric = metric or TurnLedger()

    @bench_kernel.hookimpl
    def register_user_simulators(self, register: Callable[[UserSimulator], None]) -> None:
        """The event-emitting user."""
        register(ShiftingUser())

    @bench_kernel.hookimpl
    def register_channels(self, register: Callable[[Channel], None]) -> None:
        """The uppercase channel."""
        register(UppercaseChannel())

    @bench_kernel.hookimpl
    def register_metrics(self, register: Callable[[Metric], None]) -> None:
        """The context metric."""
        register(self.metric)

    @bench_kernel.hookimpl
    def register_combination_rules(self, register: Callable[[CombinationRule], None]) -> None:
        """The weighted sum."""
        register(WeightedSum())

    @bench_kernel.hookimpl
    def register_task_extensions(self, register: Callable[[TaskExtension], None]) -> None:
        """The goals field."""
        register(GOALS)

    @bench_kernel.hookimpl
    def register_report_sections(self, register: Callable[[ReportSection], None]) -> None:
        """The shifts section."""
        register(ShiftSection())

    @bench_kernel.hookimpl
    def register_migrations(self, register: Callable[[Migrations], None]) -> None:
        """The metric's own table."""
        register(migrations)


class Registers:
    """A plugin object registering the agents, metrics, models and channels given to it (for tests' `extra=`)."""

    def __init__(
        self, agents: Sequence[Any] = (), metrics: Sequence[Metric] = (), models: Sequence[Any] = (), channels: Sequence[Channel] = ()
    ) -> None:
        self.agents, self.metrics, self.models, self.channels = agents, metrics, models, channels

    @bench_kernel.hookimpl
    def register_agents(self, register: Callable[[Any], None]) -> None:
        """The agents given."""
        for agent in self.agents:
            register(agent)

    @bench_kernel.hookimpl
    def register_metrics(self, register: Callable[[Metric], None]) -> None:
        """The metrics given."""
        for metric in self.metrics:
            register(metric)

    @bench_kernel.hookimpl
    def register_models(self, register: Callable[[Any], None]) -> None:
        """The model backends given."""
        for model in self.models:
            register(model)

    @bench_kernel.hookimpl
    def register_channels(self, register: Callable[[Channel], None]) -> None:
        """The channels given."""
        for channel in self.channels:
            register(channel)
