"""realtime_asr_wer on constructed timelines: pairing by ticks, merges, splits, misses and noise."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import pytest
from bench_duplex import Timeline, TimelineEntry, edit_distance
from bench_duplex import speech_words as words
from bench_realtime.cascade.wer import RealtimeAsrWer, conversation_wer

from bench_kernel import Event, EventLog


def said(*utterances: tuple[str, int, str]) -> Timeline:
    """A timeline whose user says each (id, first tick, text), two characters a tick."""
    entries = []
    for uid, first, text in utterances:
        entries += [TimelineEntry(tick=first + i, text=text[2 * i : 2 * i + 2], utterance=uid) for i in range((len(text) + 1) // 2)]
    return Timeline(ticks=200, user=entries, conditions={"complexity": "control"})


def heard(tick: int, text: str, **span: int) -> dict[str, Any]:
    return {"tick": tick, "text": text, **span}


def test_words_and_distance() -> None:
    assert words("It's 4 o'clock, Mr. Smith! ###STOP###") == ["its", "4", "oclock", "mr", "smith"]
    assert words("one two 3") == ["1", "2", "3"]
    assert edit_distance(["a", "b", "c"], ["a", "x", "c", "d"]) == 2
    assert edit_distance([], ["a"]) == 1


def test_each_utterance_pairs_with_the_transcript_that_arrives_after_it() -> None:
    timeline = said(("u1", 0, "I want to cancel my order."), ("u2", 40, "The order is five."))
    value, pairs = conversation_wer(timeline, [heard(20, "I want to cancel my order"), heard(54, "the order is nine")])
    assert [p.meant for p in pairs] == ["I want to cancel my order.", "The order is five."]
    assert [p.errors for p in pairs] == [0, 1]
    assert value == pytest.approx(1 / 10)


def test_spans_given_by_the_event_win_over_arrival_ticks() -> None:
    timeline = said(("u1", 0, "hello there"), ("u2", 30, "goodbye now"))
    value, pairs = conversation_wer(
        timeline, [heard(99, "goodbye now", start_tick=30, end_tick=36), heard(99, "hello there", start_tick=0, end_tick=6)]
    )
    assert value == 0.0 and [p.heard for p in pairs] == ["hello there", "goodbye now"]


def test_a_merge_a_miss_and_noise() -> None:
    # Two utterances heard as one transcript cost nothing; a missed one is all deletions; noise heard is insertions.
    timeline = said(("u1", 0, "yes"), ("u2", 3, "that is right"), ("u3", 60, "thanks a lot"))
    events = [heard(12, "yes that is right"), heard(40, "uh", start_tick=35, end_tick=38)]
    value, pairs = conversation_wer(timeline, events)
    assert [(p.meant, p.heard, p.errors) for p in pairs] == [("yes that is right", "yes that is right", 0), ("", "uh", 1), ("thanks a lot", "", 3)]
    assert value == pytest.approx(4 / 7)


def test_an_utterance_the_call_ended_on_is_not_counted_as_missed() -> None:
    timeline = said(("u1", 0, "hello there"), ("u2", 190, "bye now"))
    assert conversation_wer(timeline, [heard(8, "hello there")])[0] == 0.0
    assert conversation_wer(attrs.evolve(timeline, ticks=240), [heard(8, "hello there")])[0] == 0.5


def test_a_split_utterance_is_scored_whole() -> None:
    timeline = said(("u1", 0, "my number is four one five two"))
    value, _ = conversation_wer(timeline, [heard(10, "my number is", start_tick=0, end_tick=6), heard(18, "4 1 5 2", start_tick=8, end_tick=14)])
    assert value == 0.0


def test_the_metric_reads_the_events_and_is_none_without_transcripts() -> None:
    events = EventLog()
    events.emit(said(("u1", 0, "hello there")), source="duplex")
    context: Any = type("Context", (), {"events": events})()
    assert asyncio.run(RealtimeAsrWer().score(context)).values == {"": None}
    events.emit(Event(kind="realtime.transcript", data={"tick": 9, "text": "hello bear"}), source="realtime")
    result = asyncio.run(RealtimeAsrWer().score(context))
    assert result.values == {"": 0.5}
    assert result.details[""]["complexity"] == "control"
    assert "wer" in RealtimeAsrWer().name
