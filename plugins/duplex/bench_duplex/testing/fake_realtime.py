"""Realtime speech servers on 127.0.0.1, one per protocol (OpenAI Realtime, Gemini Live), scripted by their test.

    script = [ScriptedResponse.say("Hello, how can I help?"), ScriptedResponse.call("find_user", {"id": "u1"})]
    with FakeOpenAIRealtimeServer(script=script) as server:
        ...  # point an adapter at server.url; assert on server.sent("conversation.item.truncate")

Each is a real WebSocket server (the `websockets` library). It detects the user's speech from the energy of the audio
it receives (20 ms frames; speech_started / speech_stopped with OpenAI's prefix padding), answers the end of each user
utterance, each `response.create` (OpenAI) and each `toolResponse` (Gemini) with the next scripted response (audio,
transcript, function calls, usage) and reports a barge-in over its own speech (OpenAI: speech_started, the client
truncates; Gemini: `interrupted`). A scripted response may instead be a fault: an error event, a malformed event, a
dropped socket or a close. `at_tick` serves responses (one or a list) at given lockstep ticks. Both announce bench's lockstep pacing
(`lockstep=False` turns it off). Everything a client sends is kept per session (`sessions`, `sent`).

`with` runs the server in a background thread with its own event loop; `async with` runs it on the caller's loop.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import attrs

from bench_kernel import BackgroundServer

from ..audio import SAMPLE_RATE, pcm_bytes, pcm_samples, pcm_to_ulaw, ulaw_to_pcm
from ..realtime import LOCKSTEP_DONE, LOCKSTEP_TICK, b64decode, b64encode

Fault = Literal["error", "malformed", "drop", "close"]
FRAME_MS = 20
DELTA_MS = 100
"""Agent audio is sent in deltas of this length."""
SPEECH_RMS = 500.0
"""A 20 ms frame louder than this (16-bit RMS) is speech."""
_ids = itertools.count(1)


def voice(ms: int, hz: float = 220.0, amplitude: int = 6000) -> bytes:
    """mu-law 8 kHz audio loud enough to be speech for the fakes' VAD (a tone)."""
    n = SAMPLE_RATE * ms // 1000
    return pcm_to_ulaw([int(amplitude * math.sin(2 * math.pi * hz * i / SAMPLE_RATE)) for i in range(n)])


@attrs.frozen(kw_only=True)
class ScriptedCall:
    """A function call in a scripted response."""

    name: str
    arguments: Mapping[str, Any] | str = attrs.field(factory=dict)
    """A str is sent verbatim (to break it on purpose)."""
    call_id: str | None = None
    """None: the server makes one up (Gemini: "" sends an empty id, as Gemini sometimes does)."""


@attrs.frozen(kw_only=True)
class ScriptedResponse:
    """One answer of the fake agent: speech (mu-law 8 kHz audio with its transcript), function calls, or a fault."""

    audio: bytes = b""
    transcript: str = ""
    item_id: str | None = None
    calls: tuple[ScriptedCall, ...] = ()
    usage: Mapping[str, Any] | None = None
    """Sent instead of the usage the server computes (the protocol's own shape)."""
    fault: Fault | None = None
    message: str = "scripted error"
    code: str | int | None = None
    """The error event's code, or the close code (default 1011)."""

    @classmethod
    def say(cls, text: str, *, audio: bytes | None = None, ms: int | None = None, **fields: Any) -> ScriptedResponse:
        """Speech: `audio`, or a tone of `ms` (default 60 ms per character, at least 200 ms)."""
        return cls(transcript=text, audio=audio if audio is not None else voice(ms or max(200, 60 * len(text))), **fields)

    @classmethod
    def call(cls, name: str, arguments: Mapping[str, Any] | str | None = None, *, call_id: str | None = None, **fields: Any) -> ScriptedResponse:
        """One function call (with speech when `audio`/`transcript` are given)."""
        return cls(calls=(ScriptedCall(name=name, arguments=arguments if arguments is not None else {}, call_id=call_id),), **fields)

    @classmethod
    def error(cls, message: str = "scripted error", code: str | int = "server_error") -> ScriptedResponse:
        """The protocol's error message."""
        return cls(fault="error", message=message, code=code)

    @classmethod
    def malformed(cls) -> ScriptedResponse:
        """A frame that is not JSON."""
        return cls(fault="malformed")

    @classmethod
    def drop(cls) -> ScriptedResponse:
        """The socket is cut without a close handshake."""
        return cls(fault="drop")

    @classmethod
    def close(cls, code: int = 1011, reason: str = "scripted close") -> ScriptedResponse:
        """The server closes the session."""
        return cls(fault="close", code=code, message=reason)

    @property
    def audio_ms(self) -> int:
        """Length of the speech."""
        return len(self.audio) * 1000 // SAMPLE_RATE


@attrs.define
class _Vad:
    """Energy-based voice-activity detection over the received audio, frame by frame."""

    rate: int
    prefix_ms: int = 300
    silence_ms: int = 500
    samples: int = 0
    pending: list[int] = attrs.field(factory=list)
    speaking: bool = False
    quiet_ms: int = 0

    @property
    def ms(self) -> int:
        """Audio received so far."""
        return self.samples * 1000 // self.rate

    def feed(self, samples: list[int]) -> list[tuple[str, int]]:
        """("started", audio_start_ms) and ("stopped", audio_end_ms) found in the new samples."""
        frame = self.rate * FRAME_MS // 1000
        buffer, found = self.pending + samples, []
        usable = len(buffer) - len(buffer) % frame
        for start in range(0, usable, frame):
            chunk = buffer[start : start + frame]
            loud = math.sqrt(sum(s * s for s in chunk) / frame) > SPEECH_RMS
            begins = self.ms
            self.samples += frame
            if loud and not self.speaking:
                self.speaking, self.quiet_ms = True, 0
                found.append(("started", max(0, begins - self.prefix_ms)))
            elif self.speaking:
                self.quiet_ms = 0 if loud else self.quiet_ms + FRAME_MS
                if self.quiet_ms >= self.silence_ms:
                    self.speaking = False
                    found.append(("stopped", self.ms))
        self.pending = buffer[usable:]
        return found


@attrs.define(eq=False)
class FakeSession:
    """One client connection as the server saw it."""

    path: str
    headers: dict[str, str]
    received: list[dict[str, Any]] = attrs.field(factory=list)
    """Every message the client sent, parsed (audio appends included)."""
    config: dict[str, Any] = attrs.field(factory=dict)
    """The session settings the client sent (OpenAI: the merged `session`; Gemini: `setup`)."""
    user_audio: bytearray = attrs.field(factory=bytearray)
    """The user's audio as received (OpenAI: mu-law 8 kHz; Gemini: PCM16 16 kHz)."""
    responses: int = 0
    agent_until_ms: int = 0
    """The fake agent speaks until this point of the received audio's clock."""
    user_turns: int = 0
    vad: _Vad | None = None


class FakeRealtimeServer(BackgroundServer):
    """What both protocols share: life cycle, script, VAD, faults, lockstep and the record of what clients sent."""

    protocol = ""
    input_rate = SAMPLE_RATE
    thread_name = "fake-realtime"

    def __init__(
        self,
        script: Iterable[ScriptedResponse] = (),
        *,
        at_tick: Mapping[int, ScriptedResponse | Sequence[ScriptedResponse]] | None = None,
        heard: Iterable[str] = (),
        lockstep: bool = True,
        respond_to_speech: bool = True,
        api_key: str | None = None,
        setup_error: str | None = None,
    ) -> None:
        self.script = list(script)
        self.at_tick = dict(at_tick or {})
        self.heard = list(heard)
        """What the fake recogniser 'heard' of each user utterance, in order (nothing is reported once used up)."""
        self.lockstep = lockstep
        self.respond_to_speech = respond_to_speech
        self.api_key = api_key
        self.setup_error = setup_error
        self.sessions: list[FakeSession] = []
        self.errors: list[BaseException] = []
        self._server: Any = None
        self.port = 0

    # ------------------------------------------------------------------ what tests read

    @property
    def url(self) -> str:
        """The WebSocket URL clients take as their base URL."""
        raise NotImplementedError

    @property
    def session(self) -> FakeSession:
        """The latest session."""
        if not self.sessions:
            raise AssertionError(f"no client connected to the fake {self.protocol} server")
        return self.sessions[-1]

    def sent(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Messages clients sent (all sessions), of one kind: OpenAI's `type`, or Gemini's top-level key."""
        found = [m for s in self.sessions for m in s.received]
        return found if kind is None else [m for m in found if m.get("type") == kind or kind in m]

    def push(self, *responses: ScriptedResponse) -> None:
        """Queue more scripted responses."""
        self.script.extend(responses)

    # ------------------------------------------------------------------ life cycle

    async def open(self) -> None:
        """Bind a free port on the running loop."""
        from websockets.asyncio.server import serve

        self._server = await serve(self._serve, "127.0.0.1", 0, process_request=self._check_key, max_size=2**24, ping_interval=None)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and close open connections."""
        if self._server is None:
            return
        self._server.close()
        await self._server.wait_closed()
        self._server = None

    # ------------------------------------------------------------------ serving

    def _check_key(self, connection: Any, request: Any) -> Any:
        if self.api_key is None or self.key_of(request) == self.api_key:
            return None
        from http import HTTPStatus

        return connection.respond(HTTPStatus.UNAUTHORIZED, "invalid api key\n")

    def key_of(self, request: Any) -> str | None:
        """The API key a handshake request carries."""
        raise NotImplementedError

    async def _serve(self, ws: Any) -> None:
        from websockets.exceptions import ConnectionClosed

        session = FakeSession(path=ws.request.path, headers={k.lower(): v for k, v in ws.request.headers.raw_items()})
        session.vad = _Vad(rate=self.input_rate)
        self.sessions.append(session)
        try:
            await self.opening(ws, session)
            async for raw in ws:
                try:
                    message = json.loads(raw)
                except ValueError:
                    message = {"unparsed": raw if isinstance(raw, str) else raw.decode("utf-8", "replace")}
                session.received.append(message)
                if message.get("type") == LOCKSTEP_TICK:
                    await self._tick(ws, session, message.get("tick"))
                else:
                    await self.on_message(ws, session, message)
        except ConnectionClosed:
            pass
        except Exception as exc:
            self.errors.append(exc)
            raise

    async def _tick(self, ws: Any, session: FakeSession, tick: Any) -> None:
        scripted = self.at_tick.get(tick, ()) if isinstance(tick, int) else ()
        for response in [scripted] if isinstance(scripted, ScriptedResponse) else scripted:
            await self.serve_response(ws, session, response)
        await ws.send(json.dumps({"type": LOCKSTEP_DONE, "tick": tick}))

    async def user_audio(self, ws: Any, session: FakeSession, samples: list[int]) -> None:
        """Run the VAD over newly received samples and act on speech starting and stopping."""
        assert session.vad is not None
        for kind, ms in session.vad.feed(samples):
            if kind == "started":
                await self.speech_started(ws, session, ms)
            else:
                await self.speech_stopped(ws, session, ms)
                if self.respond_to_speech:
                    await self.respond(ws, session)

    async def respond(self, ws: Any, session: FakeSession) -> None:
        """Serve the next scripted response, if any is left."""
        if self.script:
            await self.serve_response(ws, session, self.script.pop(0))

    async def serve_response(self, ws: Any, session: FakeSession, response: ScriptedResponse) -> None:
        """A fault, or speech and calls in the protocol's events."""
        if response.fault == "malformed":
            await ws.send("{this is not json")
        elif response.fault == "drop":
            ws.transport.abort()
        elif response.fault == "close":
            await ws.close(int(response.code or 1011), response.message)
        elif response.fault == "error":
            await ws.send(json.dumps(self.error_event(response)))
        else:
            session.responses += 1
            heard_ms = session.vad.ms if session.vad else 0
            session.agent_until_ms = max(session.agent_until_ms, heard_ms) + response.audio_ms
            for event in self.response_events(session, response):
                await ws.send(json.dumps(event))

    def next_heard(self, session: FakeSession) -> str | None:
        """What the recogniser reports for the utterance that just ended."""
        session.user_turns += 1
        return self.heard.pop(0) if self.heard else None

    # ------------------------------------------------------------------ the protocol (override)

    async def opening(self, ws: Any, session: FakeSession) -> None:
        """What the server does when a client connects."""

    async def on_message(self, ws: Any, session: FakeSession, message: dict[str, Any]) -> None:
        """Act on one client message (lockstep ticks are handled already)."""

    async def speech_started(self, ws: Any, session: FakeSession, audio_start_ms: int) -> None:
        """The user started speaking."""

    async def speech_stopped(self, ws: Any, session: FakeSession, audio_end_ms: int) -> None:
        """The user stopped speaking."""

    def error_event(self, response: ScriptedResponse) -> dict[str, Any]:
        """The protocol's error message."""
        raise NotImplementedError

    def response_events(self, session: FakeSession, response: ScriptedResponse) -> list[dict[str, Any]]:
        """The events carrying one response."""
        raise NotImplementedError

    # ------------------------------------------------------------------ what a session shows, protocol-neutral

    server_truncates = False
    """The protocol has the client tell the server where the agent was cut off."""

    def settings_seen(self, session: FakeSession) -> dict[str, Any]:
        """The session's settings in one shape: instructions, tools (names), voice, input_format, vad."""
        raise NotImplementedError

    def tool_results_seen(self, session: FakeSession) -> list[tuple[str, str, bool]]:
        """(call id, output, error) of every tool result the client sent."""
        raise NotImplementedError

    def responses_requested(self, session: FakeSession) -> int:
        """How often the client asked for a response."""
        raise NotImplementedError

    def truncations_seen(self, session: FakeSession) -> list[tuple[str, int]]:
        """(item id, audio end ms) of every truncation the client sent."""
        return []


def _split(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)] or []


def _spread(text: str, parts: int) -> list[str]:
    """The text over n parts, word boundaries kept."""
    words = text.split(" ")
    if parts <= 1 or len(words) <= 1:
        return [text]
    out = [""] * parts
    for index, word in enumerate(words):
        slot = index * parts // len(words)
        out[slot] += word if not out[slot] else " " + word
    # Deltas are concatenated by the client: the spaces between slots go to the start of the next one.
    return [part if i == 0 or not part else " " + part for i, part in enumerate(out)]


class FakeOpenAIRealtimeServer(FakeRealtimeServer):
    """The OpenAI Realtime protocol (GA event names), mu-law audio both ways."""

    protocol = "openai-realtime"

    @property
    def url(self) -> str:
        """`ws://127.0.0.1:PORT/v1/realtime`."""
        return f"ws://127.0.0.1:{self.port}/v1/realtime"

    def key_of(self, request: Any) -> str | None:
        """The bearer token."""
        value = request.headers.get("Authorization", "")
        return value[len("Bearer ") :] if value.startswith("Bearer ") else None

    async def opening(self, ws: Any, session: FakeSession) -> None:
        """session.created, announcing lockstep."""
        created: dict[str, Any] = {"id": f"sess_{next(_ids)}", "object": "realtime.session", "type": "realtime"}
        if self.lockstep:
            created["bench_lockstep"] = True
        await ws.send(json.dumps({"type": "session.created", "event_id": f"event_{next(_ids)}", "session": created}))

    async def on_message(self, ws: Any, session: FakeSession, message: dict[str, Any]) -> None:
        """session.update, input_audio_buffer.append, conversation.item.create/truncate, response.create."""
        kind = message.get("type")
        if kind == "session.update":
            if self.setup_error:
                await ws.send(json.dumps(self.error_event(ScriptedResponse.error(self.setup_error, "invalid_value"))))
                return
            session.config = _merge(session.config, message.get("session") or {})
            detection = session.config.get("audio", {}).get("input", {}).get("turn_detection") or {}
            assert session.vad is not None
            session.vad.prefix_ms = detection.get("prefix_padding_ms", session.vad.prefix_ms)
            session.vad.silence_ms = detection.get("silence_duration_ms", session.vad.silence_ms)
            await ws.send(json.dumps({"type": "session.updated", "session": session.config}))
        elif kind == "input_audio_buffer.append":
            audio = b64decode(message.get("audio"), "audio", "fake")
            session.user_audio += audio
            await self.user_audio(ws, session, ulaw_to_pcm(audio))
        elif kind == "conversation.item.truncate":
            await ws.send(
                json.dumps(
                    {
                        "type": "conversation.item.truncated",
                        "item_id": message.get("item_id"),
                        "content_index": message.get("content_index", 0),
                        "audio_end_ms": message.get("audio_end_ms"),
                    }
                )
            )
        elif kind == "conversation.item.create":
            item = dict(message.get("item") or {})
            item.setdefault("id", f"item_{next(_ids)}")
            await ws.send(json.dumps({"type": "conversation.item.added", "item": item}))
        elif kind == "response.create":
            await self.respond(ws, session)
        else:
            await ws.send(
                json.dumps(
                    {
                        "type": "error",
                        "error": {"type": "invalid_request_error", "code": "unknown_event", "message": f"unknown client event {kind!r}"},
                    }
                )
            )

    async def speech_started(self, ws: Any, session: FakeSession, audio_start_ms: int) -> None:
        """input_audio_buffer.speech_started (the client truncates the agent itself)."""
        await ws.send(
            json.dumps({"type": "input_audio_buffer.speech_started", "audio_start_ms": audio_start_ms, "item_id": f"user_{session.user_turns + 1}"})
        )

    async def speech_stopped(self, ws: Any, session: FakeSession, audio_end_ms: int) -> None:
        """speech_stopped, committed, and the input transcription when the script has one."""
        item = f"user_{session.user_turns + 1}"
        text = self.next_heard(session)
        await ws.send(json.dumps({"type": "input_audio_buffer.speech_stopped", "audio_end_ms": audio_end_ms, "item_id": item}))
        await ws.send(json.dumps({"type": "input_audio_buffer.committed", "item_id": item}))
        if text is not None:
            await ws.send(
                json.dumps({"type": "conversation.item.input_audio_transcription.completed", "item_id": item, "content_index": 0, "transcript": text})
            )

    server_truncates = True

    def settings_seen(self, session: FakeSession) -> dict[str, Any]:
        """From the merged session.update."""
        config = session.config
        audio = config.get("audio", {})
        detection = audio.get("input", {}).get("turn_detection") or {}
        return {
            "instructions": config.get("instructions"),
            "tools": [t.get("name") for t in config.get("tools", [])],
            "voice": audio.get("output", {}).get("voice"),
            "input_format": audio.get("input", {}).get("format", {}).get("type"),
            "output_format": audio.get("output", {}).get("format", {}).get("type"),
            "vad": {k: detection.get(k) for k in ("type", "threshold", "prefix_padding_ms", "silence_duration_ms")},
        }

    def tool_results_seen(self, session: FakeSession) -> list[tuple[str, str, bool]]:
        """function_call_output items (errors travel as their output text)."""
        items = [m.get("item") or {} for m in session.received if m.get("type") == "conversation.item.create"]
        return [(str(i.get("call_id")), str(i.get("output")), False) for i in items if i.get("type") == "function_call_output"]

    def responses_requested(self, session: FakeSession) -> int:
        """response.create messages."""
        return sum(1 for m in session.received if m.get("type") == "response.create")

    def truncations_seen(self, session: FakeSession) -> list[tuple[str, int]]:
        """conversation.item.truncate messages."""
        return [(str(m.get("item_id")), int(m.get("audio_end_ms") or 0)) for m in session.received if m.get("type") == "conversation.item.truncate"]

    def error_event(self, response: ScriptedResponse) -> dict[str, Any]:
        """An `error` event."""
        return {"type": "error", "error": {"type": "server_error", "code": response.code, "message": response.message}}

    def response_events(self, session: FakeSession, response: ScriptedResponse) -> list[dict[str, Any]]:
        """response.created, audio and transcript deltas, function calls, response.done with usage."""
        response_id = f"resp_{next(_ids)}"
        events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": response_id, "status": "in_progress"}}]
        output: list[dict[str, Any]] = []
        if response.audio or response.transcript:
            item = response.item_id or f"item_{next(_ids)}"
            output.append({"id": item, "type": "message", "role": "assistant"})
            events.append({"type": "response.output_item.added", "response_id": response_id, "item": output[-1]})
            deltas = _split(response.audio, DELTA_MS * SAMPLE_RATE // 1000)
            texts = _spread(response.transcript, max(1, len(deltas)))
            for index in range(max(len(deltas), len(texts))):
                if index < len(deltas):
                    events.append(
                        {
                            "type": "response.output_audio.delta",
                            "response_id": response_id,
                            "item_id": item,
                            "content_index": 0,
                            "delta": b64encode(deltas[index]),
                        }
                    )
                if index < len(texts) and texts[index]:
                    events.append(
                        {
                            "type": "response.output_audio_transcript.delta",
                            "response_id": response_id,
                            "item_id": item,
                            "content_index": 0,
                            "delta": texts[index],
                        }
                    )
            events.append({"type": "response.output_audio.done", "response_id": response_id, "item_id": item})
            events.append(
                {"type": "response.output_audio_transcript.done", "response_id": response_id, "item_id": item, "transcript": response.transcript}
            )
        for call in response.calls:
            call_id = call.call_id if call.call_id is not None else f"call_{next(_ids)}"
            arguments = call.arguments if isinstance(call.arguments, str) else json.dumps(call.arguments)
            call_item = {"id": f"item_{next(_ids)}", "type": "function_call", "call_id": call_id, "name": call.name, "arguments": arguments}
            output.append(call_item)
            events.append({"type": "response.output_item.added", "response_id": response_id, "item": call_item})
            events.append(
                {
                    "type": "response.function_call_arguments.done",
                    "response_id": response_id,
                    "item_id": call_item["id"],
                    "call_id": call_id,
                    "name": call.name,
                    "arguments": arguments,
                }
            )
        usage = dict(response.usage) if response.usage is not None else openai_usage(response)
        events.append({"type": "response.done", "response": {"id": response_id, "status": "completed", "output": output, "usage": usage}})
        return events


def openai_usage(response: ScriptedResponse) -> dict[str, Any]:
    """The usage the fake reports for a response: 20 audio tokens a second out, a token a word, 100 in."""
    audio_out = math.ceil(response.audio_ms / 50)
    text_out = len(response.transcript.split()) + 5 * len(response.calls)
    return {
        "total_tokens": 100 + audio_out + text_out,
        "input_tokens": 100,
        "output_tokens": audio_out + text_out,
        "input_token_details": {
            "text_tokens": 60,
            "audio_tokens": 40,
            "cached_tokens": 20,
            "cached_tokens_details": {"text_tokens": 20, "audio_tokens": 0},
        },
        "output_token_details": {"text_tokens": text_out, "audio_tokens": audio_out},
    }


def _merge(base: dict[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in update.items():
        merged[key] = _merge(merged[key], value) if isinstance(value, Mapping) and isinstance(merged.get(key), dict) else value
    return merged


class FakeGeminiLiveServer(FakeRealtimeServer):
    """The Gemini Live protocol (BidiGenerateContent JSON): PCM16 16 kHz in, 24 kHz out."""

    protocol = "gemini-live"
    input_rate = 16000
    output_rate = 24000

    @property
    def url(self) -> str:
        """`ws://127.0.0.1:PORT/ws/...BidiGenerateContent`."""
        return f"ws://127.0.0.1:{self.port}/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"

    def key_of(self, request: Any) -> str | None:
        """The x-goog-api-key header, or the key query parameter."""
        from urllib.parse import parse_qs, urlsplit

        header = request.headers.get("x-goog-api-key")
        return header or (parse_qs(urlsplit(request.path).query).get("key") or [None])[0]

    async def on_message(self, ws: Any, session: FakeSession, message: dict[str, Any]) -> None:
        """setup, realtimeInput, toolResponse, clientContent."""
        if "setup" in message:
            if self.setup_error:
                await ws.close(1007, self.setup_error)
                return
            session.config = dict(message["setup"])
            detection = session.config.get("realtimeInputConfig", {}).get("automaticActivityDetection", {})
            assert session.vad is not None
            session.vad.prefix_ms = detection.get("prefixPaddingMs", session.vad.prefix_ms)
            session.vad.silence_ms = detection.get("silenceDurationMs", session.vad.silence_ms)
            await ws.send(json.dumps({"setupComplete": {"bench_lockstep": True} if self.lockstep else {}}))
        elif "realtimeInput" in message:
            audio = (message["realtimeInput"] or {}).get("audio") or {}
            data = b64decode(audio.get("data"), "realtimeInput.audio.data", "fake")
            session.user_audio += data
            await self.user_audio(ws, session, pcm_samples(data))
        elif "toolResponse" in message or ("clientContent" in message and message["clientContent"].get("turnComplete")):
            await self.respond(ws, session)

    async def speech_started(self, ws: Any, session: FakeSession, audio_start_ms: int) -> None:
        """`interrupted` when the user talks over the fake agent's speech."""
        assert session.vad is not None
        if session.vad.ms < session.agent_until_ms:
            session.agent_until_ms = session.vad.ms
            await ws.send(json.dumps({"serverContent": {"interrupted": True}}))

    async def speech_stopped(self, ws: Any, session: FakeSession, audio_end_ms: int) -> None:
        """The input transcription, when the script has one."""
        text = self.next_heard(session)
        if text is not None:
            await ws.send(json.dumps({"serverContent": {"inputTranscription": {"text": text}}}))

    def settings_seen(self, session: FakeSession) -> dict[str, Any]:
        """From `setup` and the first realtimeInput's mime type."""
        setup = session.config
        parts = setup.get("systemInstruction", {}).get("parts", [])
        tools = [f.get("name") for t in setup.get("tools", []) for f in t.get("functionDeclarations", [])]
        voice_config = setup.get("generationConfig", {}).get("speechConfig", {}).get("voiceConfig", {})
        detection = setup.get("realtimeInputConfig", {}).get("automaticActivityDetection", {})
        inputs = [m["realtimeInput"].get("audio", {}).get("mimeType") for m in session.received if "realtimeInput" in m]
        return {
            "instructions": "".join(p.get("text", "") for p in parts),
            "tools": tools,
            "voice": voice_config.get("prebuiltVoiceConfig", {}).get("voiceName"),
            "input_format": inputs[0] if inputs else None,
            "output_format": f"audio/pcm;rate={self.output_rate}"
            if "AUDIO" in setup.get("generationConfig", {}).get("responseModalities", [])
            else None,
            "vad": {"prefix_padding_ms": detection.get("prefixPaddingMs"), "silence_duration_ms": detection.get("silenceDurationMs")},
        }

    def tool_results_seen(self, session: FakeSession) -> list[tuple[str, str, bool]]:
        """functionResponses of every toolResponse."""
        found = []
        for message in session.received:
            for entry in (message.get("toolResponse") or {}).get("functionResponses", []):
                response = entry.get("response") or {}
                found.append((str(entry.get("id")), str(response.get("error", response.get("output"))), "error" in response))
        return found

    def responses_requested(self, session: FakeSession) -> int:
        """toolResponse messages (Gemini answers after each by itself)."""
        return sum(1 for m in session.received if "toolResponse" in m)

    def error_event(self, response: ScriptedResponse) -> dict[str, Any]:
        """An error message."""
        return {"error": {"code": 500, "message": response.message, "status": str(response.code or "INTERNAL")}}

    def response_events(self, session: FakeSession, response: ScriptedResponse) -> list[dict[str, Any]]:
        """modelTurn audio (each sample repeated to 24 kHz), outputTranscription, toolCall, turnComplete, usageMetadata."""
        events: list[dict[str, Any]] = []
        deltas = _split(response.audio, DELTA_MS * SAMPLE_RATE // 1000)
        texts = _spread(response.transcript, max(1, len(deltas)))
        repeat = self.output_rate // SAMPLE_RATE
        for index in range(max(len(deltas), len(texts))):
            if index < len(deltas):
                samples = [s for s in ulaw_to_pcm(deltas[index]) for _ in range(repeat)]
                part = {"inlineData": {"mimeType": f"audio/pcm;rate={self.output_rate}", "data": b64encode(pcm_bytes(samples))}}
                events.append({"serverContent": {"modelTurn": {"parts": [part]}}})
            if index < len(texts) and texts[index]:
                events.append({"serverContent": {"outputTranscription": {"text": texts[index]}}})
        if response.calls:
            calls = [
                {
                    "id": c.call_id if c.call_id is not None else f"fc_{next(_ids)}",
                    "name": c.name,
                    "args": json.loads(c.arguments) if isinstance(c.arguments, str) else dict(c.arguments),
                }
                for c in response.calls
            ]
            events.append({"toolCall": {"functionCalls": calls}})
        usage = dict(response.usage) if response.usage is not None else gemini_usage(response)
        events.append({"serverContent": {"turnComplete": True}, "usageMetadata": usage})
        return events


def gemini_usage(response: ScriptedResponse) -> dict[str, Any]:
    """The usageMetadata the fake reports: 25 audio tokens a second out, a token a word, 100 in."""
    audio_out = math.ceil(response.audio_ms / 40)
    text_out = len(response.transcript.split()) + 5 * len(response.calls)
    return {
        "promptTokenCount": 100,
        "responseTokenCount": audio_out + text_out,
        "totalTokenCount": 100 + audio_out + text_out,
        "promptTokensDetails": [{"modality": "TEXT", "tokenCount": 60}, {"modality": "AUDIO", "tokenCount": 40}],
        "responseTokensDetails": [{"modality": "TEXT", "tokenCount": text_out}, {"modality": "AUDIO", "tokenCount": audio_out}],
    }
