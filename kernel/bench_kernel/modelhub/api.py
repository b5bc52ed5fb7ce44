"""What a model backend is: per-role configuration, requests, responses and clients."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from bench_kernel.schema.messages import ToolCall

MAX_IN_FLIGHT = 4096
"""Conversations or requests in flight at most: each request slot costs memory and connections."""
DEFAULT_IN_FLIGHT = 64
"""Requests in flight of a client made outside a run from a configuration that sets no limit."""


DEFAULT_BACKEND = "openai"
"""The backend a role uses unless told otherwise (bench-openai: any OpenAI-compatible server)."""


@attrs.frozen(kw_only=True)
class ModelConfig:
    """How one role (agent, user, judge) reaches its model; holds the name of the key variable, never the key."""

    backend: str = DEFAULT_BACKEND
    """Registered backend name (a plugin's `register_models`)."""
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    sampling: dict[str, Any] = attrs.field(factory=dict)
    """Sampling arguments sent with every request (temperature, top_p, max_tokens, ...)."""
    timeout_s: float = 120.0
    max_concurrency: int | None = None
    """Requests in flight to this endpoint at most; None lets the run decide (see `ModelHub.in_flight_limits`)."""
    max_retries: int = 5
    options: dict[str, Any] = attrs.field(factory=dict)
    """Backend-specific options (e.g. vllm: reasoning handling, tool-call parsing)."""

    def in_flight(self) -> int:
        """The limit a client applies: the configured one, or DEFAULT_IN_FLIGHT when none was resolved."""
        return self.max_concurrency if self.max_concurrency is not None else DEFAULT_IN_FLIGHT

    def endpoint_key(self) -> str:
        """Identifies an endpoint: one client and one concurrency limit per key."""
        return f"{self.backend}|{self.base_url}|{self.model}"


@attrs.frozen(kw_only=True)
class ChatRequest:
    """An OpenAI-style chat completion request, backend-neutral."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | None = None
    sampling: Mapping[str, Any] = attrs.field(factory=dict)
    seed: int | None = None
    response_format: dict[str, Any] | None = None


@attrs.frozen(kw_only=True)
class ChatResponse:
    """What a model answered (already parsed and validated by the backend)."""

    content: str | None
    tool_calls: list[ToolCall] = attrs.field(factory=list)
    reasoning: str | None = None
    finish_reason: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: int | None = None
    attempts: int = 1
    raw: Mapping[str, Any] | None = None
    cost: float | None = None
    """USD the backend itself priced the call at (bench-litellm: litellm's price map); None leaves it to the run's price table."""


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


@attrs.frozen(kw_only=True)
class EmbeddingRequest:
    """Texts to embed (an `embeddings` role, e.g. a memory evaluator)."""

    texts: list[str]


@attrs.frozen(kw_only=True)
class Embeddings:
    """One vector per text, in order."""

    vectors: list[list[float]]
    prompt_tokens: int | None = None
    latency_ms: int | None = None


class _Client:
    async def check(self) -> None:
        """Verify credentials and reachability before a run starts (raise ModelError)."""

    async def aclose(self) -> None:
        """Release connections."""


class ModelClient(_Client):
    """A connection to one chat endpoint for one role configuration."""

    kind = "chat"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion; raise bench_kernel.errors.ModelError subclasses on failure."""
        raise NotImplementedError


class SpeechClient(_Client):
    """A speech synthesiser (local engine or an HTTP speech endpoint)."""

    kind = "tts"

    async def synthesize(self, request: SpeechRequest) -> Audio:
        """Speak one text."""
        raise NotImplementedError


class TranscriptionClient(_Client):
    """A speech recogniser."""

    kind = "asr"

    async def transcribe(self, request: TranscriptionRequest) -> Transcription:
        """Transcribe one recording."""
        raise NotImplementedError


class EmbeddingClient(_Client):
    """A text embedder."""

    kind = "embeddings"

    async def embed(self, request: EmbeddingRequest) -> Embeddings:
        """Embed texts."""
        raise NotImplementedError


AnyClient = ModelClient | SpeechClient | TranscriptionClient | EmbeddingClient


@attrs.define(kw_only=True)
class Model:
    """Base class of registered model backends: `client(config)` connects one role to an endpoint."""

    name: str
    description: str = ""

    def client(self, config: ModelConfig) -> AnyClient:
        """A client for this configuration (no I/O until it is used): chat, speech, transcription or embeddings."""
        raise NotImplementedError
