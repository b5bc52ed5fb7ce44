"""Full-duplex conversations in the viewer: the stored timeline read back, its strip (inline SVG), its recording.

Everything here is plain data from a read-only store; the templates draw it (no JavaScript, nothing from the network).
"""

from __future__ import annotations

import json
import wave
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import attrs
from bench_duplex import SpeechSegment, Timeline, speech_segments

from bench_kernel import BenchError, Store, structure

WIDTH = 1000
"""The strip's width in SVG units; the SVG scales to the page width, so a tick of a 20-minute call is 1/6 unit."""
LEFT, RIGHT = 52, 8
LANES = {"user": (8, 26), "agent": (40, 26), "tools": (72, 14)}
"""Each lane's top and height in SVG units."""
AXIS_Y = 94
HEIGHT = 112
MIN_RUN = 0.8
"""Narrowest drawn run: a one-tick backchannel in a long call stays visible."""
AXIS_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800)
"""Seconds between axis labels, the smallest that keeps at most a dozen labels."""
MAX_TITLE = 600
WAV_MAGIC = (b"RIFF", b"WAVE")


class NoRecording(BenchError):
    """The conversation has no kept recording to serve (none kept, the file is gone, or it is not a WAV file)."""


def load_timeline(store: Store, conversation_id: str) -> Timeline | None:
    """The conversation's stored `duplex.timeline`, or None for a turn-based conversation."""
    row = store.db.execute(
        "select data_json from conversation_events where conversation_id = ? and kind = ? order by idx limit 1", [conversation_id, Timeline.kind]
    ).fetchone()
    if row is None:
        return None
    return structure(json.loads(row[0] or "{}"), Timeline, source=f"{Timeline.kind} event of {conversation_id}")


def seconds(tick: int, tick_ms: int) -> str:
    """A tick as seconds on the strip and in the event list (one decimal)."""
    return f"{tick * tick_ms / 1000:.1f}"


def summary(data: dict[str, Any]) -> str:
    """The one line a `duplex.timeline` event shows instead of its (bulky) data."""
    tick_ms, ticks = int(data.get("tick_ms") or 0), int(data.get("ticks") or 0)
    tools = data.get("tools") or []
    audio = f"audio kept ({Path(data['audio_file']).name})" if data.get("audio_file") else "audio not kept"
    return (
        f"{seconds(ticks, tick_ms)} s ({ticks} ticks of {tick_ms} ms), speech runs: "
        f"user {len(data.get('user_speech') or [])}, agent {len(data.get('agent_speech') or [])}, "
        f"{len(tools)} tool call{'' if len(tools) == 1 else 's'}, {audio}"
    )


def speech_line(data: dict[str, Any], tick_ms: int) -> str:
    """A `duplex.speech` event as one line: "user 5.2-21.0 s: text" and its flags."""
    flags = [name for name in ("backchannel", "interrupted", "overlapped") if data.get(name)]
    start, end = int(data.get("start_tick") or 0), int(data.get("end_tick") or 0)
    line = f"{data.get('side', '?')} {seconds(start, tick_ms)}-{seconds(end, tick_ms)} s: {data.get('text') or '(no text)'}"
    return line + (f" ({', '.join(flags)})" if flags else "")


def page(timeline: Timeline, conversation_id: str, db_path: Path | None) -> dict[str, Any]:
    """What the conversation page shows of a full-duplex conversation: the strip, the recording (or why not), the conditions."""
    url, note = None, None
    if timeline.audio_file:
        try:
            note = length_note(timeline, recording(timeline, db_path))
            url = audio_url(conversation_id)
        except NoRecording as exc:
            note = str(exc)
    return {
        "strip": strip(timeline),
        "audio_url": url,
        "audio_file": timeline.audio_file,
        "audio_note": note,
        "seconds": timeline.seconds(),
        "conditions": sorted((k, v if isinstance(v, str) else json.dumps(v)) for k, v in timeline.conditions.items()),
    }


def audio_url(conversation_id: str) -> str:
    """The route serving a conversation's kept recording."""
    return "/-/bench/audio?" + urlencode({"id": conversation_id})


def length_note(timeline: Timeline, path: Path) -> str | None:
    """A warning when the recording is not as long as the conversation (another conversation's file, overwritten)."""
    try:
        with wave.open(str(path), "rb") as recorded:
            length = recorded.getnframes() / recorded.getframerate()
    except (wave.Error, EOFError, OSError) as exc:
        return f"the recording {path} cannot be read as WAV: {exc}"
    # The loop writes one tick of audio per tick played; anything else is not this conversation's recording.
    if abs(length - timeline.seconds()) > timeline.tick_ms / 1000:
        return (
            f"the recording lasts {length:.1f} s but the conversation {timeline.seconds():.1f} s: "
            "the file may hold another conversation (overwritten)"
        )
    return None


# The strip ------------------------------------------------------------------------------------------------------


def strip(timeline: Timeline) -> dict[str, Any]:
    """The timeline strip's geometry: speech runs as rects, tools, actions, effects and truncations as marks, the axis."""
    scale = (WIDTH - LEFT - RIGHT) / max(timeline.ticks, 1)
    segments = speech_segments(timeline)
    runs = [run_rect(segment, timeline, scale) for segment in segments]
    marks = [*tool_marks(timeline, scale), *action_marks(timeline, segments, scale), *effect_marks(timeline, scale)]
    return {
        "width": WIDTH,
        "height": HEIGHT,
        "left": LEFT,
        "right": WIDTH - RIGHT,
        "axis_y": AXIS_Y,
        "lanes": [{"name": name, "y": y, "h": h, "mid": y + h / 2} for name, (y, h) in LANES.items()],
        "runs": runs,
        "marks": marks,
        "axis": axis(timeline, scale),
    }


def x_of(tick: float, scale: float) -> float:
    """A tick's x in SVG units."""
    return round(LEFT + tick * scale, 2)


def run_rect(segment: SpeechSegment, timeline: Timeline, scale: float) -> dict[str, Any]:
    """One speech run as a rect in its side's lane, its text as the hover title."""
    y, h = LANES[segment.side]
    flags = [name for name in ("backchannel", "interrupted", "overlapped") if getattr(segment, name)]
    text = segment.text if len(segment.text) <= MAX_TITLE else segment.text[:MAX_TITLE] + "…"
    title = (
        f"{segment.side} {seconds(segment.start_tick, timeline.tick_ms)}-{seconds(segment.end_tick, timeline.tick_ms)} s"
        + (f" ({', '.join(flags)})" if flags else "")
        + f": {text or '(no text)'}"
    )
    return {
        "x": x_of(segment.start_tick, scale),
        "y": y,
        "h": h,
        "side": segment.side,
        "w": round(max((segment.end_tick - segment.start_tick) * scale, MIN_RUN), 2),
        "cls": " ".join(["run", segment.side, *flags]),
        "title": title,
    }


def mark(kind: str, tick: int, lane: str, title: str, timeline: Timeline, scale: float, **extra: Any) -> dict[str, Any]:
    """A vertical mark at a tick across a lane (or part of it)."""
    y, h = LANES[lane]
    return {
        "kind": kind,
        "x": x_of(tick + 0.5, scale),
        "y1": y,
        "y2": y + h,
        "cls": f"mark {kind}",
        "title": f"{seconds(tick, timeline.tick_ms)} s: {title}",
        **extra,
    }


def tool_marks(timeline: Timeline, scale: float) -> Iterator[dict[str, Any]]:
    """Each tool call in the tools lane, coloured by who called it; errors in red."""
    for stamp in timeline.tools:
        kind = "tool-error" if stamp.error else f"tool-{stamp.requestor}"
        yield mark(kind, stamp.tick, "tools", f"{stamp.requestor} calls {stamp.name}" + (" (error)" if stamp.error else ""), timeline, scale)


def action_marks(timeline: Timeline, segments: list[SpeechSegment], scale: float) -> Iterator[dict[str, Any]]:
    """The user's backchannels, yields (stop_talking) and barge-ins; the agent's truncations."""
    for entry in timeline.user:
        if entry.action == "stop_talking":
            yield mark("yield", entry.tick, "user", "user stops talking (yields)", timeline, scale)
        elif entry.action == "backchannel":
            yield mark("backchannel", entry.tick, "user", f"user backchannel: {entry.text or ''}".rstrip(": "), timeline, scale)
    for segment in segments:
        # A user run starting over the agent's speech (not a backchannel) is a barge-in: marked across both lanes.
        if segment.side == "user" and segment.overlapped and not segment.backchannel:
            yield mark(
                "barge-in",
                segment.start_tick,
                "user",
                "user barges in while the agent speaks",
                timeline,
                scale,
                y2=LANES["agent"][0] + LANES["agent"][1],
            )
    for entry in timeline.agent:
        if entry.truncated:
            yield mark("truncated", entry.tick, "agent", "agent cut off (truncated)", timeline, scale)


def effect_marks(timeline: Timeline, scale: float) -> Iterator[dict[str, Any]]:
    """Audio effects applied to either side's chunk (bursts, inserted speech, muffling, frame drops) as dots."""
    for side in ("user", "agent"):
        y, h = LANES[side]
        for entry in timeline.user if side == "user" else timeline.agent:
            if entry.effects:
                described = "; ".join(", ".join(f"{k}={v}" for k, v in effect.items()) for effect in entry.effects)
                yield {
                    "kind": "effect",
                    "x": x_of(entry.tick + 0.5, scale),
                    "cy": y + h - 3,
                    "cls": "mark effect",
                    "title": f"{seconds(entry.tick, timeline.tick_ms)} s: {side} audio effect: {described}",
                }


def axis(timeline: Timeline, scale: float) -> list[dict[str, Any]]:
    """Labelled axis positions in whole seconds, at most about a dozen."""
    total = timeline.seconds()
    step = next((s for s in AXIS_STEPS if total / s <= 12), AXIS_STEPS[-1])
    ticks_per_second = 1000 / timeline.tick_ms
    return [{"x": x_of(second * ticks_per_second, scale), "label": f"{second} s"} for second in range(0, int(total) + 1, step)]


# The recording --------------------------------------------------------------------------------------------------


def recording(timeline: Timeline, db_path: Path | None) -> Path:
    """The WAV file the timeline names; a relative name is looked up from here, then beside the database."""
    if not timeline.audio_file:
        raise NoRecording("this conversation has no kept recording (run with --keep-audio DIR to keep them)")
    named = Path(timeline.audio_file)
    beside = [db_path.parent / named] if db_path is not None else []
    candidates = [named] if named.is_absolute() else [Path.cwd() / named, *beside]
    found = next((path for path in candidates if path.is_file()), None)
    if found is None:
        raise NoRecording(f"the recording {timeline.audio_file} is gone (not found on this machine)")
    with found.open("rb") as head:
        start = head.read(12)
    # The database names the file; serving only WAV files keeps a doctored database from reading anything else.
    if (start[:4], start[8:12]) != WAV_MAGIC:
        raise NoRecording(f"{timeline.audio_file} is not a WAV recording")
    return found


@attrs.frozen
class ByteRange:
    """The bytes of a file a response carries: [start, end], inclusive as in HTTP, of a file of size bytes."""

    start: int
    end: int
    size: int
    partial: bool


def byte_range(header: str | None, size: int) -> ByteRange | None:
    """The single range a Range header asks for (the whole file without one); None when it cannot be satisfied."""
    whole = ByteRange(0, size - 1, size, False)
    if not header or not header.startswith("bytes=") or "," in header:
        return whole  # a missing, foreign-unit or multi-range header gets the whole file, as RFC 9110 allows
    first, _, last = header[len("bytes=") :].strip().partition("-")
    try:
        if not first:
            start, end = max(size - int(last), 0), size - 1
        else:
            start, end = int(first), min(int(last), size - 1) if last else size - 1
    except ValueError:
        return whole
    if start > end or start >= size:
        return None
    return ByteRange(start, end, size, True)
