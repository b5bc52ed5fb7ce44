"""The OpenAI Realtime protocol (GA event names): mu-law both ways, server VAD, function calls, truncation on barge-in."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar
from urllib.parse import quote

from bench_duplex import (
    RealtimeAdapter,
    RealtimeError,
    RealtimeSettings,
    ToolResult,
    b64decode,
    b64encode,
    chat_function,
)

DEFAULT_MODEL = "gpt-realtime-1.5"
DEFAULT_VOICE = "alloy"
DEFAULT_URL = "wss://api.openai.com/v1/realtime"
TRANSCRIPTION_MODEL = "gpt-4o-transcribe"
# Event names of the GA API and of the beta one, which some compatible servers still send.
AUDIO_DELTAS = ("response.output_audio.delta", "response.audio.delta")
TRANSCRIPT_DELTAS = ("response.output_audio_transcript.delta", "response.audio_transcript.delta")


def ws_url(base_url: str | None, default: str) -> str:
    """A WebSocket URL from a configured base URL (http(s) becomes ws(s))."""
    url = base_url or default
    for plain, secure in (("http://", "ws://"), ("https://", "wss://")):
        if url.startswith(plain):
            url = secure + url[len(plain) :]
    return url


class OpenAIRealtimeAdapter(RealtimeAdapter):
    """OpenAI Realtime over its WebSocket: `session.update`, `input_audio_buffer.append`, server events."""

    provider: ClassVar[str] = "openai"
    default_url: ClassVar[str] = DEFAULT_URL

    def endpoint(self, settings: RealtimeSettings) -> tuple[str, dict[str, str]]:
        """`…/realtime?model=M` with a bearer key."""
        url = ws_url(settings.base_url, self.default_url)
        url += ("&" if "?" in url else "?") + "model=" + quote(settings.model, safe="")
        return url, ({"Authorization": f"Bearer {settings.api_key}"} if settings.api_key else {})

    async def handshake(self, settings: RealtimeSettings) -> bool:
        """Wait for session.created, send session.update, wait for session.updated."""
        created = await self.expect("session.created")
        session = created.get("session")
        if not isinstance(session, Mapping):
            raise self.malformed("session.created without a session object")
        self.session_id = session.get("id") if isinstance(session.get("id"), str) else None
        await self.send({"type": "session.update", "session": session_config(settings)})
        await self.expect("session.updated")
        return session.get("bench_lockstep") is True

    def audio_messages(self, packet: bytes) -> list[Any]:
        """One append of mu-law audio (no commits: the server's VAD decides turns)."""
        return [{"type": "input_audio_buffer.append", "audio": b64encode(packet)}]

    def tool_result_messages(self, results: Sequence[ToolResult]) -> list[Any]:
        """A function_call_output item per result, then response.create after each one that asks for a response."""
        messages: list[Any] = []
        for result in results:
            messages.append(
                {"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": result.call_id, "output": result.output}}
            )
            if result.respond:
                messages.append({"type": "response.create"})
        return messages

    async def handle(self, event: Mapping[str, Any]) -> None:
        """Act on one server event."""
        kind = event.get("type")
        if not isinstance(kind, str):
            raise self.malformed("an event without a type")
        if kind == "error":
            raise provider_error(event)
        if kind in AUDIO_DELTAS:
            self.on_audio(_text(self, event, "item_id"), b64decode(event.get("delta"), f"{kind}.delta", self.provider))
        elif kind in TRANSCRIPT_DELTAS:
            self.on_transcript(_text(self, event, "item_id"), _text(self, event, "delta"))
        elif kind == "response.function_call_arguments.done":
            self.on_tool_call(_text(self, event, "call_id"), _text(self, event, "name"), event.get("arguments"))
        elif kind == "input_audio_buffer.speech_started":
            await self._speech_started(event)
        elif kind == "input_audio_buffer.speech_stopped":
            self.on_vad("speech_stopped")
        elif kind == "conversation.item.input_audio_transcription.completed":
            self.on_input_transcript(str(event.get("item_id") or ""), _text(self, event, "transcript"))
        elif kind == "response.done":
            self._response_done(event)

    async def _speech_started(self, event: Mapping[str, Any]) -> None:
        self.on_vad("speech_started")
        start = event.get("audio_start_ms")
        cut = self.on_barge_in(start if isinstance(start, int) and not isinstance(start, bool) else None)
        if cut is not None:
            item, played_ms = cut
            # The server keeps the item's transcript only up to what the user heard.
            await self.send({"type": "conversation.item.truncate", "item_id": item, "content_index": 0, "audio_end_ms": played_ms})

    def _response_done(self, event: Mapping[str, Any]) -> None:
        response = event.get("response")
        if not isinstance(response, Mapping):
            raise self.malformed("response.done without a response object")
        usage = response.get("usage")
        if isinstance(usage, Mapping):
            model = self.settings.model if self.settings else ""
            self.on_usage(usage_record(usage, model, str(response.get("id") or self.session_id or "")))


def session_config(settings: RealtimeSettings) -> dict[str, Any]:
    """The GA `session` object: instructions, tools, mu-law both ways, server VAD, input transcription."""
    vad = settings.vad
    audio_in: dict[str, Any] = {
        "format": {"type": "audio/pcmu"},
        "transcription": {
            "model": settings.options.get("transcription_model", TRANSCRIPTION_MODEL),
            "language": settings.options.get("language", "en"),
        },
        "noise_reduction": {"type": "near_field"},
        "turn_detection": {
            "type": "server_vad",
            "threshold": vad.threshold,
            "prefix_padding_ms": vad.prefix_padding_ms,
            "silence_duration_ms": vad.silence_duration_ms,
        },
    }
    session: dict[str, Any] = {
        "type": "realtime",
        "instructions": settings.instructions,
        "output_modalities": ["audio"],
        "tools": [{"type": "function", **chat_function(tool)} for tool in settings.tools],
        "tool_choice": "auto",
        "audio": {"input": audio_in, "output": {"format": {"type": "audio/pcmu"}, "voice": settings.voice or DEFAULT_VOICE}},
    }
    if settings.reasoning_effort:
        session["reasoning"] = {"effort": settings.reasoning_effort}
    return session


def provider_error(event: Mapping[str, Any]) -> RealtimeError:
    """The typed error for an `error` event."""
    error = event.get("error")
    details = error if isinstance(error, Mapping) else {}
    message = details.get("message") or "the server sent an error event"
    code = details.get("code") or details.get("type")
    return RealtimeError(f"openai: {message}" + (f" ({code})" if code else ""), code=str(code) if code else None)


def usage_record(usage: Mapping[str, Any], model: str, scope: str) -> dict[str, Any]:
    """A response's usage as a tau2 UsageRecord (a delta)."""
    inputs = _mapping(usage.get("input_token_details"))
    cached = _mapping(inputs.get("cached_tokens_details"))
    outputs = _mapping(usage.get("output_token_details"))
    return {
        "provider": "openai",
        "model": model,
        "component": "realtime",
        "semantics": "delta",
        "scope_id": scope,
        "billable": True,
        "input_tokens": _int(usage.get("input_tokens")),
        "output_tokens": _int(usage.get("output_tokens")),
        "input_text_tokens": _int(inputs.get("text_tokens")),
        "input_audio_tokens": _int(inputs.get("audio_tokens")),
        "input_cached_tokens": _int(inputs.get("cached_tokens")),
        "input_cached_text_tokens": _int(cached.get("text_tokens")),
        "input_cached_audio_tokens": _int(cached.get("audio_tokens")),
        "output_text_tokens": _int(outputs.get("text_tokens")),
        "output_audio_tokens": _int(outputs.get("audio_tokens")),
        "raw": dict(usage),
    }


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(adapter: RealtimeAdapter, event: Mapping[str, Any], field: str) -> str:
    value = event.get(field)
    if not isinstance(value, str):
        raise adapter.malformed(f"{event.get('type')} without a string {field}")
    return value
