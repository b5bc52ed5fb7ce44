"""`voice-cascade`: an offline realtime agent. bench serves it over the OpenAI Realtime protocol and plays it through
the same adapter as a provider, so a whole voice run needs no key and still exercises the realtime path.

    bench run ... --mode full-duplex --agent voice-cascade --agent-model M --agent-base-url URL   # llm-fc inside
    bench run ... --mode full-duplex --agent voice-cascade --agent-option inner=oracle

Options (`--agent-option KEY=VALUE`): `inner` (the text agent, default llm-fc; any registered agent but a realtime
one), `lead_ms` (output audio sent ahead of the input clock, default 400), `tts_voice` (the `tts` role's voice),
`pacing` (auto|realtime|lockstep, default lockstep), `vad_threshold`, `prefix_padding_ms`, `silence_duration_ms`
(server VAD, OpenAI's defaults 0.5 / 300 / 500; see vad.py for how the threshold maps to energy). The other options
go to the inner agent. Model roles: the inner agent's, plus `asr` and `tts` (default faster-whisper tiny.en and
piper joe, bench-voice's offline engines, reached only through the roles).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from bench_duplex import Chunk, DuplexAgentSession, RealtimeSettings, TickOutput, duplex_settings
from bench_voice import SpeechModels

from bench_kernel import (
    Agent,
    AgentSession,
    ConfigError,
    ConversationSetup,
    Mode,
    Registry,
    ToolMessage,
    get_logger,
)

from ..agent import RealtimeSession, RealtimeTranscript, instructions
from ..openai import OpenAIRealtimeAdapter
from .server import Handoff, cascade_server
from .session import DEFAULT_LEAD_MS

log = get_logger()
DEFAULT_INNER = "llm-fc"
SPEECH_ROLES = ("asr", "tts")
DEFAULT_SPEECH_MODELS: dict[str, dict[str, Any]] = {
    "asr": {"backend": "faster-whisper", "model": "tiny.en"},
    "tts": {"backend": "piper", "model": "joe"},
}
"""As bench-voice's channel declares them (offline engines; a missing one refuses the run with its install command)."""
CASCADE_OPTIONS = ("inner", "lead_ms", "tts_voice", "pacing", "vad_threshold", "prefix_padding_ms", "silence_duration_ms")
REALTIME_AGENTS = ("voice-cascade", "realtime")
MODEL = "voice-cascade"


def inner_name(options: Mapping[str, Any]) -> str:
    """The text agent's name (refusing a realtime agent inside the cascade)."""
    name = str(options.get("inner") or DEFAULT_INNER)
    if name in REALTIME_AGENTS:
        raise ConfigError(f"voice-cascade: inner={name} is a realtime agent; the cascade needs a turn-based text agent")
    return name


def inner_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The agent options the inner agent sees (the cascade's own removed)."""
    return {k: v for k, v in options.items() if k not in CASCADE_OPTIONS}


@attrs.define(kw_only=True)
class VoiceCascadeAgent(Agent):
    """VAD, ASR (`asr` role), any bench text agent, TTS (`tts` role), served by bench over the OpenAI Realtime protocol."""

    name: str = "voice-cascade"
    description: str = (
        "Offline realtime agent: energy VAD, ASR, a bench text agent (--agent-option inner=NAME, default "
        "llm-fc), TTS, served over the OpenAI Realtime protocol by bench itself (full duplex only)."
    )
    model_roles: tuple[str, ...] = SPEECH_ROLES
    """The speech roles; the inner agent's come from `needed_roles` (they depend on the `inner` option)."""
    duplex_only: bool = True
    calls_models_itself: bool = True
    """An inner agent may call models bench does not see (bench-bridge's framework): without ledgered agent calls the
    cost is unknown, never 0."""

    def default_models(self, options: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
        """The speech roles' defaults: faster-whisper tiny.en and piper joe."""
        return {role: dict(spec) for role, spec in DEFAULT_SPEECH_MODELS.items()}

    def needed_roles(self, options: Mapping[str, Any], registry: Registry) -> tuple[str, ...]:
        """Every model role a run with these options needs: the inner agent's, then asr and tts."""
        inner = registry.get("agent", inner_name(options))
        return (*[r for r in inner.model_roles if r not in SPEECH_ROLES], *SPEECH_ROLES)

    def start(self, setup: ConversationSetup) -> CascadeAgentSession:
        """The realtime agent's session for provider openai, pointed at bench's own server for this conversation."""
        if setup.duplex is None:
            raise ConfigError("voice-cascade plays only full-duplex conversations (--mode full-duplex)")
        options = dict(setup.options.get("agent") or {})
        _require_roles(setup, SPEECH_ROLES)
        inner_agent = _registered(setup, inner_name(options))
        _require_roles(setup, inner_agent.model_roles)
        lead_ms, tts_voice = _number(options, "lead_ms", DEFAULT_LEAD_MS, int), _text_or_none(options.get("tts_voice"))
        settings = _settings(setup, options)  # options are checked before anything starts
        server = cascade_server()
        speech = SpeechModels(setup.models)
        handoff = Handoff(agent=_start_inner(inner_agent, setup, options), models=speech, lead_ms=lead_ms, tts_voice=tts_voice)
        realtime = SpeechSession(setup=setup, adapter=OpenAIRealtimeAdapter(), settings=attrs.evolve(settings, base_url=server.offer(handoff)))
        return CascadeAgentSession(realtime=realtime, inner=handoff.agent, handoff=handoff, withdraw=server.withdraw)


def _start_inner(agent: Agent, setup: ConversationSetup, options: Mapping[str, Any]) -> AgentSession:
    """The text agent's session: the conversation's setup in the turn-based default mode, without the cascade's options."""
    inner_setup = attrs.evolve(setup, mode=Mode.DEFAULT, duplex=None, options={**setup.options, "agent": inner_options(options)})
    return agent.start(inner_setup)


def _settings(setup: ConversationSetup, options: Mapping[str, Any]) -> RealtimeSettings:
    duplex = duplex_settings(setup)
    assert duplex is not None
    settings = RealtimeSettings(
        model=MODEL,
        instructions=instructions(setup),
        tools=tuple(setup.agent_tools),
        tick_ms=duplex.tick_ms,
        pacing=str(options.get("pacing", "lockstep")),  # type: ignore[arg-type]
        options={"language": "en", "transcription_model": "asr"},
    )
    vad = settings.vad
    tuned = attrs.evolve(
        vad,
        threshold=_number(options, "vad_threshold", vad.threshold, float),
        prefix_padding_ms=_number(options, "prefix_padding_ms", vad.prefix_padding_ms, int),
        silence_duration_ms=_number(options, "silence_duration_ms", vad.silence_duration_ms, int),
    )
    return attrs.evolve(settings, vad=tuned)


def _number(options: Mapping[str, Any], key: str, default: Any, kind: type[int] | type[float]) -> Any:
    try:
        value = kind(options.get(key, default))
    except (TypeError, ValueError):
        raise ConfigError(f"voice-cascade: --agent-option {key} must be a number, not {options.get(key)!r}") from None
    if value < 0:
        raise ConfigError(f"voice-cascade: --agent-option {key} must not be negative, not {value}")
    return value


def _registered(setup: ConversationSetup, name: str) -> Agent:
    if setup.services is None:
        raise ConfigError("voice-cascade needs the run's registry to start its inner agent")
    agent: Agent = setup.services.get("agent", name)
    return agent


def _require_roles(setup: ConversationSetup, roles: Sequence[str]) -> None:
    missing = [r for r in roles if setup.models is None or not setup.models.has(r)]
    if missing:
        raise ConfigError(
            f"voice-cascade needs a model for the {', '.join(missing)} role(s): " + " ".join(f"--model-option {r}.backend=NAME" for r in missing)
        )


def _text_or_none(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


@attrs.define(kw_only=True)
class SpeechSession(RealtimeSession):
    """The realtime agent's session on the cascade: transcripts recorded, usage not ledgered again.

    The cascade's text agent, recogniser and synthesiser call their models through the conversation's model access,
    which ledgers and prices each call; the usage the server reports in `response.done` is the same tokens.
    """

    source: str = "voice-cascade"

    def _record(self, output: TickOutput) -> None:
        for item, text in output.input_transcripts:
            self.setup.events.emit(RealtimeTranscript(item=item, text=text, tick=output.tick), source=self.source)


@attrs.define(kw_only=True)
class CascadeAgentSession(DuplexAgentSession):
    """The realtime session on bench's server, and the inner text agent it drives (closed here, after the socket)."""

    realtime: RealtimeSession
    inner: AgentSession
    handoff: Handoff
    withdraw: Any

    async def step(self, tick: int, heard: Chunk, results: Sequence[ToolMessage]) -> Chunk:
        """One tick through the realtime adapter; a pipeline failure is raised as itself, not as the socket's error."""
        try:
            return await self.realtime.step(tick, heard, results)
        except Exception as exc:
            if self.handoff.failure is not None and self.handoff.failure is not exc:
                raise self.handoff.failure from exc
            raise

    async def close(self) -> None:
        """Close the socket, then the inner agent (told why the conversation ended)."""
        self.realtime.termination = self.termination
        await self.realtime.close()
        self.withdraw(self.handoff)
        self.inner.termination = self.termination
        try:
            await self.inner.close()
        except Exception as exc:  # noqa: BLE001 - close() must not raise
            log.warning("cascade.inner_close_failed", error=f"{type(exc).__name__}: {exc}")
