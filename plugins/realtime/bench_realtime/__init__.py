"""bench-realtime: realtime speech-to-speech agents (OpenAI Realtime, Gemini Live) for full-duplex conversations."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from bench_kernel import Agent, ChatRequest, ChatResponse, Model, ModelClient, ModelConfig, hookimpl

from .cascade.plugin import register_metrics

__all__ = ["RealtimeBackend", "RealtimeCheckClient", "register_agents", "register_metrics", "register_models"]


class RealtimeCheckClient(ModelClient):
    """The agent role's client on a realtime backend: it checks the endpoint; the realtime agent opens its own sessions."""

    kind = "realtime"

    def __init__(self, provider: str, config: ModelConfig) -> None:
        self.provider = provider
        self.config = config

    async def check(self) -> None:
        """Open a session with the role's model, URL and key, and close it (ModelError when that fails)."""
        from bench_duplex import RealtimeSettings

        from .agent import adapter_class, read_key

        adapter = adapter_class(self.provider)()
        settings = RealtimeSettings(
            model=self.config.model,
            base_url=self.config.base_url,
            api_key=read_key(self.config.api_key_env),
            connect_timeout_s=min(self.config.timeout_s, 30.0),
        )
        try:
            await adapter.connect(settings)
        finally:
            await adapter.close()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Refused: a realtime model speaks through the realtime agent, not through chat requests."""
        from bench_kernel import ModelError

        raise ModelError(f"the {self.provider} realtime backend serves the realtime agent only, not chat requests")


@attrs.define(kw_only=True)
class RealtimeBackend(Model):
    """A realtime provider as a model backend (its client checks credentials before a run)."""

    provider: str = "openai"

    def client(self, config: ModelConfig) -> RealtimeCheckClient:
        """A checking client (no I/O until `check`)."""
        return RealtimeCheckClient(self.provider, config)


@hookimpl
def register_models(register: Callable[[Model], None]) -> None:
    """openai-realtime and gemini-live."""
    register(RealtimeBackend(name="openai-realtime", provider="openai", description="OpenAI Realtime over WebSocket (for --agent realtime)"))
    register(
        RealtimeBackend(
            name="gemini-live", provider="gemini", description="Gemini Live over WebSocket (for --agent realtime --agent-option provider=gemini)"
        )
    )


@hookimpl
def register_agents(register: Callable[[Agent], None]) -> None:
    """The realtime agent, and the offline voice-cascade agent when its package is there."""
    from .agent import RealtimeAgent
    from .cascade.agent import VoiceCascadeAgent

    register(RealtimeAgent())
    register(VoiceCascadeAgent())
