"""Realtime (speech-to-speech) agents: the seam between a provider's streaming protocol and bench's ticks.

A `RealtimeAdapter` plays one tick at a time: `run_tick(audio, tick)` sends one tick of the user's mu-law 8 kHz audio
and returns a `TickOutput` holding exactly one tick of the agent's audio, the transcript spoken in it, its tool calls,
voice-activity events and usage. The base class keeps the bookkeeping every provider needs (audio that arrives faster
than it is played is buffered for later ticks, shortfalls are padded with silence, each provider item's transcript is
released in proportion to its audio played, a barge-in cuts the agent's audio locally and skips the rest of the cut
item) and the transport (a WebSocket of JSON messages). A provider writes only the wire part: `endpoint`, `handshake`,
`audio_messages`, `tool_result_messages` and `handle`, which calls the `on_*` methods below.

Pacing: "realtime" sends the tick's audio in 20 ms packets and collects events for one tick of wall time (a real
provider); "lockstep" is bench's extension for servers that announce it in their first event (`bench_lockstep: true`):
after the tick's audio the client sends `{"type": "bench.tick", "tick": N}` and reads events until
`{"type": "bench.tick.done", "tick": N}`, so a tick costs only the server's work and a run is deterministic. "auto"
is lockstep when the server announces it, else realtime.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Literal

import attrs

from bench_kernel import (
    ConfigError,
    ModelAuthError,
    ModelError,
    ModelHTTPError,
    ModelUnavailableError,
    ToolCall,
)

from .audio import SAMPLE_RATE, Resampler, fit, pcm_bytes, pcm_samples, pcm_to_ulaw, tick_bytes, ulaw_to_pcm
from .seams import TICK_MS

__all__ = [
    "LOCKSTEP_DONE",
    "LOCKSTEP_TICK",
    "PACINGS",
    "PACKET_MS",
    "Pacing",
    "RealtimeAdapter",
    "RealtimeConnectionError",
    "RealtimeError",
    "RealtimeSettings",
    "Resampler",
    "TickOutput",
    "ToolResult",
    "VadSettings",
    "b64decode",
    "b64encode",
    "chat_function",
    "pcm_bytes",
    "pcm_samples",
    "pcm_to_ulaw",
    "ulaw_to_pcm",
]

PACKET_MS = 20
"""Audio is sent in packets of this length, as a telephone line would carry it."""
LOCKSTEP_TICK = "bench.tick"
LOCKSTEP_DONE = "bench.tick.done"
TICK_TIMEOUT_S = 30.0
"""A lockstep tick (or a handshake step) waits at most this long beyond the tick for the server."""
BYTES_PER_MS = SAMPLE_RATE // 1000
Pacing = Literal["auto", "realtime", "lockstep"]
PACINGS = ("auto", "realtime", "lockstep")


class RealtimeError(ModelError):
    """A realtime session broke down on the provider's side: an `error` event, or an event that breaks its protocol.

    The agent's error (its conversation ends as `agent_error`); `code` is the provider's error code, or
    "malformed_event" for an event bench could not read.
    """

    def __init__(self, message: str, *, code: str | None = None) -> None:
        self.code = code
        super().__init__(message)


class RealtimeConnectionError(ModelUnavailableError):
    """A realtime session could not be opened, or its socket dropped (an infrastructure failure: retried on resume)."""


@attrs.frozen(kw_only=True)
class VadSettings:
    """Server voice-activity detection (tau2's defaults)."""

    threshold: float = 0.5
    prefix_padding_ms: int = 300
    silence_duration_ms: int = 500


@attrs.frozen(kw_only=True)
class RealtimeSettings:
    """What a realtime session is opened with."""

    model: str
    base_url: str | None = None
    """A ws:// or wss:// URL (http(s) is turned into ws(s)); None: the provider's public endpoint."""
    api_key: str | None = attrs.field(default=None, repr=False)
    instructions: str = ""
    tools: tuple[Mapping[str, Any], ...] = ()
    """OpenAI chat-shaped schemas ({"type": "function", "function": {...}}); each adapter converts them."""
    voice: str | None = None
    tick_ms: int = TICK_MS
    vad: VadSettings = attrs.field(factory=VadSettings)
    pacing: Pacing = "auto"
    reasoning_effort: str | None = None
    connect_timeout_s: float = 30.0
    options: Mapping[str, Any] = attrs.field(factory=dict)
    """Provider specifics (e.g. OpenAI's transcription_model)."""


@attrs.frozen(kw_only=True)
class ToolResult:
    """A tool's result queued for the provider."""

    call_id: str
    output: str
    respond: bool
    """Ask for a new response after it (only the last result of a batch does)."""
    error: bool = False


@attrs.frozen(kw_only=True)
class TickOutput:
    """The agent's side of one tick, as the provider produced it."""

    tick: int
    audio: bytes
    """Exactly one tick of mu-law 8 kHz."""
    speech: bool = False
    """Some of the tick's audio came from the provider (the rest is padding)."""
    text: str = ""
    """The transcript of the audio played in this tick (each item's text in proportion to its audio)."""
    items: tuple[str, ...] = ()
    """Provider item ids whose audio was played in this tick."""
    tool_calls: tuple[ToolCall, ...] = ()
    truncated: bool = False
    """The agent's audio was cut in this tick (the user barged in)."""
    vad: tuple[str, ...] = ()
    """speech_started, speech_stopped, interrupted."""
    input_transcripts: tuple[tuple[str, str], ...] = ()
    """(item id, text): what the provider's recogniser heard of the user, as it reported it in this tick."""
    usage: tuple[Mapping[str, Any], ...] = ()
    """Usage records (tau2's UsageRecord fields) reported in this tick."""
    info: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.define
class _Item:
    """One provider item: audio received and played, transcript received and released."""

    received: int = 0
    played: int = 0
    text: str = ""
    shown: int = 0


@attrs.define
class _Tick:
    """What happened during the tick being played."""

    tick: int
    start_ms: int
    """User audio sent before this tick, in ms (the provider's input-audio clock)."""
    calls: list[ToolCall] = attrs.field(factory=list)
    vad: list[str] = attrs.field(factory=list)
    usage: list[Mapping[str, Any]] = attrs.field(factory=list)
    heard: list[tuple[str, str]] = attrs.field(factory=list)
    truncated: bool = False
    interruption_ms: int | None = None
    received: int = 0
    events: int = 0


class RealtimeAdapter:
    """One realtime session with a provider; subclasses write the wire protocol, the base class keeps the ticks."""

    provider: ClassVar[str] = ""
    default_url: ClassVar[str] = ""

    def __init__(self) -> None:
        self.settings: RealtimeSettings | None = None
        self.session_id: str | None = None
        self.lockstep = False
        self._ws: Any = None
        self._queue: list[list[Any]] = []  # [item id, bytearray] not yet played, in order
        self._items: dict[str, _Item] = {}
        self._cut: set[str] = set()
        self._results: list[ToolResult] = []
        self._user_ms = 0
        self._tick = _Tick(tick=-1, start_ms=0)
        self._reopen = False

    # ------------------------------------------------------------------ the wire part (override)

    def endpoint(self, settings: RealtimeSettings) -> tuple[str, dict[str, str]]:
        """The URL and the headers to open the WebSocket with."""
        raise NotImplementedError

    async def handshake(self, settings: RealtimeSettings) -> bool:
        """Send the session's settings and wait for the server to accept them; True when it announced lockstep."""
        raise NotImplementedError

    def audio_messages(self, packet: bytes) -> list[Any]:
        """The messages carrying one packet (20 ms) of the user's mu-law 8 kHz audio."""
        raise NotImplementedError

    def tool_result_messages(self, results: Sequence[ToolResult]) -> list[Any]:
        """The messages carrying a tick's tool results (and the request for a response)."""
        raise NotImplementedError

    async def handle(self, event: Mapping[str, Any]) -> None:
        """Act on one server event by calling the `on_*` methods (unknown events are ignored)."""
        raise NotImplementedError

    def closed_error(self, code: int | None, reason: str) -> Exception:
        """The error for a socket the server closed (override when a close code means a refused request)."""
        return RealtimeConnectionError(f"{self.provider}: the connection closed (code {code}{f': {reason}' if reason else ''})")

    # ------------------------------------------------------------------ session

    async def connect(self, settings: RealtimeSettings) -> None:
        """Open the session; raise RealtimeConnectionError when the server cannot be reached."""
        if settings.pacing not in PACINGS:
            raise ConfigError(f"realtime pacing must be one of {', '.join(PACINGS)}, not {settings.pacing!r}")
        self.settings = settings
        await self._open(settings)

    async def _open(self, settings: RealtimeSettings) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

        url, headers = self.endpoint(settings)
        try:
            self._ws = await connect(url, additional_headers=headers, open_timeout=settings.connect_timeout_s, max_size=2**24, ping_interval=None)
        except InvalidStatus as exc:
            raise _status_error(self.provider, exc.response.status_code, bytes(exc.response.body or b"")) from None
        except InvalidURI as exc:
            raise ConfigError(f"{self.provider}: not a WebSocket URL: {url!r} ({exc})") from None
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            raise RealtimeConnectionError(f"{self.provider}: cannot connect to {_where(url)}: {exc}") from None
        offered = await self.handshake(settings)
        if settings.pacing == "lockstep" and not offered:
            raise RealtimeError(f"{self.provider}: lockstep pacing was asked for, but the server does not offer it")
        self.lockstep = settings.pacing == "lockstep" or (settings.pacing == "auto" and offered)

    def reopen_next_tick(self) -> None:
        """Reconnect (and hand shake again) at the start of the next tick, e.g. when the server announced it will go away."""
        self._reopen = True

    async def close(self) -> None:
        """Close the socket; what was not played is dropped."""
        ws, self._ws = self._ws, None
        if ws is not None:
            try:
                await ws.close()
            except Exception:  # noqa: BLE001 - closing never masks how the conversation ended
                pass

    def send_tool_result(self, call_id: str, output: str, *, respond: bool, error: bool = False) -> None:
        """Queue a tool's result; it is sent at the start of the next tick, before that tick's audio."""
        self._results.append(ToolResult(call_id=call_id, output=output, respond=respond, error=error))

    # ------------------------------------------------------------------ transport

    async def send(self, message: Any) -> None:
        """Send one JSON message."""
        from websockets.exceptions import ConnectionClosed

        if self._ws is None:
            raise RealtimeConnectionError(f"{self.provider}: the session is not open")
        try:
            await self._ws.send(json.dumps(message))
        except ConnectionClosed as exc:
            raise self._closed(exc) from None

    async def receive(self, timeout: float) -> dict[str, Any] | None:
        """The next server event as a JSON object, or None when none came within `timeout` seconds."""
        from websockets.exceptions import ConnectionClosed

        if self._ws is None:
            raise RealtimeConnectionError(f"{self.provider}: the session is not open")
        try:
            raw = await asyncio.wait_for(self._ws.recv(), max(timeout, 0.0))
        except TimeoutError:
            return None
        except ConnectionClosed as exc:
            raise self._closed(exc) from None
        try:
            event = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            raise self.malformed(f"not JSON: {_snippet(raw)}") from None
        if not isinstance(event, dict):
            raise self.malformed(f"not a JSON object: {_snippet(raw)}")
        return event

    async def expect(self, wanted: str, timeout: float = TICK_TIMEOUT_S) -> dict[str, Any]:
        """Read events until one with `wanted` as its `type` (or as a top-level key); others go to `handle`."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            event = await self.receive(deadline - loop.time())
            if event is None:
                raise RealtimeConnectionError(f"{self.provider}: no {wanted} within {timeout:g} s")
            if event.get("type") == wanted or wanted in event:
                return event
            await self.handle(event)

    def _closed(self, exc: Any) -> Exception:
        received = getattr(exc, "rcvd", None)
        return self.closed_error(getattr(received, "code", None), getattr(received, "reason", "") or "")

    def malformed(self, detail: str) -> RealtimeError:
        """The error for an event that breaks the protocol."""
        return RealtimeError(f"{self.provider}: malformed event: {detail}", code="malformed_event")

    # ------------------------------------------------------------------ one tick

    async def run_tick(self, audio: bytes, tick: int) -> TickOutput:
        """Send one tick of the user's audio (after the queued tool results); the agent's side of the tick."""
        settings = self._settings()
        if self._reopen:
            self._reopen = False
            await self.close()
            await self._open(settings)
        self._tick = _Tick(tick=tick, start_ms=self._user_ms)
        results, self._results = self._results, []
        if results:
            for message in self.tool_result_messages(results):
                await self.send(message)
        packets = _packets(fit(audio, settings.tick_ms))
        if self.lockstep:
            await self._lockstep_tick(packets, tick, settings.tick_ms)
        else:
            await self._realtime_tick(packets, settings.tick_ms)
        self._user_ms += settings.tick_ms
        return self._finish(settings.tick_ms)

    async def _send_packet(self, packet: bytes) -> None:
        for message in self.audio_messages(packet):
            await self.send(message)

    async def _lockstep_tick(self, packets: list[bytes], tick: int, tick_ms: int) -> None:
        for packet in packets:
            await self._send_packet(packet)
        await self.send({"type": LOCKSTEP_TICK, "tick": tick})
        loop = asyncio.get_running_loop()
        deadline = loop.time() + tick_ms / 1000 + TICK_TIMEOUT_S
        while True:
            event = await self.receive(deadline - loop.time())
            if event is None:
                raise RealtimeConnectionError(f"{self.provider}: tick {tick} was not done within {TICK_TIMEOUT_S:g} s")
            if event.get("type") == LOCKSTEP_DONE and event.get("tick") == tick:
                return
            await self._dispatch(event)

    async def _realtime_tick(self, packets: list[bytes], tick_ms: int) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + tick_ms / 1000

        async def paced() -> None:
            for index, packet in enumerate(packets):
                if index:
                    await asyncio.sleep(PACKET_MS / 1000)
                await self._send_packet(packet)

        sender = asyncio.create_task(paced())
        try:
            while (left := deadline - loop.time()) > 0:
                event = await self.receive(left)
                if event is None:
                    break
                await self._dispatch(event)
            await sender
        finally:
            if not sender.done():
                sender.cancel()
                await asyncio.gather(sender, return_exceptions=True)

    async def _dispatch(self, event: dict[str, Any]) -> None:
        self._tick.events += 1
        await self.handle(event)

    def _finish(self, tick_ms: int) -> TickOutput:
        size = tick_bytes(tick_ms)
        played = bytearray()
        heard: dict[str, int] = {}
        while self._queue and len(played) < size:
            item, data = self._queue[0]
            take = data[: size - len(played)]
            played += take
            heard[item] = heard.get(item, 0) + len(take)
            del data[: len(take)]
            if not data:
                self._queue.pop(0)
        for item, count in heard.items():
            self._items[item].played += count
        state = self._tick
        info: dict[str, Any] = {
            "user_ms": state.start_ms,
            "received_bytes": state.received,
            "buffered_bytes": sum(len(data) for _, data in self._queue),
            "events": state.events,
        }
        if state.interruption_ms is not None:
            info["interruption_ms"] = state.interruption_ms
        return TickOutput(
            tick=state.tick,
            audio=fit(bytes(played), tick_ms),
            speech=bool(played),
            text=self._released(),
            items=tuple(heard),
            tool_calls=tuple(state.calls),
            truncated=state.truncated,
            vad=tuple(state.vad),
            input_transcripts=tuple(state.heard),
            usage=tuple(state.usage),
            info=info,
        )

    def _released(self) -> str:
        """Each item's transcript up to the share of its audio played so far, minus what earlier ticks released."""
        pieces = []
        for item in self._items.values():
            if not item.received or not item.text:
                continue
            upto = math.ceil(min(1.0, item.played / item.received) * len(item.text))
            if upto > item.shown:
                pieces.append(item.text[item.shown : upto])
                item.shown = upto
        return " ".join(p.strip() for p in pieces if p.strip()) if len(pieces) > 1 else "".join(pieces)

    def _settings(self) -> RealtimeSettings:
        if self.settings is None or self._ws is None:
            raise RealtimeConnectionError(f"{self.provider or type(self).__name__}: run_tick before connect")
        return self.settings

    # ------------------------------------------------------------------ what `handle` reports

    def on_audio(self, item: str, audio: bytes) -> None:
        """Agent audio (mu-law 8 kHz) of an item; ignored once the item was cut by a barge-in."""
        if item in self._cut or not audio:
            return
        self._items.setdefault(item, _Item()).received += len(audio)
        self._tick.received += len(audio)
        if self._queue and self._queue[-1][0] == item:
            self._queue[-1][1] += audio
        else:
            self._queue.append([item, bytearray(audio)])

    def on_transcript(self, item: str, text: str) -> None:
        """Transcript text of an item's audio (released as its audio is played)."""
        self._items.setdefault(item, _Item()).text += text

    def on_tool_call(self, call_id: str, name: str, arguments: Mapping[str, Any] | str | None) -> None:
        """A function call; arguments that are not a JSON object become {} (the call is still made, as tau2 does)."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError:
                arguments = {}
        self._tick.calls.append(ToolCall(id=call_id, name=name, arguments=dict(arguments) if isinstance(arguments, Mapping) else {}))

    def on_vad(self, kind: str) -> None:
        """A voice-activity event: speech_started, speech_stopped or interrupted."""
        self._tick.vad.append(kind)

    def on_input_transcript(self, item: str, text: str) -> None:
        """What the provider's recogniser heard of the user."""
        self._tick.heard.append((item, text))

    def on_usage(self, record: Mapping[str, Any]) -> None:
        """A usage record (tau2's UsageRecord fields; the tick number is filled in)."""
        self._tick.usage.append({**record, "tick_number": self._tick.tick})

    def on_barge_in(self, audio_start_ms: int | None = None) -> tuple[str, int] | None:
        """The user started speaking over the agent: cut its audio locally.

        With `audio_start_ms` (the provider's input-audio clock) the audio of this tick is kept up to that point
        (nothing when it lies before the tick); without it the tick's audio is kept. The rest is dropped, and later
        audio of a cut item is skipped. Returns (item, ms of it played) for a provider that must be told where its
        item was cut, or None when the agent was not speaking.
        """
        if not self._queue:
            return None
        tick_ms = self._settings().tick_ms
        keep = tick_bytes(tick_ms)
        if audio_start_ms is not None:
            offset = audio_start_ms - self._tick.start_ms
            self._tick.interruption_ms = offset
            keep = min(max(offset, 0), tick_ms) * BYTES_PER_MS
        kept: list[list[Any]] = []
        cut_item: str | None = None
        left = keep
        for item, data in self._queue:
            take = data[:left]
            left -= len(take)
            if take:
                kept.append([item, bytearray(take)])
            if len(take) < len(data):
                self._cut.add(item)
                cut_item = cut_item or item
        speaking = self._queue[-1][0]  # the item still arriving: the provider stops it, its late audio is skipped
        self._cut.add(speaking)
        cut_item = cut_item or speaking
        cut_played = self._items[cut_item].played + sum(len(data) for item, data in kept if item == cut_item)
        self._queue = kept
        self._tick.truncated = True
        return cut_item, cut_played // BYTES_PER_MS


def _packets(audio: bytes) -> list[bytes]:
    size = PACKET_MS * BYTES_PER_MS
    return [audio[i : i + size] for i in range(0, len(audio), size)]


def _status_error(provider: str, status: int, body: bytes) -> Exception:
    text = body.decode("utf-8", "replace")
    if status in (401, 403):
        return ModelAuthError(status, text)
    if status == 429 or status >= 500:
        return RealtimeConnectionError(f"{provider}: the server refused the connection: HTTP {status}: {text[:200]}")
    return ModelHTTPError(status, text)


def _where(url: str) -> str:
    return url.split("?", 1)[0]


def _snippet(raw: Any) -> str:
    text = raw if isinstance(raw, str) else bytes(raw).decode("utf-8", "replace")
    return repr(text[:120])


def b64decode(data: Any, what: str, provider: str) -> bytes:
    """Base64 audio from an event, or a malformed-event error naming the field."""
    if not isinstance(data, str):
        raise RealtimeError(f"{provider}: malformed event: {what} is not a base64 string", code="malformed_event")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raise RealtimeError(f"{provider}: malformed event: {what} is not valid base64", code="malformed_event") from None


def b64encode(data: bytes) -> str:
    """Audio as base64 text."""
    return base64.b64encode(data).decode("ascii")


def chat_function(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The function of a chat-shaped tool schema ({"type": "function", "function": {...}}), or the schema itself."""
    function = schema.get("function", schema)
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "parameters": function.get("parameters") or {"type": "object", "properties": {}},
    }
