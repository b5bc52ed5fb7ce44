"""`realtime_asr_wer`: how well a realtime agent heard the user, as word error rate over a full-duplex conversation.

The reference is what the user said: the user's `TimelineEntry` texts of the conversation's `duplex.timeline` event,
grouped by utterance id. The hypothesis is what the agent's recogniser reported: its `realtime.transcript` events
(one per input transcription; the voice-cascade reports every ASR result this way). A transcript is paired with the
utterances whose ticks it covers: its own span when the event gives one (`start_tick`/`end_tick`, the user's ticks),
else the ticks since the previous transcript arrived, up to its own arrival (`tick`). Utterances and transcripts that
overlap are scored together (a recogniser may join two utterances, or split one), so a merge or a split costs only
its real word errors. An utterance nothing was heard of counts as deleted, a transcript of no utterance (noise) as
inserted, except an utterance ending in the call's last `END_GRACE_S` seconds (the call ended before any recogniser
could report it). The value is the conversation's total edit distance over its reference words; `details` has every
pair.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs
from bench_duplex import Timeline, edit_distance, speech_words

from bench_kernel import Metric, MetricContext, MetricResult, RunView

TRANSCRIPT_EVENT = "realtime.transcript"
END_GRACE_S = 2.0
"""An unheard utterance ending this close to the call's end is left out (a server VAD needs its silence to commit)."""


@attrs.frozen(kw_only=True)
class Span:
    """A text over a range of user ticks [start, end] (inclusive)."""

    start: int
    end: int
    text: str

    def overlaps(self, other: Span) -> bool:
        """True when the two ranges share a tick."""
        return self.start <= other.end and other.start <= self.end


def utterances(timeline: Timeline) -> list[Span]:
    """The user's utterances: texts of the timeline's user entries by utterance id, in order of their first tick."""
    grouped: dict[str, list[tuple[int, str]]] = {}
    for entry in timeline.user:
        if entry.utterance is not None and entry.text:
            grouped.setdefault(entry.utterance, []).append((entry.tick, entry.text))
    spans = [Span(start=parts[0][0], end=parts[-1][0], text="".join(t for _, t in parts).strip()) for parts in grouped.values()]
    return sorted((s for s in spans if speech_words(s.text)), key=lambda s: (s.start, s.end))


def transcripts(events: Iterable[Mapping[str, Any]]) -> list[Span]:
    """The recogniser's transcripts as spans of user ticks (see the module docstring for how a span is found)."""
    found: list[Span] = []
    previous_arrival = 0
    for data in events:
        if data.get("side", "user") != "user":
            continue
        text = str(data.get("text", data.get("transcript", "")) or "")
        arrival = int(data.get("tick", previous_arrival))
        start, end = data.get("start_tick"), data.get("end_tick")
        if isinstance(start, int) and isinstance(end, int):
            found.append(Span(start=start, end=max(start, end), text=text))
        else:
            found.append(Span(start=previous_arrival, end=max(previous_arrival, arrival), text=text))
        previous_arrival = arrival
    return found


@attrs.frozen(kw_only=True)
class Pair:
    """Utterances and the transcripts heard over their ticks, scored together."""

    start: int
    end: int
    meant: str
    heard: str
    errors: int
    reference_words: int


def pairs(said: Sequence[Span], heard: Sequence[Span]) -> list[Pair]:
    """Group utterances and transcripts that overlap (connected components), each group scored as one."""
    parent = list(range(len(said) + len(heard)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, utterance in enumerate(said):
        for j, transcript in enumerate(heard):
            if utterance.overlaps(transcript):
                parent[root(len(said) + j)] = root(i)
    groups: dict[int, tuple[list[Span], list[Span]]] = {}
    for i, utterance in enumerate(said):
        groups.setdefault(root(i), ([], []))[0].append(utterance)
    for j, transcript in enumerate(heard):
        groups.setdefault(root(len(said) + j), ([], []))[1].append(transcript)
    return sorted((_pair(meant, got) for meant, got in groups.values()), key=lambda p: (p.start, p.end))


def _pair(meant: list[Span], heard: list[Span]) -> Pair:
    reference = " ".join(s.text for s in meant)
    hypothesis = " ".join(s.text for s in heard if s.text)
    spans = meant or heard
    return Pair(
        start=min(s.start for s in spans),
        end=max(s.end for s in spans),
        meant=reference,
        heard=hypothesis,
        errors=edit_distance(speech_words(reference), speech_words(hypothesis)),
        reference_words=len(speech_words(reference)),
    )


def conversation_wer(timeline: Timeline, heard: Iterable[Mapping[str, Any]]) -> tuple[float | None, list[Pair]]:
    """The conversation's word error rate (None without reference words) and its scored pairs."""
    grace = int(END_GRACE_S * 1000 / timeline.tick_ms)
    found = [p for p in pairs(utterances(timeline), transcripts(heard)) if p.heard or p.end < timeline.ticks - grace]
    total = sum(p.reference_words for p in found)
    return (sum(p.errors for p in found) / total if total else None), found


@attrs.define(kw_only=True)
class RealtimeAsrWer(Metric):
    """Word error rate of what a realtime agent's recogniser heard of the user (full-duplex runs)."""

    name: str = "realtime_asr_wer"
    description: str = (
        "Word error rate of a realtime agent's input transcripts against what the user said, utterance "
        "by utterance over the same ticks (full-duplex runs; the voice-cascade's ASR)."
    )

    async def score(self, context: MetricContext) -> MetricResult:
        """The conversation's WER, with every scored pair and the speech complexity in details."""
        timelines = context.events.of_kind(Timeline.kind)
        heard = [e.data for e in context.events.of_kind(TRANSCRIPT_EVENT)]
        if not timelines or not heard:
            return MetricResult(values={"": None})
        timeline = timelines[-1].as_type(Timeline)
        value, found = conversation_wer(timeline, heard)
        details = {"complexity": timeline.conditions.get("complexity"), "pairs": [attrs.asdict(p) for p in found]}
        return MetricResult(values={"": value}, details={"": details})

    def summarize(self, view: RunView) -> dict[str, float | None]:
        """Mean and worst conversation WER."""
        values = [row["value"] for row in view.values(self.name, plugin=view.plugin) if row["value"] is not None]
        if not values:
            return {}
        return {"mean": statistics.fmean(values), "max": max(values)}
