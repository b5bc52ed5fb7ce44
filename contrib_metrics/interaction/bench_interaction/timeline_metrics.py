"""Turn-taking figures of full-duplex conversations, computed from their `duplex.timeline` event alone.

The panel follows tau2's voice interaction metrics (response latency and rate, yield latency and rate, agent
interruptions per user turn, selectivity for backchannels, vocal tics and speech not meant for the agent): the same
segments, events, windows and tie rules, restated from its definitions. bench adds overlap, silence, the agent's yield
time without a window, interruption counts and latency percentiles. Every latency includes the one-tick delay with
which each side hears the other (tau2's too). Pure functions: a `Timeline` in, figures and events out.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from bench_duplex import Timeline

from bench_kernel import RunView, structure

NO_YIELD_WINDOW_MS = 2000
"""A real barge-in: the agent must fall silent within this long to count as yielding."""
SELECTIVE_YIELD_WINDOW_MS = 1000
"""A backchannel, vocal tic or phrase not meant for the agent: falling silent within this long is an error."""
RESPONSE_WINDOW_MS = 2000
"""A vocal tic or phrase while the agent is silent: the agent starting to speak within this long after it is an error."""
FEW_EVENTS = 10
"""tau2's leaderboard hides rates backed by fewer events; bench shows them, flagged."""

PANEL = (
    "response_latency_mean",
    "yield_latency_mean",
    "response_rate",
    "yield_rate",
    "agent_interruption_rate",
    "selectivity_backchannel",
    "selectivity_vocal_tic",
    "selectivity_non_directed",
)
COUNTS = ("response_total", "yield_total", "backchannel_total", "vocal_tic_total", "non_directed_total", "agent_interrupts_count")
EXTRAS = (
    "duration_s",
    "overlap_seconds",
    "overlap_ratio",
    "silence_seconds",
    "silence_ratio",
    "longest_silence_s",
    "agent_yield_time_s",
    "user_turns",
    "user_interruptions",
    "agent_interruptions",
    "interruption_rate",
    "backchannel_count",
    "response_latency_p50",
    "response_latency_p90",
)
RATE_EVENTS = {
    "response_rate": "response_total",
    "yield_rate": "yield_total",
    "agent_interruption_rate": "response_total",
    "selectivity_backchannel": "backchannel_total",
    "selectivity_vocal_tic": "vocal_tic_total",
    "selectivity_non_directed": "non_directed_total",
}
"""Each panel rate and the count of events behind it (the leaderboard flag)."""


@attrs.frozen(kw_only=True)
class Segment:
    """A maximal run of one side's speech ticks, [start, end), with what the other side was doing around it."""

    side: str
    start: int
    end: int
    other_at_start: bool
    other_at_end: bool
    """The other side speaks on the first tick after the segment (False when the segment runs to the end)."""
    action: str = ""
    """The user's first turn-taking action recorded in the segment ("" when none was)."""
    vocal_tic: bool = False
    non_directed: bool = False

    @property
    def backchannel(self) -> bool:
        """The user meant it as a backchannel."""
        return self.action == "backchannel"


@attrs.frozen(kw_only=True)
class Insert:
    """A speech insert (vocal tic or phrase not meant for the agent) heard while the user was not speaking."""

    kind: str
    tick: int
    """The trigger tick; like tau2, the effect spans that tick only for the windows (its duration is informative)."""
    duration_ms: float | None = None
    text: str = ""


@attrs.frozen(kw_only=True)
class Event:
    """One scored happening: its category, tau2's event type, whether the agent got it right, and a latency."""

    category: str
    """response, yield, backchannel, vocal_tic, non_directed or agent_interruption."""
    type: str
    """tau2's event type: response, no_response, yield, no_yield, <category>_correct, <category>_error, agent_interrupts_user."""
    tick: int
    latency_s: float | None = None


@attrs.frozen(kw_only=True)
class Analysis:
    """One conversation: its segments, scored events and the tick counts bench's own figures come from."""

    tick_ms: int
    ticks: int
    """Ticks analysed (after the stop-chunk rule)."""
    user: list[Segment]
    agent: list[Segment]
    events: list[Event]
    overlap_ticks: int
    silence_ticks: int
    span_ticks: int
    """Ticks from the first speech of either side to the end: the leading wait before anyone speaks is nobody's silence."""
    longest_silence_ticks: int | None
    yield_times_s: list[float]
    """Per real barge-in: seconds from its start to the agent's first silent tick, however long that took."""

    def seconds(self, ticks: int) -> float:
        """Ticks as seconds."""
        return ticks * self.tick_ms / 1000


def load_timeline(data: Mapping[str, Any]) -> Timeline:
    """The Timeline stored as a `duplex.timeline` event's data."""
    return structure(dict(data), Timeline, source="duplex.timeline event")


def played_ticks(timeline: Timeline) -> int:
    """Ticks to analyse: a last tick with user speech after a silent one is the stop chunk, not a turn (tau2's rule)."""
    n = timeline.ticks
    if n >= 2 and timeline.speaking("user", n - 1) and not timeline.speaking("user", n - 2):
        return n - 1
    return n


def speech_flags(runs: Iterable[Sequence[int]], ticks: int) -> list[bool]:
    """Per tick, whether any [start, end) run covers it (runs clipped to the ticks analysed)."""
    flags = [False] * ticks
    for start, end in runs:
        for tick in range(max(start, 0), min(end, ticks)):
            flags[tick] = True
    return flags


def runs_of(flags: Sequence[bool]) -> list[tuple[int, int]]:
    """Maximal [start, end) runs of True (adjacent stored runs merge into one segment)."""
    out: list[tuple[int, int]] = []
    start: int | None = None
    for tick, on in enumerate([*flags, False]):
        if on and start is None:
            start = tick
        elif not on and start is not None:
            out.append((start, tick))
            start = None
    return out


def insert_kinds(effects: Iterable[Mapping[str, Any]]) -> set[str]:
    """The kinds of speech inserts among a tick's effects (other effect types are ignored)."""
    return {str(e.get("kind")) for e in effects if e.get("type") == "speech_insert"}


def segments(side: str, own: Sequence[bool], other: Sequence[bool], timeline: Timeline) -> list[Segment]:
    """One side's speech segments, with the user's action and speech-insert flags."""
    entries = timeline.user if side == "user" else timeline.agent
    out = []
    for start, end in runs_of(own):
        inside = [e for e in entries if start <= e.tick < end]
        kinds = set().union(*(insert_kinds(e.effects) for e in inside))
        # The first action recorded in the run (its first tick's in tau2's data; the loop records none for keep_talking).
        action = next((e.action for e in inside if e.action), "")
        out.append(
            Segment(
                side=side,
                start=start,
                end=end,
                other_at_start=other[start],
                other_at_end=end < len(other) and other[end],
                action=action,
                vocal_tic="vocal_tic" in kinds,
                non_directed="non_directed" in kinds,
            )
        )
    return out


def out_of_turn_inserts(timeline: Timeline, user: Sequence[bool]) -> list[Insert]:
    """Speech inserts on ticks where the user was not speaking (tau2 takes them from non-speech ticks alone)."""
    out = []
    for entry in timeline.user:
        if entry.tick >= len(user) or user[entry.tick]:
            continue
        for effect in entry.effects:
            if effect.get("type") == "speech_insert" and effect.get("kind") in ("vocal_tic", "non_directed"):
                out.append(
                    Insert(kind=str(effect["kind"]), tick=entry.tick, duration_ms=effect.get("duration_ms"), text=str(effect.get("text") or ""))
                )
    return out


def window(ms: int, tick_ms: int) -> int:
    """A window in whole ticks (tau2: int(seconds / tick))."""
    return ms // tick_ms


def response_events(user: Sequence[Segment], agent: Sequence[Segment], tick_ms: int) -> list[Event]:
    """After each user turn that ends with the agent silent: did the agent speak before the user's next such turn?"""
    turns = [s for s in user if not s.backchannel and not s.other_at_end]
    events = []
    for i, turn in enumerate(turns):
        reply = next((a.start for a in agent if a.start >= turn.end), None)
        again = next((u.start for u in turns[i + 1 :] if u.start >= turn.end), None)
        if reply is not None and (again is None or reply <= again):  # a tie goes to the agent
            events.append(Event(category="response", type="response", tick=turn.end, latency_s=(reply - turn.end) * tick_ms / 1000))
        elif again is not None:
            events.append(Event(category="response", type="no_response", tick=turn.end))
    return events


def overlap_kind(segment: Segment) -> str:
    """What a user segment begun over the agent is scored as: backchannel > vocal tic > non-directed > barge-in."""
    if segment.backchannel:
        return "backchannel"
    if segment.vocal_tic:
        return "vocal_tic"
    if segment.non_directed:
        return "non_directed"
    return "yield"


def first_silent(agent: Sequence[bool], start: int, ticks: int) -> int | None:
    """The first tick in [start, start + ticks) where the agent is silent, within the ticks analysed."""
    return next((t for t in range(start, min(start + ticks, len(agent))) if not agent[t]), None)


def overlap_events(user: Sequence[Segment], agent: Sequence[bool], tick_ms: int) -> list[Event]:
    """User segments begun while the agent spoke: a barge-in should make it yield, anything else should not."""
    events = []
    for segment in (s for s in user if s.other_at_start):
        kind = overlap_kind(segment)
        limit = NO_YIELD_WINDOW_MS if kind == "yield" else SELECTIVE_YIELD_WINDOW_MS
        silent = first_silent(agent, segment.start, window(limit, tick_ms))
        if kind == "yield":
            events.append(
                Event(
                    category="yield",
                    type="yield" if silent is not None else "no_yield",
                    tick=segment.start,
                    latency_s=None if silent is None else (silent - segment.start) * tick_ms / 1000,
                )
            )
        else:
            events.append(Event(category=kind, type=f"{kind}_{'error' if silent is not None else 'correct'}", tick=segment.start))
    return events


def silent_agent_events(user: Sequence[Segment], agent: Sequence[Segment], tick_ms: int) -> list[Event]:
    """User segments with a tic or phrase begun while the agent was silent: the agent should not start speaking."""
    events = []
    reach = window(RESPONSE_WINDOW_MS, tick_ms)
    for segment in (s for s in user if not s.other_at_start and (s.vocal_tic or s.non_directed)):
        kind = "vocal_tic" if segment.vocal_tic else "non_directed"
        answered = any(segment.start <= a.start <= segment.end + reach for a in agent)
        events.append(Event(category=kind, type=f"{kind}_{'error' if answered else 'correct'}", tick=segment.start))
    return events


def inserted_events(inserts: Sequence[Insert], agent: Sequence[Segment], tick_ms: int) -> list[Event]:
    """Out-of-turn tics and phrases: the agent should neither stop talking nor start answering because of them."""
    events = []
    for insert in inserts:
        talking = next((a for a in agent if a.start <= insert.tick < a.end), None)
        if talking is not None:
            # tau2 scores only the error here: the agent's segment ending within the window after the insert.
            if (talking.end - insert.tick) * tick_ms <= SELECTIVE_YIELD_WINDOW_MS:
                events.append(Event(category=insert.kind, type=f"{insert.kind}_error", tick=insert.tick))
            continue
        end = insert.tick + 1
        answered = any(insert.tick <= a.start <= end + window(RESPONSE_WINDOW_MS, tick_ms) for a in agent)
        events.append(Event(category=insert.kind, type=f"{insert.kind}_{'error' if answered else 'correct'}", tick=insert.tick))
    return events


def agent_interruption_events(agent: Sequence[Segment]) -> list[Event]:
    """Agent segments begun while the user was speaking."""
    return [Event(category="agent_interruption", type="agent_interrupts_user", tick=a.start) for a in agent if a.other_at_start]


def longest_run(flags: Sequence[bool]) -> int | None:
    """The longest run of True, None when there is none."""
    return max((end - start for start, end in runs_of(flags)), default=None)


def analyse(timeline: Timeline) -> Analysis:
    """Segments, scored events and the tick counts of one conversation."""
    ticks, tick_ms = played_ticks(timeline), timeline.tick_ms
    agent_on, user_on = speech_flags(timeline.agent_speech, ticks), speech_flags(timeline.user_speech, ticks)
    user, agent = segments("user", user_on, agent_on, timeline), segments("agent", agent_on, user_on, timeline)
    events = [
        *response_events(user, agent, tick_ms),
        *overlap_events(user, agent_on, tick_ms),
        *silent_agent_events(user, agent, tick_ms),
        *inserted_events(out_of_turn_inserts(timeline, user_on), agent, tick_ms),
        *agent_interruption_events(agent),
    ]
    first = next((t for t in range(ticks) if agent_on[t] or user_on[t]), ticks)
    silent = [not (agent_on[t] or user_on[t]) for t in range(first, ticks)]
    barge_ins = [s for s in user if s.other_at_start and overlap_kind(s) == "yield"]
    return Analysis(
        tick_ms=tick_ms,
        ticks=ticks,
        user=user,
        agent=agent,
        events=sorted(events, key=lambda e: e.tick),
        overlap_ticks=sum(a and u for a, u in zip(agent_on, user_on, strict=True)),
        silence_ticks=sum(silent),
        span_ticks=ticks - first,
        longest_silence_ticks=longest_run(silent),
        yield_times_s=[(_silent_from(agent_on, s.start) - s.start) * tick_ms / 1000 for s in barge_ins],
    )


def _silent_from(agent: Sequence[bool], start: int) -> int:
    # The conversation's end counts as the agent's silence when it talks to the very last tick.
    return next((t for t in range(start, len(agent)) if not agent[t]), len(agent))


def rate(top: int, bottom: int) -> float | None:
    """top / bottom, None when nothing was counted."""
    return top / bottom if bottom else None


def mean(values: Sequence[float]) -> float | None:
    """The mean, None when empty."""
    return statistics.fmean(values) if values else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-quantile with linear interpolation between the closest ranks (numpy's default), None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    position = (len(ordered) - 1) * q
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def panel(events: Sequence[Event]) -> dict[str, float | None]:
    """tau2's panel and its counts from a pool of events (one conversation's, or a whole run's)."""
    n = {kind: sum(e.type == kind for e in events) for kind in {e.type for e in events}}

    def count(kind: str) -> int:
        return n.get(kind, 0)

    totals = {"response_total": count("response") + count("no_response"), "yield_total": count("yield") + count("no_yield")}
    for category in ("backchannel", "vocal_tic", "non_directed"):
        totals[f"{category}_total"] = count(f"{category}_correct") + count(f"{category}_error")
    latencies = {kind: [e.latency_s for e in events if e.type == kind and e.latency_s is not None] for kind in ("response", "yield")}
    return {
        "response_latency_mean": mean(latencies["response"]),
        "yield_latency_mean": mean(latencies["yield"]),
        "response_rate": rate(count("response"), totals["response_total"]),
        "yield_rate": rate(count("yield"), totals["yield_total"]),
        "agent_interruption_rate": rate(count("agent_interrupts_user"), totals["response_total"]),
        **{f"selectivity_{c}": rate(count(f"{c}_correct"), totals[f"{c}_total"]) for c in ("backchannel", "vocal_tic", "non_directed")},
        **{k: float(v) for k, v in totals.items()},
        "agent_interrupts_count": float(count("agent_interrupts_user")),
    }


def extras(analyses: Sequence[Analysis]) -> dict[str, float | None]:
    """bench's own figures, pooled over one or more conversations (sums of seconds and counts, not means of ratios)."""
    spoke = [a for a in analyses if a.span_ticks]
    span = sum(a.seconds(a.span_ticks) for a in spoke)
    overlap, silence = sum(a.seconds(a.overlap_ticks) for a in spoke), sum(a.seconds(a.silence_ticks) for a in spoke)
    longest = [a.seconds(a.longest_silence_ticks) for a in spoke if a.longest_silence_ticks is not None]
    latencies = [e.latency_s for a in analyses for e in a.events if e.type == "response" and e.latency_s is not None]
    turns = sum(sum(not s.backchannel for s in a.user) for a in analyses)
    by_user = sum(len(a.yield_times_s) for a in analyses)
    by_agent = sum(e.type == "agent_interrupts_user" for a in analyses for e in a.events)
    return {
        "duration_s": sum(a.seconds(a.ticks) for a in analyses),
        "overlap_seconds": overlap if spoke else None,
        "overlap_ratio": rate_s(overlap, span),
        "silence_seconds": silence if spoke else None,
        "silence_ratio": rate_s(silence, span),
        "longest_silence_s": max(longest, default=0.0) if spoke else None,
        "agent_yield_time_s": mean([t for a in analyses for t in a.yield_times_s]),
        "user_turns": float(turns),
        "user_interruptions": float(by_user),
        "agent_interruptions": float(by_agent),
        "interruption_rate": rate(by_user + by_agent, turns),
        "backchannel_count": float(sum(s.backchannel for a in analyses for s in a.user)),
        "response_latency_p50": percentile(latencies, 0.5),
        "response_latency_p90": percentile(latencies, 0.9),
    }


def rate_s(part: float, whole: float) -> float | None:
    """part / whole for seconds, None when whole is 0."""
    return part / whole if whole else None


def conversation_figures(timeline: Timeline) -> dict[str, float | None]:
    """Every figure of one conversation: tau2's panel, its counts and bench's extras."""
    analysis = analyse(timeline)
    return {**panel(analysis.events), **extras([analysis])}


def run_figures(timelines: Sequence[Timeline]) -> dict[str, float | None]:
    """A run's figures: events pooled over its conversations (tau2's panel per experiment) and each per-conversation mean."""
    analyses = [analyse(t) for t in timelines]
    pooled: dict[str, float | None] = {"n_conversations": float(len(analyses)), **panel([e for a in analyses for e in a.events]), **extras(analyses)}
    per = [{**panel(a.events), **extras([a])} for a in analyses]
    for name in (*PANEL, *EXTRAS):
        if name not in COUNTS:
            pooled[f"{name} (mean per conversation)"] = mean([v for p in per if (v := p[name]) is not None])
    return pooled


def few_events(figures: Mapping[str, float | None]) -> list[str]:
    """Panel rates backed by fewer than FEW_EVENTS events (tau2's leaderboard would hide them)."""
    return [name for name, count in RATE_EVENTS.items() if figures.get(name) is not None and (figures.get(count) or 0) < FEW_EVENTS]


def run_timelines(view: RunView) -> list[tuple[dict[str, Any], Timeline]]:
    """The scored agent conversations of a run that have a timeline, each with its row (the last timeline if several)."""
    rows = {r["id"]: r for r in view.conversations()}
    found: dict[str, Timeline] = {}
    for event in view.events(Timeline.kind):
        if event["conversation_id"] in rows:
            found[event["conversation_id"]] = load_timeline(json.loads(event["data_json"]))
    return [(rows[cid], timeline) for cid, timeline in found.items()]
