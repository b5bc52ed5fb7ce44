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


class BaseClient:
    """A client of any kind: chat (`ModelClient`) here; plugins subclass it with a `kind` name and a call method."""

    kind = ""

    async def check(self) -> None:
        """Verify credentials and reachability before a run starts (raise ModelError)."""

    async def aclose(self) -> None:
        """Release connections."""


class ModelClient(BaseClient):
    """A connection to one chat endpoint for one role configuration."""

    kind = "chat"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion; raise bench_kernel.errors.ModelError subclasses on failure."""
        raise NotImplementedError


@attrs.define(kw_only=True)
class Model:
    """Base class of registered model backends: `client(config)` connects one role to an endpoint."""

    name: str
    description: str = ""

    def client(self, config: ModelConfig) -> BaseClient:
        """A client for this configuration (no I/O until it is used): chat, or a kind a plugin defines."""
        raise NotImplementedError
