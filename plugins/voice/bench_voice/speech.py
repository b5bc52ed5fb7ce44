"""Speech model kinds: synthesis (`tts` roles) and recognition (`asr` roles), called through the run's model hub, and
the run's speech cache.

A backend's `Model.client(config)` returns a `SpeechClient` or a `TranscriptionClient` (piper and faster-whisper here);
callers reach a role through `SpeechModels(models)`, so each call is checked against the cost cap, priced and ledgered
by the kernel (`ConversationModels.call`). The speech cache keeps every synthesis and transcription in the results
database, keyed by `speech_key`, so every arm, noise level, trial, worker and resume of a run reuses them;
`--no-speech-cache` (`ModelHub.speech_cache`) turns it off.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

import attrs

from bench_kernel import BaseClient, ConversationModels, LedgerEntry, ModelConfig, canonical_json, unstructure

R = TypeVar("R")


@attrs.frozen(kw_only=True)
class SpeechRequest:
    """Text to synthesise (a `tts` role)."""

    text: str
    voice: str | None = None
    options: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Audio:
    """Audio as bytes (WAV unless `format` says otherwise) with its sample rate."""

    data: bytes
    sample_rate: int
    format: str = "wav"
    latency_ms: int | None = None
    """How long the engine took to produce it (0 when the run's speech cache answered)."""
    cached: bool = False
    """Answered from the run's speech cache: no engine ran for this request."""


@attrs.frozen(kw_only=True)
class TranscriptionRequest:
    """Audio to transcribe (an `asr` role)."""

    audio: Audio
    language: str | None = None
    options: Mapping[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class Transcription:
    """What a recogniser heard."""

    text: str
    latency_ms: int | None = None
    raw: Mapping[str, Any] | None = None
    cached: bool = False
    """Answered from the run's speech cache (the same recording was recognised before): no engine ran."""


class SpeechClient(BaseClient):
    """A speech synthesiser (local engine or an HTTP speech endpoint)."""

    kind = "tts"

    async def synthesize(self, request: SpeechRequest) -> Audio:
        """Speak one text."""
        raise NotImplementedError


class TranscriptionClient(BaseClient):
    """A speech recogniser."""

    kind = "asr"

    async def transcribe(self, request: TranscriptionRequest) -> Transcription:
        """Transcribe one recording."""
        raise NotImplementedError


def speech_key(config: ModelConfig, request: SpeechRequest | TranscriptionRequest) -> str:
    """The speech cache's key: engine and voice (or recogniser model), the role's options and the request; a recording
    to transcribe counts by its sha256, so only the very same samples (noise included) are recognised once."""
    if isinstance(request, TranscriptionRequest):
        audio = request.audio
        body: dict[str, Any] = {
            "audio_sha256": hashlib.sha256(audio.data).hexdigest(),
            "format": audio.format,
            "sample_rate": audio.sample_rate,
            "language": request.language,
        }
    else:
        body = {"text": request.text, "voice": request.voice}
    payload = {
        "kind": "asr" if isinstance(request, TranscriptionRequest) else "tts",
        "endpoint": config.endpoint_key(),
        "options": config.options,
        "sampling": config.sampling,
        "request": {**body, "options": dict(request.options)},
    }
    return hashlib.sha256(canonical_json(payload).encode()).hexdigest()


def _audio_json(audio: Audio) -> str:
    return json.dumps({"data": base64.b64encode(audio.data).decode("ascii"), "sample_rate": audio.sample_rate, "format": audio.format})


def _audio_from_json(text: str) -> Audio:
    data = json.loads(text)
    return Audio(data=base64.b64decode(data["data"]), sample_rate=data["sample_rate"], format=data["format"], latency_ms=0, cached=True)


def _transcription_json(transcription: Transcription) -> str:
    return canonical_json({"text": transcription.text, "raw": unstructure(transcription.raw)})


def _transcription_from_json(text: str) -> Transcription:
    data = json.loads(text)
    return Transcription(text=data["text"], raw=data["raw"], latency_ms=0, cached=True)


_IN_FLIGHT: dict[tuple[int, str], asyncio.Future[str | None]] = {}
"""Speech requests in flight by (hub, key): a conversation asking for one waits for it rather than asking the engine
too. Entries live only while their request does."""


@attrs.frozen
class SpeechModels:
    """A conversation's speech roles: `synthesize` and `transcribe` through its model access (`ConversationModels`)."""

    models: ConversationModels

    async def synthesize(self, role: str, request: SpeechRequest) -> Audio:
        """Speech for a `tts` role: from the speech cache when this engine and voice said the text before; ledgered."""

        def call() -> Awaitable[Audio]:
            return self.models.call(role, SpeechClient, lambda engine: engine.synthesize(request), key)

        key = speech_key(self.models.config(role), request) if self.models.hub.speech_cache else None
        return await self._reused(role, "tts", key, call, _audio_json, _audio_from_json)

    async def transcribe(self, role: str, request: TranscriptionRequest) -> Transcription:
        """A transcription for an `asr` role: from the speech cache when this recogniser heard the same recording; ledgered."""

        def call() -> Awaitable[Transcription]:
            return self.models.call(role, TranscriptionClient, lambda engine: engine.transcribe(request), key)

        key = speech_key(self.models.config(role), request) if self.models.hub.speech_cache else None
        return await self._reused(role, "asr", key, call, _transcription_json, _transcription_from_json)

    async def _reused(
        self, role: str, kind: str, key: str | None, call: Callable[[], Awaitable[R]], dump: Callable[[R], str], load: Callable[[str], R]
    ) -> R:
        """The answer stored under key (this run, any process, any earlier attempt), or the one being made for another
        conversation, or the engine's (then stored, committed with the loop's turn so a killed run keeps it)."""
        if key is None:  # the speech cache is off
            return await call()
        hub = self.models.hub
        hub.check_budget()
        while (pending := _IN_FLIGHT.get((id(hub), key))) is not None:
            text = await asyncio.shield(pending)
            if text is not None:  # None: that call failed, and this conversation asks for itself
                return self._hit(role, kind, key, load(text))
        stored = hub.store.cache_get(key) if hub.store is not None else None
        if stored is not None:
            return self._hit(role, kind, key, load(stored))
        future: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        _IN_FLIGHT[(id(hub), key)] = future
        text = None
        try:
            result = await call()
            text = dump(result)
            if hub.store is not None:
                hub.store.cache_put(key, text)
            return result
        finally:
            del _IN_FLIGHT[(id(hub), key)]
            future.set_result(text)

    def _hit(self, role: str, kind: str, key: str, result: R) -> R:
        """Ledger an answer from the speech cache: no engine ran, so it costs nothing and took no attempt."""
        entry = LedgerEntry(
            role=role,
            model=self.models.config(role).model,
            request_hash=key,
            prompt_tokens=None,
            completion_tokens=None,
            latency_ms=0,
            cost=0.0,
            cached=True,
            attempts=0,
            kind=kind,
        )
        self.models.record(entry)
        return result
