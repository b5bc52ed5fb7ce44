"""One Realtime session of the cascade: audio in, voice-activity detection, ASR, a text agent, TTS, audio out.

The session speaks the OpenAI Realtime protocol (GA event names) to one client. It is independent of the socket:
`handle` takes each client event, and every server event goes to `emit` in the order the session produced it.

- Input audio is appended to the session's clock and run through the energy VAD (`vad.py`). A speech stop commits
  the utterance: its audio goes to the `asr` role, and the text, once recognised, to the text agent as a user
  message. Recognition and the agent's turn run in one worker, in order, so the agent sees its inputs in the order
  they were spoken.
- The text agent's tool calls go out as `response.function_call_arguments.done`; their results come back as
  `function_call_output` items and reach the agent as tool messages when the client sends `response.create`
  (anything recognised meanwhile follows them). Its text is synthesised through the `tts` role.
- Output audio is paced by the input clock: the server keeps `lead_ms` of audio ahead of the audio it has received,
  as a real server streams no faster than a client needs. `response.done` follows a response's last audio. User
  speech starting while audio is still unsent cancels the rest of every queued response (barge-in; the client
  truncates what it holds). Tool calls already sent are never cancelled: the agent is waiting for their results.
- `settle()` waits until every piece of work the received audio caused has emitted its events (lockstep).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import itertools
import json
import math
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs
from bench_duplex import SAMPLE_RATE
from bench_voice import Audio, SpeechRequest, TranscriptionRequest

from bench_kernel import (
    AgentSession,
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
    get_logger,
)

from .audio import bytes_to_ms, ms_to_bytes, ulaw_to_wav, wav_to_ulaw
from .vad import EnergyVad, VadEvent, VadSettings

log = get_logger()
Emit = Callable[[dict[str, Any]], None]
Job = Callable[[], Awaitable[None]]

DEFAULT_LEAD_MS = 400
"""Output audio sent ahead of the input clock: two default ticks, so a client playing a tick always has the next."""
DELTA_MS = 200
"""Largest audio delta."""
FORMAT = {"type": "audio/pcmu"}
CONTROL = re.compile(r"###[A-Z-]+###")


@attrs.define(eq=False)
class Spoken:
    """A response's audio item, sent in pieces as the input clock allows."""

    response: Response
    item_id: str
    audio: bytes
    text: str
    start_ms: int = 0
    """The input time its first audio was sent at."""
    sent: int = 0
    """Bytes sent so far."""
    text_sent: int = 0
    """Characters of the transcript sent so far (proportional to the audio)."""


@attrs.define(eq=False)
class Response:
    """One response: its output items so far and the text agent's token usage."""

    id: str
    output: list[dict[str, Any]] = attrs.field(factory=list)
    usage: dict[str, Any] = attrs.field(factory=dict)


@attrs.define(eq=False)
class CascadeSession:
    """The protocol and the pipeline for one connection."""

    agent: AgentSession
    """The text agent's session (turn-based default mode)."""
    models: Any
    """The conversation's speech roles, `asr` and `tts` (bench-voice's `SpeechModels`, or a stand-in)."""
    emit: Emit
    lead_ms: int = DEFAULT_LEAD_MS
    tts_voice: str | None = None
    session_id: str = "sess_cascade"
    on_failure: Callable[[BaseException], None] | None = None
    """Told of an exception the pipeline turned into an `error` event (the agent re-raises it in the conversation)."""
    vad: EnergyVad = attrs.field(factory=EnergyVad)
    config: dict[str, Any] = attrs.field(factory=dict)
    """The session as the client configured it (echoed in session.updated)."""
    language: str | None = None
    input_ms: int = 0
    pending_text: list[str] = attrs.field(factory=list)
    awaited_calls: list[str] = attrs.field(factory=list)
    outputs: dict[str, str] = attrs.field(factory=dict)
    speaking: list[Spoken] = attrs.field(factory=list)
    play_end_ms: int = 0
    """The input time at which the audio sent so far ends playing."""
    current_item: str | None = None
    """The user item whose speech is under way."""
    jobs: asyncio.Queue[Job] = attrs.field(factory=asyncio.Queue)
    worker: asyncio.Task[None] | None = None
    ids: Any = attrs.field(factory=itertools.count)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Begin: `session.created`, and the worker that runs recognition and the agent."""
        self.emit({"type": "session.created", "session": self.description()})
        self.worker = asyncio.get_running_loop().create_task(self._work())

    async def settle(self) -> None:
        """Return once every piece of work queued so far has run (and emitted its events)."""
        await self.jobs.join()

    async def close(self) -> None:
        """Stop the worker (the text agent's session belongs to whoever started it)."""
        if self.worker is not None:
            self.worker.cancel()
            try:
                await self.worker
            except asyncio.CancelledError:
                pass

    def description(self) -> dict[str, Any]:
        """The `session` object of session.created / session.updated."""
        audio_in = {
            "format": FORMAT,
            "turn_detection": self.vad.settings.as_turn_detection(),
            "transcription": self.config.get("audio", {}).get("input", {}).get("transcription"),
        }
        return {
            **self.config,
            "id": self.session_id,
            "object": "realtime.session",
            "type": "realtime",
            "model": "voice-cascade",
            "output_modalities": ["audio"],
            "bench_lockstep": True,
            "audio": {"input": audio_in, "output": {"format": FORMAT}},
        }

    def next_id(self, prefix: str) -> str:
        """A fresh id: item_..., resp_..., evt_..."""
        return f"{prefix}_{next(self.ids):06d}"

    def send(self, kind: str, **fields: Any) -> None:
        """Emit one server event."""
        self.emit({"type": kind, "event_id": self.next_id("event"), **fields})

    def error(self, message: str, *, code: str = "invalid_request_error", kind: str = "invalid_request_error", event_id: str | None = None) -> None:
        """Emit an `error` event."""
        self.send("error", error={"type": kind, "code": code, "message": message, "param": None, "event_id": event_id})

    # ------------------------------------------------------------------ client events

    async def handle(self, event: Mapping[str, Any]) -> None:
        """Take one client event."""
        kind = event.get("type")
        handler = HANDLERS.get(str(kind))
        if handler is None:
            self.error(f"unknown client event type {kind!r}", code="unknown_event", event_id=event.get("event_id"))
            return
        try:
            handler(self, event)
        except (KeyError, TypeError, ValueError, binascii.Error) as exc:
            self.error(f"malformed {kind} event: {type(exc).__name__}: {exc}", event_id=event.get("event_id"))

    def on_session_update(self, event: Mapping[str, Any]) -> None:
        """Apply the session's settings: the VAD, the input language; only audio/pcmu is spoken."""
        session = dict(event["session"])
        audio = session.get("audio") or {}
        for side in ("input", "output"):
            kind = ((audio.get(side) or {}).get("format") or FORMAT).get("type")
            if kind != FORMAT["type"]:
                self.error(
                    f"voice-cascade speaks audio/pcmu (8 kHz mu-law) only, not {kind!r} ({side})",
                    code="unsupported_format",
                    event_id=event.get("event_id"),
                )
                return
        turn_detection = (audio.get("input") or {}).get("turn_detection")
        if turn_detection is not None and turn_detection.get("type", "server_vad") != "server_vad":
            self.error("voice-cascade supports server_vad turn detection only", code="unsupported_turn_detection", event_id=event.get("event_id"))
            return
        self.vad.settings = VadSettings.from_turn_detection(turn_detection)
        self.language = ((audio.get("input") or {}).get("transcription") or {}).get("language") or self.language
        self.config = session
        self.send("session.updated", session=self.description())

    def on_append(self, event: Mapping[str, Any]) -> None:
        """Input audio: advance the clock, detect speech, pace the output."""
        audio = base64.b64decode(event["audio"], validate=True)
        for found in self.vad.feed(audio):
            self._on_vad(found)
        self.input_ms += bytes_to_ms(len(audio))
        self._release()

    def on_commit(self, event: Mapping[str, Any]) -> None:
        """End the speech under way now."""
        found = self.vad.flush()
        if found is None:
            self.error("the input audio buffer holds no speech to commit", code="input_audio_buffer_commit_empty", event_id=event.get("event_id"))
            return
        self._on_vad(found)

    def on_clear(self, event: Mapping[str, Any]) -> None:
        """Drop the input audio kept so far."""
        self.vad.clear()
        self.send("input_audio_buffer.cleared")

    def on_item_create(self, event: Mapping[str, Any]) -> None:
        """A function call's output, or a user text message."""
        item = dict(event["item"])
        item_id = item.get("id") or self.next_id("item")
        if item.get("type") == "function_call_output":
            self.outputs[str(item["call_id"])] = str(item.get("output", ""))
        elif item.get("type") == "message" and item.get("role") == "user":
            text = " ".join(str(c.get("text", "")) for c in item.get("content", []) if c.get("type") == "input_text")
            self.pending_text.append(text)
        else:
            self.error(f"voice-cascade takes function_call_output and user text items, not {item.get('type')!r}", event_id=event.get("event_id"))
            return
        self.send("conversation.item.created", previous_item_id=None, item={**item, "id": item_id, "object": "realtime.item"})

    def on_response_create(self, event: Mapping[str, Any]) -> None:
        """Run the text agent on what arrived (tool results first, then speech recognised meanwhile)."""
        self.jobs.put_nowait(lambda: self._respond(requested=True))

    def on_response_cancel(self, event: Mapping[str, Any]) -> None:
        """Cancel the audio not yet sent."""
        self._cancel(self.speaking, "client_cancelled")

    def on_truncate(self, event: Mapping[str, Any]) -> None:
        """The client played only part of an item: acknowledge, and send no more of it."""
        item_id, end_ms = str(event["item_id"]), int(event.get("audio_end_ms", 0))
        self._cancel([s for s in self.speaking if s.item_id == item_id], "client_cancelled")
        self.send("conversation.item.truncated", item_id=item_id, content_index=int(event.get("content_index", 0)), audio_end_ms=end_ms)

    # ------------------------------------------------------------------ speech in

    def _on_vad(self, found: VadEvent) -> None:
        if found.kind == "started":
            self.current_item = self.next_id("item")
            self.send("input_audio_buffer.speech_started", audio_start_ms=found.audio_start_ms, item_id=self.current_item)
            self._cancel(self.speaking, "turn_detected")
            return
        item_id = self.current_item or self.next_id("item")
        self.current_item = None
        self.send("input_audio_buffer.speech_stopped", audio_end_ms=found.audio_end_ms, item_id=item_id)
        self.send("input_audio_buffer.committed", previous_item_id=None, item_id=item_id)
        self.send(
            "conversation.item.created",
            previous_item_id=None,
            item={
                "id": item_id,
                "object": "realtime.item",
                "type": "message",
                "role": "user",
                "status": "completed",
                "content": [{"type": "input_audio", "transcript": None}],
            },
        )
        self.jobs.put_nowait(lambda: self._hear(item_id, found))

    async def _hear(self, item_id: str, found: VadEvent) -> None:
        request = TranscriptionRequest(audio=Audio(data=ulaw_to_wav(found.audio), sample_rate=SAMPLE_RATE), language=self.language)
        heard = await self.models.transcribe("asr", request)
        text = (heard.text or "").strip()
        # audio_start_ms / audio_end_ms are bench's additions: where on the input clock the recognised speech lies.
        self.send(
            "conversation.item.input_audio_transcription.completed",
            item_id=item_id,
            content_index=0,
            transcript=text,
            audio_start_ms=found.audio_start_ms,
            audio_end_ms=found.audio_end_ms,
            usage={"type": "duration", "seconds": round(len(found.audio) / SAMPLE_RATE, 3)},
        )
        if text:  # nothing recognised (noise, a cough): no turn for the agent, as a person would not answer
            self.pending_text.append(text)
            await self._respond(requested=False)

    # ------------------------------------------------------------------ the text agent

    def _incoming(self) -> list[Message] | None:
        """What the agent gets now: results of every awaited call, then what was said; None while a result is missing."""
        if any(call not in self.outputs for call in self.awaited_calls):
            return None
        incoming: list[Message] = [ToolMessage(id=call, content=self.outputs.pop(call)) for call in self.awaited_calls]
        if self.pending_text:
            incoming.append(UserMessage(content=" ".join(self.pending_text)))
        return incoming

    async def _respond(self, *, requested: bool) -> None:
        incoming = self._incoming()
        if incoming is None:
            if requested:
                missing = [c for c in self.awaited_calls if c not in self.outputs]
                self.error(f"response.create before the output of {', '.join(missing)}", code="missing_function_call_output")
            return
        if not incoming:
            if requested:  # nothing new to answer: an empty, completed response
                self._done(Response(id=self.next_id("resp")), "completed")
            return
        self.awaited_calls, self.pending_text = [], []
        reply = await self.agent.respond(incoming)
        await self._answer(reply)

    async def _answer(self, reply: AssistantMessage) -> None:
        response = Response(id=self.next_id("resp"), usage=_usage(reply.usage))
        self.send("response.created", response=_response_object(response, "in_progress"))
        for call in reply.tool_calls or []:
            self._call(response, call)
        spoken = CONTROL.sub("", reply.content or "").strip()
        if spoken:
            audio = await self.models.synthesize("tts", SpeechRequest(text=spoken, voice=self.tts_voice))
            if audio.format != "wav":
                raise ValueError(f"the tts role gave {audio.format!r} audio; the cascade reads WAV")
            self._speak(response, spoken, wav_to_ulaw(audio.data))
        else:
            self._done(response, "completed")

    def _call(self, response: Response, call: ToolCall) -> None:
        call_id = call.id or self.next_id("call")
        arguments = json.dumps(call.arguments)
        item = {
            "id": self.next_id("item"),
            "object": "realtime.item",
            "type": "function_call",
            "status": "completed",
            "name": call.name,
            "call_id": call_id,
            "arguments": arguments,
        }
        index = len(response.output)
        response.output.append(item)
        self.awaited_calls.append(call_id)
        self.send("response.output_item.added", response_id=response.id, output_index=index, item={**item, "status": "in_progress"})
        self.send(
            "response.function_call_arguments.done",
            response_id=response.id,
            item_id=item["id"],
            output_index=index,
            call_id=call_id,
            name=call.name,
            arguments=arguments,
        )
        self.send("response.output_item.done", response_id=response.id, output_index=index, item=item)

    # ------------------------------------------------------------------ speech out

    def _speak(self, response: Response, text: str, audio: bytes) -> None:
        item_id = self.next_id("item")
        index = len(response.output)
        item = {
            "id": item_id,
            "object": "realtime.item",
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [{"type": "output_audio", "transcript": ""}],
        }
        response.output.append(item)
        self.send("response.output_item.added", response_id=response.id, output_index=index, item=item)
        self.send(
            "response.content_part.added",
            response_id=response.id,
            item_id=item_id,
            output_index=index,
            content_index=0,
            part={"type": "output_audio", "transcript": ""},
        )
        self.speaking.append(Spoken(response=response, item_id=item_id, audio=audio, text=text))
        self._release()

    def _release(self) -> None:
        """Send the audio the input clock allows: up to `lead_ms` ahead of the audio received."""
        horizon = self.input_ms + self.lead_ms
        while self.speaking:
            spoken = self.speaking[0]
            if spoken.sent == 0:
                spoken.start_ms = self.play_end_ms = max(self.play_end_ms, self.input_ms)
            room = ms_to_bytes(min(horizon - self.play_end_ms, DELTA_MS))
            if room <= 0:
                return
            piece = spoken.audio[spoken.sent : spoken.sent + room]
            self._delta(spoken, piece)
            self.play_end_ms += bytes_to_ms(len(piece))
            if spoken.sent >= len(spoken.audio):
                self.speaking.pop(0)
                self._finish(spoken, "completed")

    def _delta(self, spoken: Spoken, piece: bytes) -> None:
        spoken.sent += len(piece)
        # The transcript goes out in step with the audio, so a client's "played / received" share of it is right.
        upto = math.ceil(len(spoken.text) * spoken.sent / len(spoken.audio))
        where = {"response_id": spoken.response.id, "item_id": spoken.item_id, "output_index": len(spoken.response.output) - 1, "content_index": 0}
        self.send("response.output_audio.delta", delta=base64.b64encode(piece).decode("ascii"), **where)
        if upto > spoken.text_sent:
            self.send("response.output_audio_transcript.delta", delta=spoken.text[spoken.text_sent : upto], **where)
            spoken.text_sent = upto

    def _cancel(self, spoken: Sequence[Spoken], reason: str) -> None:
        cancelled = list(spoken)
        for item in cancelled:
            self.speaking.remove(item)
            self._finish(item, "cancelled", reason)
        if cancelled:  # the next response starts now: the client drops what it held of these
            self.play_end_ms = min(self.play_end_ms, self.input_ms)

    def _finish(self, spoken: Spoken, status: str, reason: str | None = None) -> None:
        response, said = spoken.response, spoken.text[: spoken.text_sent]
        where = {"response_id": response.id, "item_id": spoken.item_id, "output_index": len(response.output) - 1, "content_index": 0}
        self.send("response.output_audio.done", **where)
        self.send("response.output_audio_transcript.done", transcript=said, **where)
        self.send("response.content_part.done", part={"type": "output_audio", "transcript": said}, **where)
        item = {
            **response.output[-1],
            "status": "completed" if status == "completed" else "incomplete",
            "content": [{"type": "output_audio", "transcript": said}],
        }
        response.output[-1] = item
        self.send("response.output_item.done", response_id=response.id, output_index=len(response.output) - 1, item=item)
        self._done(response, status, reason)

    def _done(self, response: Response, status: str, reason: str | None = None) -> None:
        self.send("response.done", response=_response_object(response, status, reason))

    # ------------------------------------------------------------------ the worker

    async def _work(self) -> None:
        while True:
            job = await self.jobs.get()
            try:
                await job()
            except Exception as exc:  # noqa: BLE001 - a failed turn is the client's error event, not a dead session
                log.warning("cascade.turn_failed", error=f"{type(exc).__name__}: {exc}")
                if self.on_failure is not None:
                    self.on_failure(exc)
                self.error(f"{type(exc).__name__}: {exc}", code="cascade_failed", kind="server_error")
            finally:
                self.jobs.task_done()


def _usage(usage: Mapping[str, int] | None) -> dict[str, Any]:
    """The text agent's tokens as Realtime usage: all text, no audio."""
    prompt, completion = int((usage or {}).get("prompt_tokens", 0)), int((usage or {}).get("completion_tokens", 0))
    return {
        "total_tokens": prompt + completion,
        "input_tokens": prompt,
        "output_tokens": completion,
        "input_token_details": {"text_tokens": prompt, "audio_tokens": 0, "cached_tokens": 0},
        "output_token_details": {"text_tokens": completion, "audio_tokens": 0},
    }


def _response_object(response: Response, status: str, reason: str | None = None) -> dict[str, Any]:
    details = None if reason is None else {"type": status, "reason": reason}
    return {
        "id": response.id,
        "object": "realtime.response",
        "status": status,
        "status_details": details,
        "output": list(response.output),
        "usage": response.usage or _usage(None),
    }


HANDLERS: dict[str, Callable[[CascadeSession, Mapping[str, Any]], None]] = {
    "session.update": CascadeSession.on_session_update,
    "input_audio_buffer.append": CascadeSession.on_append,
    "input_audio_buffer.commit": CascadeSession.on_commit,
    "input_audio_buffer.clear": CascadeSession.on_clear,
    "conversation.item.create": CascadeSession.on_item_create,
    "response.create": CascadeSession.on_response_create,
    "response.cancel": CascadeSession.on_response_cancel,
    "conversation.item.truncate": CascadeSession.on_truncate,
}
"""Client events the cascade takes (bench.tick is the server's: see server.py)."""
