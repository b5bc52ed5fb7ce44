"""An example plugin for `bench report`: a report section and a metric with run-level figures.

- `RewardPerTurn`: a metric whose name starts with "reward" (the report keeps it: plugin metrics are
  chosen by plugin, never by name) scoring each conversation's reward per agent message. Its
  `summarize(view)` gives the run's median, its worst case and the mean per persona.
- `TurnsSection`: one row per agent conversation (task, persona, agent messages, the metric's value)
  with a line of markdown text and a note, read through the `RunView`.

Everything comes from `bench_kernel` alone, as a third party's plugin would.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping
from typing import Any

import attrs

import bench_kernel
from bench_kernel import Metric, MetricContext, ReportSection, RunView, Section, SectionTable


@attrs.define(kw_only=True)
class RewardPerTurn(Metric):
    """Reward divided by the agent's messages: how much each agent turn earned."""

    name: str = "reward_per_turn"

    async def score(self, context: MetricContext) -> Mapping[str, float | None]:
        """One value per conversation; None when the agent never spoke."""
        turns = sum(m.role == "assistant" for m in context.messages)
        return {"": context.result.reward / turns if turns else None}

    def summarize(self, view: RunView) -> Mapping[str, float | None]:
        """The median, the worst conversation and the mean per persona."""
        values = {v["conversation_id"]: v["value"] for v in view.values(self.name, plugin=view.plugin) if v["value"] is not None}
        by_persona: dict[str, list[float]] = defaultdict(list)
        for convo in view.conversations():
            if convo["id"] in values:
                by_persona[convo["attributes"].get("persona", "(none)")].append(values[convo["id"]])
        figures: dict[str, float | None] = {
            "median": statistics.median(values.values()) if values else None,
            "worst": min(values.values(), default=None),
        }
        figures |= {f"mean for persona {p}": round(statistics.fmean(found), 6) for p, found in sorted(by_persona.items())}
        return figures


@attrs.define(kw_only=True)
class TurnsSection(ReportSection):
    """Agent messages and reward per turn, per conversation."""

    name: str = "turns"
    title: str = "Agent turns per conversation"
    description: str = "How many messages the agent needed, and what each earned."

    def build(self, view: RunView) -> Section:
        """A table over the agent conversations, from the store."""
        values = {v["conversation_id"]: v["value"] for v in view.values("reward_per_turn", plugin=view.plugin)}
        rows: list[list[Any]] = []
        for convo in view.conversations():
            turns = sum(m["role"] == "assistant" for m in view.messages(convo["id"]))
            rows.append([convo["task_id"], convo["trial"], convo["attributes"].get("persona", "(none)"), turns, values.get(convo["id"])])
        text = f"{len(rows)} agent conversations of run `{view.run.id}`.\n\nA turn is one agent message, tool calls included."
        return Section(
            title=self.title,
            text=text,
            tables=[SectionTable(headers=["task", "trial", "persona", "agent messages", "reward per turn"], rows=rows)],
            notes=["reward per turn: the conversation's reward over its agent messages"],
        )


class ReportDemo:
    """Registers the section and the metric (a plugin object, as tests pass with `extra=`)."""

    @bench_kernel.hookimpl
    def register_metrics(self, register: Callable[[Metric], None]) -> None:
        """The reward-per-turn metric."""
        register(RewardPerTurn())

    @bench_kernel.hookimpl
    def register_report_sections(self, register: Callable[[ReportSection], None]) -> None:
        """The turns section."""
        register(TurnsSection())


class MetricOnly:
    """Registers only the metric: a second plugin with a metric of the same name."""

    @bench_kernel.hookimpl
    def register_metrics(self, register: Callable[[Metric], None]) -> None:
        """The reward-per-turn metric, under this plugin's name."""
        register(RewardPerTurn())
