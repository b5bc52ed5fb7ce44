"""The interaction metric and report section: turn-taking figures of full-duplex conversations, per conversation and per run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
from bench_duplex import Timeline

from bench_kernel import Metric, MetricContext, ReportSection, RunView, Section, SectionTable

from .timeline_metrics import (
    EXTRAS,
    FEW_EVENTS,
    PANEL,
    RATE_EVENTS,
    analyse,
    conversation_figures,
    few_events,
    load_timeline,
    run_figures,
    run_timelines,
)

KIND = Timeline.kind
LATENCY_EVENTS = {"response_latency_mean": "response", "yield_latency_mean": "yield"}


@attrs.define(kw_only=True)
class Interaction(Metric):
    """tau2's interaction panel and bench's overlap, silence and interruption figures for full-duplex conversations."""

    name: str = "interaction"
    description: str = (
        "Full duplex turn-taking: response and yield latency and rate, interruptions, selectivity "
        "(tau2's panel), overlap, silence, yield time, latency percentiles."
    )

    async def score(self, context: MetricContext) -> Mapping[str, float | None]:
        """Every figure of a conversation that has a timeline; nothing for one that does not (it was not full duplex)."""
        stored = context.events.of_kind(KIND)
        if not stored:
            return {}
        return conversation_figures(load_timeline(stored[-1].data))

    def summarize(self, view: RunView) -> dict[str, float | None]:
        """Events pooled over the run's full-duplex conversations (tau2's panel per experiment), and per-conversation means."""
        timelines = [t for _, t in run_timelines(view)]
        return run_figures(timelines) if timelines else {}


MAX_STRIPS = 12
"""Timeline strips a report draws at most (the command `bench interaction-plots` draws them all)."""


@attrs.define(kw_only=True)
class InteractionSection(ReportSection):
    """The run's interaction panel (tau2's names, rates on few events flagged), bench's figures and one row per conversation."""

    name: str = "interaction"
    title: str = "Full-duplex interaction"
    description: str = "tau2's voice interaction panel and bench's turn-taking figures, for runs with full-duplex conversations."

    def build(self, view: RunView) -> Section:
        """The section for one run (a note alone when it has no full-duplex conversation)."""
        found = run_timelines(view)
        if not found:
            return Section(title=self.title, notes=["No full-duplex conversation in this run (no duplex.timeline event)."])
        figures = run_figures([t for _, t in found])
        events = [e for _, t in found for e in analyse(t).events]
        flagged = few_events(figures)
        return Section(
            title=self.title,
            tables=[panel_table(figures, events, len(found)), extras_table(figures), conversations_table(found)],
            notes=notes(flagged),
        )

    def plots(self, view: RunView) -> dict[str, bytes]:
        """The latency histogram and the first conversations' timeline strips (`bench report --plots`, the HTML report)."""
        if not run_timelines(view):
            return {}
        from .plots import render

        charts = render(view)
        strips = [name for name in charts if name.startswith("timeline_")][MAX_STRIPS:]
        return {name: png for name, png in charts.items() if name not in strips}


def panel_table(figures: Mapping[str, float | None], events: list[Any], conversations: int) -> SectionTable:
    """tau2's eight figures with the events behind each; rates backed by fewer than FEW_EVENTS events are flagged."""
    rows = []
    for name in PANEL:
        backing = figures.get(RATE_EVENTS[name]) if name in RATE_EVENTS else float(sum(e.type == LATENCY_EVENTS[name] for e in events))
        flag = f"fewer than {FEW_EVENTS} events" if name in RATE_EVENTS and figures[name] is not None and (backing or 0) < FEW_EVENTS else ""
        rows.append([name, _round(figures[name]), int(backing or 0), flag])
    return SectionTable(
        title=f"tau2's panel (events pooled over {conversations} conversations)", headers=["metric", "value", "events", "note"], rows=rows
    )


def extras_table(figures: Mapping[str, float | None]) -> SectionTable:
    """bench's own figures: pooled over the run, and the mean of the per-conversation values."""
    rows = [[name, _round(figures[name]), _round(figures.get(f"{name} (mean per conversation)"))] for name in EXTRAS]
    return SectionTable(title="bench's figures", headers=["metric", "run (pooled)", "mean per conversation"], rows=rows)


PER_CONVERSATION = (
    "duration_s",
    "response_rate",
    "response_latency_mean",
    "yield_rate",
    "user_interruptions",
    "agent_interruptions",
    "overlap_ratio",
    "silence_ratio",
)


def conversations_table(found: list[tuple[dict[str, Any], Timeline]]) -> SectionTable:
    """One row per full-duplex conversation, with its speech conditions and the effects applied to the user's audio."""
    rows = []
    for row, timeline in sorted(found, key=lambda f: (str(f[0]["task_id"]), f[0]["trial"])):
        figures = conversation_figures(timeline)
        applied = (
            ", ".join([*continuous_effects(timeline.conditions), *(f"{kind} {count}" for kind, count in sorted(effects_applied(timeline).items()))])
            or "none"
        )
        rows.append(
            [row["task_id"], row["trial"], timeline.conditions.get("level", "-"), applied, *(_round(figures[name]) for name in PER_CONVERSATION)]
        )
    return SectionTable(title="Per conversation", headers=["task", "trial", "speech complexity", "effects applied", *PER_CONVERSATION], rows=rows)


def continuous_effects(conditions: Mapping[str, Any]) -> list[str]:
    """The effects that run all along (background noise, telephony) and noise files the conditions could not find."""
    missing = set(conditions.get("missing_files") or [])
    background = conditions.get("background_file")
    out = [f"background noise ({background})"] if background and background not in missing else []
    out += ["telephony"] if conditions.get("telephony") else []
    return out + ([f"{len(missing)} noise files missing"] if missing else [])


def effects_applied(timeline: Timeline) -> dict[str, int]:
    """How many times each effect was applied: once per utterance for per-utterance effects, else once per tick."""
    seen: dict[str, set[Any]] = {}
    for entry in timeline.user:
        for effect in entry.effects:
            kind = str(effect.get("type", "unknown"))
            if kind == "speech_insert":
                kind = f"{effect.get('kind', 'insert')}{'' if effect.get('in_turn') else ' (out of turn)'}"
            per_utterance = kind in ("muffling", "vocal_tic") and entry.utterance is not None
            seen.setdefault(kind, set()).add(entry.utterance if per_utterance else entry.tick)
    return {kind: len(marks) for kind, marks in seen.items()}


def notes(flagged: list[str]) -> list[str]:
    """What a reader needs to read the figures right."""
    out = [
        "Latencies in seconds include the one-tick delay with which each side hears the other (as tau2's do).",
        "overlap/silence ratios are shares of the time from the first speech to the end; the wait before anyone speaks is left out.",
    ]
    if flagged:
        out.append(f"Backed by fewer than {FEW_EVENTS} events (tau2's leaderboard hides these): {', '.join(flagged)}.")
    return out


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
