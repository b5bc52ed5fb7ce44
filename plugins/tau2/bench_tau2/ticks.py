"""Full-duplex conversations in tau2's voice format: bench's trajectory and `Timeline` as tau2 `Tick` records, and back.

tau2 stores a voice simulation as ticks (`SimulationRun.ticks`, `mode="full_duplex"`, no `messages`): per tick one
agent and one user chunk (the tick's text slice, `contains_speech`, utterance ids, the user's turn-taking action,
effect fields) and the tool calls made in the tick with their results. Export builds them from the `duplex.timeline`
event and the tool messages of the trajectory; import replays ticks the way bench's loop writes a trajectory (a
side's text becomes a message when its speech run ends, when it calls tools and at the end) and rebuilds the timeline.
"""

from __future__ import annotations

import datetime
from collections import defaultdict, deque
from collections.abc import Sequence
from typing import Any, Literal

import attrs
from bench_duplex import Chunk, Side, Timeline, TimelineEntry, ToolStamp, TranscriptWriter
from bench_duplex import speech_segments as segments  # the loop's speech runs, as `duplex.speech` events

from bench_kernel import (
    AssistantMessage,
    ConfigError,
    Message,
    TaskFileError,
    ToolCall,
    ToolMessage,
    converter,
    structure,
)
from bench_tau2.reading import known_keys, message, whole

SIDES: tuple[tuple[Side, Literal["user", "assistant"]], ...] = (("user", "user"), ("agent", "assistant"))
"""Each tick's sides in the order both loops play them (user first) and tau2's role names."""
MODE = "full_duplex"
"""tau2's `SimulationRun.mode` for voice simulations."""
STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")
"""What ends a conversation in a user chunk's text (tau2's `UserSimulator.is_stop`); the agent's is ###STOP###."""
AGENT_STOP = "###STOP###"
"""User actions the timeline leaves out (the default of a tick), as bench's loop does."""
ULAW_8K = {"encoding": "ulaw", "sample_rate": 8000, "channels": 1}
LEVELS = (
    "control",
    "regular",
    "control_audio",
    "control_accents",
    "control_behavior",
    "control_audio_accents",
    "control_audio_behavior",
    "control_accents_behavior",
)
"""tau2's `SpeechComplexity` values (its loader refuses others in speech_environment.complexity)."""
INSERT_TYPES = {"vocal_tic": "vocal_tic", "non_directed": "non_directed_phrase"}
"""bench's speech-insert kinds -> tau2's `UserSpeechInsertType`."""


# --------------------------------------------------------------------------- export


def timeline_of(data: dict[str, Any]) -> Timeline:
    """The stored `duplex.timeline` event data as a Timeline."""
    timeline: Timeline = converter.structure(data, Timeline)
    return timeline


def export_duplex(messages: Sequence[dict[str, Any]], timeline: Timeline, start_utc: str, termination: str | None) -> dict[str, Any]:
    """tau2's full-duplex fields of one simulation: ticks, mode, speech_environment, info, effect_timeline."""
    greeting = _greeting(messages)
    calls, results = _tool_messages(messages)
    stamps = _stamps(timeline, messages)
    clock = _Clock(start_utc, timeline.tick_ms)
    by_tick = {side: {e.tick: e for e in getattr(timeline, side)} for side in ("agent", "user")}
    last_agent = _last_agent_tick(timeline, termination)
    ticks = []
    for t in range(timeline.ticks):
        tick: dict[str, Any] = {
            "tick_id": t,
            "timestamp": clock.at(t, 0),
            "user_transcript": None,
            "tick_duration_seconds": timeline.tick_ms / 1000,
            "wall_clock_duration_seconds": None,
        }
        order = 0
        for side, role in SIDES:
            entry = by_tick[side].get(t) or TimelineEntry(tick=t)
            text = entry.text
            if side == "agent" and t == last_agent and AGENT_STOP not in text:
                text += AGENT_STOP
            if side == "agent" and t == 0 and greeting:
                text = greeting + text
            tick[f"{side}_chunk"] = _chunk(role, entry, text, timeline.speaking(side, t), clock.at(t, order))
            made = [s for s in stamps.get(t, []) if s.requestor == side]
            tick[f"{side}_tool_calls"] = [_call(calls, s, role) for s in made]
            tick[f"{side}_tool_results"] = [_result(results, s, clock.at(t, order + 1 + i)) for i, s in enumerate(made)]
            order += 1 + len(made)
        ticks.append(tick)
    return {
        "mode": MODE,
        "messages": None,
        "ticks": ticks,
        "speech_environment": speech_environment(timeline.conditions),
        "info": {**responsiveness(timeline), "bench": _bench_info(timeline)},
        "effect_timeline": effect_timeline(timeline),
    }


class _Clock:
    """Timestamps on the simulated clock from the conversation's start: tick t at start + t ticks.

    tau2's `get_messages` sorts a tick's messages by timestamp: user chunk, its tool results, agent chunk, its results
    (the order tau2's orchestrator makes them in, and bench's loop too); one microsecond apart keeps that order.
    """

    def __init__(self, start_utc: str, tick_ms: int) -> None:
        try:
            start = datetime.datetime.fromisoformat(start_utc)
        except (TypeError, ValueError):
            start = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
        self.start = start if start.tzinfo else start.replace(tzinfo=datetime.UTC)
        self.tick_ms = tick_ms

    def at(self, tick: int, order: int) -> str:
        """The timestamp of the order-th message of a tick."""
        when = self.start + datetime.timedelta(milliseconds=tick * self.tick_ms, microseconds=order)
        return when.isoformat(timespec="microseconds")


def _greeting(messages: Sequence[dict[str, Any]]) -> str:
    """The unspoken history opening the trajectory (the agent's greeting): tick 0's non-speech agent text, as in tau2."""
    history = []
    for m in messages:
        if isinstance(m.get("raw_data"), dict) and "tick" in m["raw_data"]:
            break
        if m.get("role") != "assistant" or m.get("tool_calls"):
            raise ConfigError(
                "tau2's full-duplex format has no place for a message history other than the agent's "
                f"greeting (tau2 refuses one too): found a {m.get('role')} message before the first tick"
            )
        history.append(m.get("content") or "")
    return " ".join(h for h in history if h)


def _tool_messages(messages: Sequence[dict[str, Any]]) -> tuple[dict[str, deque[dict[str, Any]]], dict[str, deque[dict[str, Any]]]]:
    """Every tool call and tool result of the trajectory by id, in order (an id may repeat)."""
    calls: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
    results: dict[str, deque[dict[str, Any]]] = defaultdict(deque)
    for m in messages:
        for call in m.get("tool_calls") or []:
            calls[str(call.get("id"))].append(call)
        if m.get("role") == "tool":
            results[str(m.get("id"))].append(m)
    return calls, results


def _stamps(timeline: Timeline, messages: Sequence[dict[str, Any]]) -> dict[int, list[ToolStamp]]:
    """The timeline's tool stamps by tick; a timeline without any takes each call's tick from its message."""
    stamps = list(timeline.tools)
    if not stamps:
        for m in messages:
            tick = (m.get("raw_data") or {}).get("end_tick")
            side: Side = "agent" if m.get("role") == "assistant" else "user"
            stamps += [
                ToolStamp(tick=tick, requestor=side, id=str(c.get("id")), name=str(c.get("name")))
                for c in m.get("tool_calls") or []
                if isinstance(tick, int)
            ]
    found: dict[int, list[ToolStamp]] = defaultdict(list)
    for stamp in stamps:
        found[stamp.tick].append(stamp)
    return found


def _last_agent_tick(timeline: Timeline, termination: str | None) -> int | None:
    """The tick whose agent chunk carries tau2's ###STOP### (appended as tau2's voice agent does): an agent stop's last."""
    return timeline.ticks - 1 if termination == "agent_stop" and timeline.ticks else None


def _chunk(role: str, entry: TimelineEntry, text: str, speech: bool, stamp: str) -> dict[str, Any]:
    """One side's chunk of a tick as a tau2 AssistantMessage / UserMessage (no audio bytes: tau2 never writes them)."""
    chunk: dict[str, Any] = {
        "role": role,
        "content": text or None,
        "tool_calls": None,
        "is_audio": role == "user",
        "turn_idx": None,
        "timestamp": stamp,
        "audio_format": ULAW_8K,
        "audio_content": None,
        "utterance_ids": [entry.utterance] if entry.utterance else None,
        "chunk_id": entry.tick,
        "is_final_chunk": True,
        "contains_speech": speech,
    }
    if role == "user":
        chunk["turn_taking_action"] = {"action": entry.action or ("keep_talking" if speech else "wait"), "info": None}
        chunk.update(_effect_fields(entry.effects))
        chunk["raw_data"] = {"bench_effects": [dict(e) for e in entry.effects]} if entry.effects else None
    else:
        chunk["raw_data"] = {
            "tick_number": entry.tick,
            "vad_events": list(entry.vad),
            "was_truncated": entry.truncated,
            "proportional_transcript": entry.text,
        }
    return chunk


def _effect_fields(effects: Sequence[Any]) -> dict[str, Any]:
    """bench's effects of a tick as tau2's three effect fields (speech, source, channel)."""
    speech: dict[str, Any] = {}
    source: dict[str, Any] = {}
    channel: dict[str, Any] = {}
    for effect in effects:
        kind = effect.get("type")
        if kind == "burst":
            source["burst_noise_file"] = effect.get("file")
        elif kind == "speech_insert":
            insert = {"text": str(effect.get("text", "")), "type": INSERT_TYPES.get(str(effect.get("kind")), "vocal_tic")}
            (speech if effect.get("in_turn") else source)["speech_insert"] = insert
        elif kind == "muffling":
            speech["dynamic_muffling_enabled"] = True
        elif kind == "frame_drop":
            channel = {"frame_drops_enabled": True, "frame_drop_ms": int(effect.get("ms") or 0)}
    return {"speech_effects": speech or None, "source_effects": source or None, "channel_effects": channel or None}


def _call(calls: dict[str, deque[dict[str, Any]]], stamp: ToolStamp, role: str) -> dict[str, Any]:
    found = calls.get(stamp.id)
    if not found:
        raise ConfigError(f"the timeline's tool call {stamp.id!r} ({stamp.name}, tick {stamp.tick}) is not in the trajectory")
    call = found.popleft()
    return {"id": stamp.id, "name": call.get("name"), "arguments": call.get("arguments") or {}, "requestor": role}


def _result(results: dict[str, deque[dict[str, Any]]], stamp: ToolStamp, stamp_utc: str) -> dict[str, Any]:
    found = results.get(stamp.id)
    if not found:
        raise ConfigError(f"the tool call {stamp.id!r} ({stamp.name}, tick {stamp.tick}) has no result in the trajectory")
    result = found.popleft()
    return {
        "id": stamp.id,
        "role": "tool",
        "content": result.get("content"),
        "requestor": "assistant" if stamp.requestor == "agent" else "user",
        "error": bool(result.get("error")),
        "turn_idx": None,
        "timestamp": stamp_utc,
    }


def responsiveness(timeline: Timeline) -> dict[str, Any]:
    """tau2's `compute_responsiveness_info` from the speech runs: user turns the agent left unanswered in a row.

    tau2 counts contiguous speech ticks as one turn (integration 1 tick) and, as its stored chunks carry no tool calls,
    no tool activity; a user turn is answered when an agent turn overlaps [its start, the next user turn's start).
    """
    users = sorted(timeline.user_speech)
    agents = sorted(timeline.agent_speech)
    worst = current = 0
    for i, (start, _end) in enumerate(users):
        following = users[i + 1][0] if i + 1 < len(users) else float("inf")
        answered = any(a_start < following and a_end - 1 >= start for a_start, a_end in agents)
        current = 0 if answered else current + 1
        worst = max(worst, current)
    return {
        "total_user_turns": len(users),
        "total_agent_turns": len(agents),
        "max_unresponded_user_turns": worst,
        "had_unresponsive_period": worst >= 3,
    }


def _bench_info(timeline: Timeline) -> dict[str, Any]:
    """What tau2's fields cannot hold, for a lossless import: bench's conditions and the kept recording."""
    return {"conditions": timeline.conditions, "audio_file": timeline.audio_file, "tick_ms": timeline.tick_ms}


def speech_environment(conditions: dict[str, Any]) -> dict[str, Any] | None:
    """bench's speech conditions (the voice channel's) as tau2's SpeechEnvironment; None without a voice channel."""
    level = conditions.get("level")
    if level not in LEVELS or "persona" not in conditions:
        return None
    noise, bursts = _part(conditions, "noise"), _part(conditions, "bursts")
    drops, muffling, inserts = _part(conditions, "frame_drops"), _part(conditions, "muffling"), _part(conditions, "inserts")
    threshold = conditions.get("backchannel_min_s")
    return {
        "voice_seed": conditions.get("voice_seed", 0),
        "persona_name": conditions["persona"],
        "voice_id": conditions.get("voice"),
        "background_noise_file": conditions.get("background_file"),
        "burst_noise_files": list(conditions.get("burst_files") or []),
        "environment": conditions.get("environment"),
        "backchannel_min_threshold": round(threshold) if isinstance(threshold, int | float) else None,
        "use_llm_backchannel": bool(conditions.get("use_llm_backchannel")),
        "enable_interruptions": conditions.get("interrupt_tendency") == "interrupts",
        "telephony_enabled": bool(conditions.get("telephony", True)),
        "complexity": level,
        "snr_speech_reference_rms": 3000.0,
        "source_effects_config": {
            "enable_background_noise": bool(noise.get("enabled")),
            "noise_snr_db": noise.get("snr_db", 15.0),
            "noise_snr_drift_db": noise.get("drift_db", 3.0),
            "noise_variation_speed": noise.get("variation_speed", 0.5),
            "enable_burst_noise": bool(bursts.get("enabled")),
            "burst_noise_events_per_minute": bursts.get("per_minute", 0.0),
            "burst_snr_range_db": list(bursts.get("snr_range_db") or (-5.0, 10.0)),
        },
        "speech_effects_config": {
            "enable_dynamic_muffling": bool(muffling.get("enabled")),
            "muffle_probability": muffling.get("probability", 0.0),
            "muffle_segment_count": 1,
            "muffle_segment_duration_ms": muffling.get("segment_ms", 500),
            "muffle_cutoff_freq": muffling.get("cutoff_hz", 1500.0),
            "muffle_transition_ms": muffling.get("transition_ms", 100),
            "enable_vocal_tics": bool(inserts.get("vocal_tics")),
            "vocal_tics": [{"text": t, "type": "vocal_tic"} for t in inserts.get("tics") or []],
            "min_words_for_vocal_tics": inserts.get("min_words_for_tics", 3),
            "enable_non_directed_phrases": bool(inserts.get("non_directed")),
            "non_directed_phrases": [{"text": t, "type": "non_directed_phrase"} for t in inserts.get("phrases") or []],
            "speech_insert_events_per_minute": inserts.get("per_minute", 0.0),
        },
        "channel_effects_config": {
            "enable_frame_drops": bool(drops.get("enabled")),
            "frame_drop_rate": drops.get("rate", 0.0),
            "frame_drop_burst_duration_ms": drops.get("burst_ms", 200.0),
            "frame_drop_count": 1,
            "frame_drop_duration_ms": drops.get("drop_ms", 150),
        },
    }


def _part(conditions: dict[str, Any], key: str) -> dict[str, Any]:
    part = conditions.get(key)
    return part if isinstance(part, dict) else {}


def effect_timeline(timeline: Timeline) -> dict[str, Any] | None:
    """The user's source and channel effects as tau2's EffectTimeline (ms on the conversation's clock)."""
    events = []
    for entry in timeline.user:
        start = entry.tick * timeline.tick_ms
        for effect in entry.effects:
            kind = effect.get("type")
            if kind == "burst":
                events.append(_event("burst_noise", start, None, {"file": effect.get("file"), "snr_db": effect.get("snr_db")}))
            elif kind == "speech_insert" and not effect.get("in_turn"):
                end = start + int(effect.get("duration_ms") or 0)
                params = {"type": INSERT_TYPES.get(str(effect.get("kind")), "vocal_tic"), "text": effect.get("text")}
                events.append(_event("out_of_turn_speech", start, end, params))
            elif kind == "frame_drop":
                ms = int(effect.get("ms") or 0)
                events.append(_event("frame_drop", start, start + ms, {"duration_ms": ms}))
    return {"events": events} if events else None


def _event(kind: str, start: int, end: int | None, params: dict[str, Any]) -> dict[str, Any]:
    return {"effect_type": kind, "start_ms": start, "end_ms": end, "participant": "user", "params": params}


# --------------------------------------------------------------------------- import


def import_duplex(sim: dict[str, Any], root: str) -> tuple[list[Message], Timeline]:
    """A full-duplex simulation's trajectory and timeline, from its ticks; malformed ticks raise naming the JSON path.

    The ticks go through the kernel's `TranscriptWriter`, as bench's own loop writes them, so an imported conversation
    reads exactly as one played here.
    """
    raw_ticks = sim.get("ticks")
    if not isinstance(raw_ticks, list):
        raise ConfigError(f"ticks must be a list @ {root}.ticks")
    stamp: list[str | None] = [None]
    writer = TranscriptWriter(clock=lambda: stamp[0])
    utterances: dict[str, str | None] = {"agent": None, "user": None}
    greeting = _greeting_of(raw_ticks, root)
    for t, raw in enumerate(raw_ticks):
        where = f"{root}.ticks[{t}]"
        if not isinstance(raw, dict):
            raise ConfigError(f"a tick must be an object @ {where}")
        stamp[0] = raw.get("timestamp") if isinstance(raw.get("timestamp"), str) else None
        user = _chunk_of(raw, "user_chunk", where)
        stop = _is_stop(user, STOP_TOKENS)
        writer.take("user", t, _bench_chunk("user", user, stop, utterances, f"{where}.user_chunk"))
        _record_calls(writer, "user", t, raw, where)
        if stop:
            writer.flush("user", t, extra=_text(user, where))
        agent = _chunk_of(raw, "agent_chunk", where)
        if t == 0 and greeting:
            agent = {**agent, "content": None}
        # The agent's stop is its ###STOP### (dropped from the text); the words spoken with it stay, unlike the user's.
        writer.take("agent", t, _bench_chunk("agent", agent, False, utterances, f"{where}.agent_chunk"))
        _record_calls(writer, "agent", t, raw, where)
    writer.ticks = len(raw_ticks)
    writer.finish(len(raw_ticks))
    history: list[Message] = [AssistantMessage(content=greeting, turn_idx=0)] if greeting else []
    found = [attrs.evolve(m, turn_idx=i) for i, m in enumerate([*history, *writer.messages])]
    return found, _timeline(sim, raw_ticks, writer)


def _record_calls(writer: TranscriptWriter, side: Side, tick: int, raw: dict[str, Any], where: str) -> None:
    """A side's tool calls of the tick, then their results."""
    key = "agent" if side == "agent" else "user"
    calls = _calls(raw.get(f"{key}_tool_calls"), f"{where}.{key}_tool_calls")
    results = _results(raw.get(f"{key}_tool_results"), f"{where}.{key}_tool_results")
    if calls or results:
        writer.record_calls(side, tick, calls, results)


def _greeting_of(ticks: list[Any], root: str) -> str:
    """Tick 0's unspoken agent text: the greeting tau2 (and bench) open with, history rather than speech."""
    first = ticks[0] if ticks and isinstance(ticks[0], dict) else {}
    agent = _chunk_of(first, "agent_chunk", f"{root}.ticks[0]")
    if agent and agent.get("contains_speech") is False:
        return _text(agent, f"{root}.ticks[0].agent_chunk").strip()
    return ""


def _chunk_of(raw: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    chunk = raw.get(key)
    if chunk is not None and not isinstance(chunk, dict):
        raise ConfigError(f"{key} must be an object or null @ {where}.{key}")
    return chunk or {}


def _text(chunk: dict[str, Any], where: str, *, strip_stop: bool = False) -> str:
    """A chunk's text slice (tau2's content); the agent's ###STOP### is a signal, not speech."""
    text = chunk.get("content") if chunk else None
    if text is not None and not isinstance(text, str):
        raise ConfigError(f"content must be a string or null, not {type(text).__name__} @ {where}.content")
    return (text or "").replace(AGENT_STOP, "") if strip_stop else text or ""


def _is_stop(chunk: dict[str, Any], tokens: Sequence[str]) -> bool:
    text = chunk.get("content") if chunk else None
    return isinstance(text, str) and any(token in text for token in tokens)


def _bench_chunk(side: Side, chunk: dict[str, Any], stop: bool, utterances: dict[str, str | None], where: str) -> Chunk:
    """A tau2 chunk as bench's: speech, text, utterance, a non-default action, effects, truncation, VAD events."""
    speech = chunk.get("contains_speech", True) is not False if chunk else False
    text = _text(chunk, where, strip_stop=side == "agent")
    ids = chunk.get("utterance_ids") if chunk else None
    if ids is not None and not (isinstance(ids, list) and all(isinstance(i, str) for i in ids)):
        raise ConfigError(f"utterance_ids must be a list of strings or null @ {where}.utterance_ids")
    utterance = ids[0] if ids else None
    first_of_utterance = utterance is not None and utterance != utterances[side]
    utterances[side] = utterance or utterances[side]
    action = chunk.get("turn_taking_action") if chunk else None
    name = action.get("action") if isinstance(action, dict) else None
    raw = _object(chunk.get("raw_data"))
    vad = raw.get("vad_events") if side == "agent" else None
    return Chunk(
        text=text,
        speech=speech,
        stop=stop,
        utterance=utterance if text else None,
        action=name if isinstance(name, str) and side == "user" else None,  # the writer keeps only decisions
        effects=_effects_of(chunk, raw, first_of_utterance) if side == "user" else (),
        truncated=side == "agent" and raw.get("was_truncated") is True,
        vad=tuple(v for v in vad if isinstance(v, str)) if isinstance(vad, list) else (),
    )


def _effects_of(chunk: dict[str, Any], raw: dict[str, Any], first_of_utterance: bool) -> tuple[dict[str, Any], ...]:
    """A user chunk's effects in bench's terms: bench's own when the file kept them, else read from tau2's fields.

    tau2 copies an utterance's speech and channel effects onto each of its chunks: counted once, on its first chunk.
    """
    kept = raw.get("bench_effects")
    if isinstance(kept, list) and all(isinstance(e, dict) and isinstance(e.get("type"), str) for e in kept):
        return tuple(kept)
    found: list[dict[str, Any]] = []
    source, speech, channel = (_object(chunk.get(k)) for k in ("source_effects", "speech_effects", "channel_effects"))
    if isinstance(source.get("burst_noise_file"), str):
        found.append({"type": "burst", "file": source["burst_noise_file"]})
    if isinstance(source.get("speech_insert"), dict):
        found.append(_insert(source["speech_insert"], in_turn=False))
    if first_of_utterance and isinstance(speech.get("speech_insert"), dict):
        found.append(_insert(speech["speech_insert"], in_turn=True))
    if first_of_utterance and speech.get("dynamic_muffling_enabled") is True:
        found.append({"type": "muffling"})
    if whole(channel.get("frame_drop_ms"), 1, 10**6) and (first_of_utterance or not chunk.get("contains_speech", True)):
        found.append({"type": "frame_drop", "ms": channel["frame_drop_ms"]})
    return tuple(found)


def _insert(raw: dict[str, Any], *, in_turn: bool) -> dict[str, Any]:
    kind = "non_directed" if raw.get("type") == "non_directed_phrase" else "vocal_tic"
    return {"type": "speech_insert", "kind": kind, "in_turn": in_turn, "text": str(raw.get("text") or "")}


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _calls(raw: Any, where: str) -> list[ToolCall]:
    """A tick's tool calls, checked as tau2's ToolCall (id, name, arguments)."""
    if not raw:
        return []
    if not isinstance(raw, list):
        raise ConfigError(f"tool calls must be a list @ {where}")
    calls = []
    for i, item in enumerate(raw):
        if not isinstance(item, dict):
            raise ConfigError(f"a tool call must be an object @ {where}[{i}]")
        try:
            calls.append(structure(known_keys(item, ToolCall), ToolCall, source="tool call", root=f"{where}[{i}]"))
        except TaskFileError as exc:
            raise ConfigError("; ".join(exc.problems)) from exc
    return calls


def _results(raw: Any, where: str) -> list[ToolMessage]:
    """A tick's tool results, checked as tau2's ToolMessage."""
    if not raw:
        return []
    if not isinstance(raw, list):
        raise ConfigError(f"tool results must be a list @ {where}")
    found = []
    for i, item in enumerate(raw):
        result = message(item, f"{where}[{i}]")
        if not isinstance(result, ToolMessage):
            raise ConfigError(f"a tool result must have role 'tool' @ {where}[{i}].role")
        found.append(result)
    return found


def _timeline(sim: dict[str, Any], ticks: list[Any], writer: TranscriptWriter) -> Timeline:
    """The timeline of the replayed ticks; bench's own exports carry back their conditions and recording."""
    info = _object(sim.get("info"))
    bench = _object(info.get("bench"))
    seconds = next((t.get("tick_duration_seconds") for t in ticks if isinstance(t, dict) and t.get("tick_duration_seconds")), None)
    tick_ms: int = (
        bench["tick_ms"]
        if whole(bench.get("tick_ms"), 1, 10**6)
        else (round(seconds * 1000) if isinstance(seconds, int | float) and 0 < seconds < 1000 else 200)
    )
    kept = bench.get("conditions")
    conditions: dict[str, Any] = kept if isinstance(kept, dict) else _conditions(sim)
    audio = bench.get("audio_file") if isinstance(bench.get("audio_file"), str) else None
    writer.tick_ms = tick_ms
    return attrs.evolve(writer.timeline(conditions), audio_file=audio)


def _conditions(sim: dict[str, Any]) -> dict[str, Any]:
    """tau2's speech_environment in the names bench's timeline uses (level, persona, voice, files, seed), kept whole too."""
    env = sim.get("speech_environment")
    if not isinstance(env, dict):
        return {}
    return {
        "level": env.get("complexity"),
        "persona": env.get("persona_name"),
        "voice": env.get("voice_id"),
        "environment": env.get("environment"),
        "background_file": env.get("background_noise_file"),
        "burst_files": env.get("burst_noise_files") or [],
        "voice_seed": env.get("voice_seed"),
        "source": "tau2",
        "speech_environment": env,
    }


def speech_events(timeline: Timeline) -> list[Any]:
    """The `duplex.speech` events bench's loop stores beside the timeline."""
    return list(segments(timeline))
