"""Gemini Live over its raw WebSocket JSON protocol (BidiGenerateContent): PCM16 16 kHz in, 24 kHz out."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from bench_duplex import (
    RealtimeAdapter,
    RealtimeError,
    RealtimeSettings,
    Resampler,
    ToolResult,
    b64decode,
    b64encode,
    chat_function,
    pcm_bytes,
    pcm_samples,
    pcm_to_ulaw,
    ulaw_to_pcm,
)

from .openai import ws_url

DEFAULT_MODEL = "gemini-3.1-flash-live-preview"
DEFAULT_VOICE = "Zephyr"
DEFAULT_EFFORT = "high"
DEFAULT_URL = "wss://generativelanguage.googleapis.com/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
INPUT_RATE = 16000
OUTPUT_RATE = 24000
MAX_RESUMPTIONS = 3
REFUSED = (1007, 1008)
"""Close codes with which the server refuses a request (invalid argument, policy): the agent's error, not the line's."""


class GeminiLiveAdapter(RealtimeAdapter):
    """Gemini Live: `setup`, `realtimeInput`, `toolResponse`; `serverContent`, `toolCall`, `usageMetadata`, `goAway`."""

    provider: ClassVar[str] = "gemini"
    default_url: ClassVar[str] = DEFAULT_URL

    def __init__(self) -> None:
        super().__init__()
        self._to_server = Resampler(8000, INPUT_RATE)
        self._from_server: Resampler | None = None
        self._from_rate = OUTPUT_RATE
        self._turn = 0
        self._heard: list[str] = []
        self._names: dict[str, tuple[str, str]] = {}  # our call id -> (the provider's id, function name)
        self._handle: str | None = None
        self._resumptions = 0

    @property
    def item(self) -> str:
        """The synthetic id of the model's current turn (Gemini has no item ids)."""
        return f"gemini_item_{self._turn}"

    def endpoint(self, settings: RealtimeSettings) -> tuple[str, dict[str, str]]:
        """The BidiGenerateContent URL; the key goes in a header, never in the URL (URLs end up in logs)."""
        return ws_url(settings.base_url, self.default_url), ({"x-goog-api-key": settings.api_key} if settings.api_key else {})

    async def handshake(self, settings: RealtimeSettings) -> bool:
        """Send `setup` (with the resumption handle after a goAway) and wait for `setupComplete`."""
        await self.send({"setup": setup_message(settings, self._handle)})
        complete = (await self.expect("setupComplete"))["setupComplete"]
        return isinstance(complete, Mapping) and complete.get("bench_lockstep") is True

    def audio_messages(self, packet: bytes) -> list[Any]:
        """The packet as PCM16 at 16 kHz."""
        samples = self._to_server.convert(ulaw_to_pcm(packet))
        return [{"realtimeInput": {"audio": {"data": b64encode(pcm_bytes(samples)), "mimeType": f"audio/pcm;rate={INPUT_RATE}"}}}]

    def tool_result_messages(self, results: Sequence[ToolResult]) -> list[Any]:
        """One toolResponse for the tick's results (Gemini answers after them by itself)."""
        responses = []
        for result in results:
            original, name = self._names.get(result.call_id, (result.call_id, ""))
            key = "error" if result.error else "output"
            responses.append({"id": original, "name": name, "response": {key: result.output}})
        return [{"toolResponse": {"functionResponses": responses}}]

    async def handle(self, event: Mapping[str, Any]) -> None:
        """Act on one server message (its fields may come together)."""
        if "error" in event:
            raise provider_error(event["error"])
        content = event.get("serverContent")
        if isinstance(content, Mapping):
            self._content(content)
        elif content is not None:
            raise self.malformed("serverContent is not an object")
        if "toolCall" in event:
            self._tool_call(event["toolCall"])
        if isinstance(event.get("usageMetadata"), Mapping):
            self.on_usage(usage_record(event["usageMetadata"], self.settings.model if self.settings else ""))
        update = event.get("sessionResumptionUpdate")
        if isinstance(update, Mapping) and update.get("resumable") and isinstance(update.get("newHandle"), str):
            self._handle = update["newHandle"]
        if "goAway" in event and self._handle is not None and self._resumptions < MAX_RESUMPTIONS:
            self._resumptions += 1
            self.reopen_next_tick()

    def closed_error(self, code: int | None, reason: str) -> Exception:
        """A close that refuses the request is the agent's error; any other is the line's."""
        if code in REFUSED:
            return RealtimeError(f"gemini: the server refused the session (code {code}): {reason}", code=str(code))
        return super().closed_error(code, reason)

    def _content(self, content: Mapping[str, Any]) -> None:
        heard = content.get("inputTranscription")
        if isinstance(heard, Mapping) and isinstance(heard.get("text"), str):
            self._heard.append(heard["text"])
        turn = content.get("modelTurn")
        if turn is not None:
            self._flush_heard()
            for part in _parts(self, turn):
                self._audio_part(part)
        said = content.get("outputTranscription")
        if isinstance(said, Mapping) and isinstance(said.get("text"), str):
            self.on_transcript(self.item, said["text"])
        if content.get("interrupted") is True:
            self._flush_heard()
            self.on_vad("interrupted")
            self.on_barge_in(None)
            self._next_turn()
        elif content.get("turnComplete") is True:
            self._flush_heard()
            self._next_turn()

    def _audio_part(self, part: Mapping[str, Any]) -> None:
        inline = part.get("inlineData")
        if not isinstance(inline, Mapping):
            return
        mime = str(inline.get("mimeType") or f"audio/pcm;rate={OUTPUT_RATE}")
        if not mime.startswith("audio/pcm"):
            return
        rate = _rate(mime)
        if self._from_server is None or rate != self._from_rate:
            self._from_server, self._from_rate = Resampler(rate, 8000), rate
        samples = pcm_samples(b64decode(inline.get("data"), "inlineData.data", self.provider))
        self.on_audio(self.item, pcm_to_ulaw(self._from_server.convert(samples)))

    def _tool_call(self, call: Any) -> None:
        calls = call.get("functionCalls") if isinstance(call, Mapping) else None
        if not isinstance(calls, list):
            raise self.malformed("toolCall without a functionCalls list")
        for entry in calls:
            if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
                raise self.malformed("a function call without a name")
            original = str(entry["id"]) if isinstance(entry.get("id"), str) else ""
            ours = original or f"gemini_{secrets.token_hex(4)}"
            self._names[ours] = (original, entry["name"])
            self.on_tool_call(ours, entry["name"], entry.get("args") if isinstance(entry.get("args"), Mapping) else {})

    def _flush_heard(self) -> None:
        if self._heard:
            self.on_input_transcript(f"gemini_input_{self._turn}", "".join(self._heard).strip())
            self._heard = []

    def _next_turn(self) -> None:
        self._turn += 1
        if self._from_server is not None:
            self._from_server.reset()


def setup_message(settings: RealtimeSettings, handle: str | None = None) -> dict[str, Any]:
    """The `setup` message: model, audio out with its voice, instructions, tools, VAD, transcriptions, resumption."""
    model = settings.model if settings.model.startswith("models/") else f"models/{settings.model}"
    generation: dict[str, Any] = {
        "responseModalities": ["AUDIO"],
        "speechConfig": {"voiceConfig": {"prebuiltVoiceConfig": {"voiceName": settings.voice or DEFAULT_VOICE}}},
    }
    effort = settings.reasoning_effort or DEFAULT_EFFORT
    if effort:
        generation["thinkingConfig"] = {"thinkingLevel": effort.upper()}
    setup: dict[str, Any] = {
        "model": model,
        "generationConfig": generation,
        "systemInstruction": {"parts": [{"text": settings.instructions}]},
        "tools": [{"functionDeclarations": [chat_function(tool) for tool in settings.tools]}] if settings.tools else [],
        "realtimeInputConfig": {
            "automaticActivityDetection": {"prefixPaddingMs": settings.vad.prefix_padding_ms, "silenceDurationMs": settings.vad.silence_duration_ms}
        },
        "inputAudioTranscription": {},
        "outputAudioTranscription": {},
        "sessionResumption": {"handle": handle} if handle else {},
    }
    return setup


def provider_error(error: Any) -> RealtimeError:
    """The typed error for an error message ({"error": {"code", "message", "status"}})."""
    details = error if isinstance(error, Mapping) else {"message": str(error)}
    code = details.get("status") or details.get("code")
    message = details.get("message") or "the server sent an error"
    return RealtimeError(f"gemini: {message}" + (f" ({code})" if code else ""), code=str(code) if code else None)


def usage_record(usage: Mapping[str, Any], model: str) -> dict[str, Any]:
    """usageMetadata as a tau2 UsageRecord (thoughts are billed as text output)."""
    prompt = _by_modality(usage.get("promptTokensDetails"))
    response = _by_modality(usage.get("responseTokensDetails"))
    cached = _by_modality(usage.get("cacheTokensDetails"))
    thoughts = _int(usage.get("thoughtsTokenCount")) or 0
    output_text = (response.get("TEXT") or 0) + thoughts if response or thoughts else None
    return {
        "provider": "gemini",
        "model": model,
        "component": "realtime",
        "semantics": "delta",
        "scope_id": "",
        "billable": True,
        "input_tokens": _int(usage.get("promptTokenCount")),
        "output_tokens": (_int(usage.get("responseTokenCount")) or 0) + thoughts if "responseTokenCount" in usage else None,
        "input_text_tokens": prompt.get("TEXT"),
        "input_audio_tokens": prompt.get("AUDIO"),
        "input_cached_tokens": _int(usage.get("cachedContentTokenCount")),
        "input_cached_text_tokens": cached.get("TEXT"),
        "input_cached_audio_tokens": cached.get("AUDIO"),
        "output_text_tokens": output_text,
        "output_audio_tokens": response.get("AUDIO"),
        "raw": dict(usage),
    }


def _by_modality(details: Any) -> dict[str, int]:
    found: dict[str, int] = {}
    for entry in details if isinstance(details, list) else []:
        if isinstance(entry, Mapping) and isinstance(entry.get("modality"), str):
            found[entry["modality"]] = found.get(entry["modality"], 0) + (_int(entry.get("tokenCount")) or 0)
    return found


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _rate(mime: str) -> int:
    for part in mime.split(";"):
        key, _, value = part.strip().partition("=")
        if key == "rate" and value.isdigit() and int(value) > 0:
            return int(value)
    return OUTPUT_RATE


def _parts(adapter: RealtimeAdapter, turn: Any) -> list[Mapping[str, Any]]:
    parts = turn.get("parts", []) if isinstance(turn, Mapping) else None
    if not isinstance(parts, list) or not all(isinstance(p, Mapping) for p in parts):
        raise adapter.malformed("modelTurn.parts is not a list of objects")
    return parts
