"""The `realtime` agent: a provider's speech-to-speech model plays the agent in a full-duplex conversation."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import attrs
from bench_duplex import PACINGS, Chunk, DuplexAgentSession, RealtimeAdapter, RealtimeSettings, TickOutput, duplex_settings, fit

from bench_kernel import (
    Agent,
    ConfigError,
    ConversationSetup,
    LedgerEntry,
    ModelConfig,
    ToolCall,
    ToolMessage,
)

from .prices import cost_of

TRANSFER_TOOL = "transfer_to_human_agents"
PROFILE_TEXT = "realtime_agent"
"""A profile text that replaces the voice block below (placeholder {{policy}})."""
VOICE_BLOCK = """You are the customer service agent on a phone call. You hear the caller's voice and answer with yours.

- Speak the way people talk on the phone: short sentences, one question at a time, no lists, no markdown.
- Speech recognition mishears names, emails and ids. Ask the caller to spell them letter by letter, read them back
  letter by letter, and go on only once the caller confirms.
- When a lookup finds nothing, do not guess: ask the caller to spell the value again and try once more.
- While a tool runs, say briefly what you are doing, so the caller is not left in silence.

Follow the policy below."""


@attrs.frozen(kw_only=True)
class Provider:
    """A provider's adapter and the defaults of its model role."""

    adapter: str
    """Module-relative import path `module:Class`."""
    backend: str
    model: str
    key_env: str
    voice: str


PROVIDERS: dict[str, Provider] = {
    "openai": Provider(
        adapter="openai:OpenAIRealtimeAdapter", backend="openai-realtime", model="gpt-realtime-1.5", key_env="OPENAI_API_KEY", voice="alloy"
    ),
    "gemini": Provider(
        adapter="gemini:GeminiLiveAdapter", backend="gemini-live", model="gemini-3.1-flash-live-preview", key_env="GEMINI_API_KEY", voice="Zephyr"
    ),
}
BACKENDS = {p.backend: name for name, p in PROVIDERS.items()}


def adapter_class(provider: str) -> type[RealtimeAdapter]:
    """The adapter class of a provider (imported when first needed)."""
    import importlib

    module, _, name = PROVIDERS[provider].adapter.partition(":")
    cls: type[RealtimeAdapter] = getattr(importlib.import_module(f"bench_realtime.{module}"), name)
    return cls


def provider_of(options: Mapping[str, Any], config: ModelConfig | None = None) -> str:
    """The provider an agent plays with: the `provider` option, else the one the role's backend names, else openai."""
    chosen = options.get("provider")
    if chosen is None and config is not None:
        chosen = BACKENDS.get(config.backend)
    chosen = str(chosen or "openai")
    if chosen not in PROVIDERS:
        raise ConfigError(f"realtime agent: unknown provider {chosen!r} (choose one of {', '.join(PROVIDERS)})")
    return chosen


def read_key(variable: str | None) -> str | None:
    """The key from the named environment variable; the error names the variable, never a value."""
    if variable is None:
        return None
    key = os.environ.get(variable)
    if not key:
        raise ConfigError(f"environment variable {variable} is not set; it must hold the API key")
    return key


def instructions(setup: ConversationSetup) -> str:
    """Our voice block (or the profile's `realtime_agent` text) and the domain's policy, then the persona if shown."""
    texts = getattr(setup.profile, "texts", {})
    base = str(setup.profile.render(PROFILE_TEXT, policy=setup.policy)) if PROFILE_TEXT in texts else f"{VOICE_BLOCK}\n\n{setup.policy}"
    if setup.exposure == "persona" and setup.task.user_scenario.persona:
        # MM-tau-p2's persona injection, as turn-based agents get it (the profile's `persona` text).
        return f"{base}\n\n{setup.profile.render('persona', persona=setup.task.user_scenario.persona)}"
    return base


def settings_for(setup: ConversationSetup, provider: str, config: ModelConfig) -> RealtimeSettings:
    """The session's settings from the run: the role's model, URL and key, the agent's options, the duplex tick."""
    options = dict(setup.options.get("agent") or {})
    pacing = str(options.get("pacing", config.options.get("pacing", "auto")))
    if pacing not in PACINGS:
        raise ConfigError(f"realtime agent: pacing must be one of {', '.join(PACINGS)}, not {pacing!r}")
    duplex = duplex_settings(setup)
    assert duplex is not None
    known = {"provider", "voice", "reasoning_effort", "pacing"}
    return RealtimeSettings(
        model=config.model,
        base_url=config.base_url,
        api_key=read_key(config.api_key_env),
        instructions=instructions(setup),
        tools=tuple(setup.agent_tools),
        voice=str(options.get("voice") or PROVIDERS[provider].voice),
        tick_ms=duplex.tick_ms,
        pacing=pacing,  # type: ignore[arg-type]
        reasoning_effort=_text_or_none(options.get("reasoning_effort")),
        connect_timeout_s=min(config.timeout_s, 60.0),
        options={**config.options, **{k: v for k, v in options.items() if k not in known}},
    )


def _text_or_none(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


@attrs.frozen(kw_only=True)
class RealtimeTranscript:
    """What the provider's recogniser heard of the user (an input transcription), for word-error metrics."""

    kind: ClassVar[str] = "realtime.transcript"
    item: str
    text: str
    tick: int


@attrs.define(kw_only=True)
class RealtimeAgent(Agent):
    """Plays a provider's realtime model over its streaming protocol, one tick at a time (full duplex only)."""

    name: str = "realtime"
    description: str = (
        "A provider's speech-to-speech model (OpenAI Realtime, Gemini Live) in full duplex: "
        "--agent-option provider=openai|gemini, voice, reasoning_effort, pacing=auto|realtime|lockstep."
    )
    duplex_only: bool = True
    model_roles: tuple[str, ...] = ("agent",)
    calls_models_itself: bool = False
    exposures: tuple[str, ...] = ("none", "persona")
    """A provider session's instructions are set once: the persona can be given, an inferred profile (context) not."""

    def default_models(self, options: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """The agent role's defaults for the chosen provider: its realtime backend, model and key variable."""
        provider = PROVIDERS[provider_of(options)]
        return {"agent": {"backend": provider.backend, "model": provider.model, "api_key_env": provider.key_env}}

    def start(self, setup: ConversationSetup) -> RealtimeSession:
        """A session for one full-duplex conversation (the provider session opens at the first tick)."""
        if setup.duplex is None:
            raise ConfigError("the realtime agent plays only in --mode full-duplex")
        if setup.models is None or not setup.models.has("agent"):
            raise ConfigError("the realtime agent needs the agent role's model (--agent-model, --agent-base-url)")
        config = setup.models.config("agent")
        provider = provider_of(setup.options.get("agent") or {}, config)
        return RealtimeSession(setup=setup, adapter=adapter_class(provider)(), settings=settings_for(setup, provider, config))


@attrs.define(kw_only=True)
class RealtimeSession(DuplexAgentSession):
    """One conversation's provider session, stepped tick by tick."""

    setup: ConversationSetup
    adapter: RealtimeAdapter
    settings: RealtimeSettings
    source: str = "realtime"
    connected: bool = False

    async def step(self, tick: int, heard: Chunk, results: Sequence[ToolMessage]) -> Chunk:
        """Queue the last tick's results, play this tick, and map what the provider did to a chunk."""
        if not self.connected:
            await self.adapter.connect(self.settings)
            self.connected = True
        for index, result in enumerate(results):
            # Only the last result of a batch asks for a response, so the model answers once for all of them.
            self.adapter.send_tool_result(result.id, result.content or "", respond=index == len(results) - 1, error=result.error)
        output = await self.adapter.run_tick(fit(heard.audio, self.settings.tick_ms), tick)
        self._record(output)
        return chunk_of(output)

    def _record(self, output: TickOutput) -> None:
        for item, text in output.input_transcripts:
            self.setup.events.emit(RealtimeTranscript(item=item, text=text, tick=output.tick), source=self.source)
        if self.setup.models is None:
            return
        for record in output.usage:
            self.setup.models.charge(ledger_entry(record, self.settings.model))

    async def close(self) -> None:
        """Close the provider session."""
        await self.adapter.close()


def chunk_of(output: TickOutput) -> Chunk:
    """The agent's chunk for a tick; a transfer to a human ends the conversation (the call is still made)."""
    calls = tuple(ToolCall(id=c.id, name=c.name, arguments=dict(c.arguments), requestor="assistant") for c in output.tool_calls)
    return Chunk(
        audio=output.audio,
        text=output.text,
        speech=output.speech,
        utterance=output.items[0] if output.items else None,
        tool_calls=calls,
        stop=any(c.name == TRANSFER_TOOL for c in calls),
        truncated=output.truncated,
        vad=output.vad,
        info=dict(output.info),
    )


def ledger_entry(record: Mapping[str, Any], model: str) -> LedgerEntry:
    """A usage record as a ledger entry of the agent role (cost from the realtime rates, None when unknown)."""
    return LedgerEntry(
        role="agent",
        model=str(record.get("model") or model),
        request_hash=None,
        prompt_tokens=record.get("input_tokens"),
        completion_tokens=record.get("output_tokens"),
        latency_ms=None,
        cost=cost_of(record),
        cached=False,
        kind="realtime",
    )
