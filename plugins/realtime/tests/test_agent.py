"""The realtime agent end to end against the fake servers, in lockstep: calls, transcripts, truncation, cost, faults."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import attrs
import pytest
from bench_duplex import Chunk, RealtimeConnectionError, RealtimeError, silence
from bench_duplex.testing import (
    FakeGeminiLiveServer,
    FakeOpenAIRealtimeServer,
    FakeRealtimeServer,
    ScriptedResponse,
    voice,
)
from bench_realtime import RealtimeCheckClient
from bench_realtime.agent import VOICE_BLOCK, RealtimeAgent, RealtimeSession
from bench_realtime.prices import cost_of

from bench_kernel import (
    INFRASTRUCTURE_FAILURES,
    ConfigError,
    ConversationModels,
    ModelAuthError,
    ModelConfig,
    ModelHub,
    ToolMessage,
    collect,
    get_plugin_manager,
)
from bench_kernel.testing import kit_setup

TICK = 200
Steps = Callable[[RealtimeSession], Awaitable[list[Chunk]]]


def setup_for(
    url: str, *, model: str = "gpt-realtime-1.5", backend: str = "openai-realtime", options: Mapping[str, Any] | None = None, duplex: bool = True
) -> Any:
    """A kit conversation's set-up, in full duplex, whose agent role points at a fake server."""
    hub = ModelHub(configs={"agent": ModelConfig(backend=backend, model=model, base_url=url)}, backends={})
    setup = kit_setup(models=ConversationModels(hub), options={"agent": dict(options or {})})
    return attrs.evolve(setup, duplex={"tick_ms": TICK} if duplex else None)


def play(server: FakeRealtimeServer, steps: Callable[[RealtimeSession], Awaitable[Any]], **setup: Any) -> Any:
    """Start the agent against the server, run `steps`, close the session and the server."""

    async def scenario() -> Any:
        async with server:
            session = RealtimeAgent().start(setup_for(server.url, **setup))
            try:
                return await steps(session)
            finally:
                await session.close()

    return asyncio.run(scenario())


async def ticks(session: RealtimeSession, audio: list[bytes], first: int = 0, results: tuple[ToolMessage, ...] = ()) -> list[Chunk]:
    chunks = []
    for index, data in enumerate(audio):
        chunks.append(await session.step(first + index, Chunk(audio=data), results if index == 0 else ()))
    return chunks


def test_a_tool_call_is_made_and_its_result_answered() -> None:
    server = FakeOpenAIRealtimeServer(
        at_tick={1: ScriptedResponse.call("get_note", {"id": "n1"}, call_id="call_1")},
        script=[ScriptedResponse.say("Your note says hello.", ms=600, item_id="answer")],
    )

    async def steps(session: RealtimeSession) -> tuple[list[Chunk], list[Chunk]]:
        first = await ticks(session, [silence(TICK)] * 2)
        result = ToolMessage(id="call_1", content='{"text": "hello"}')
        return first, await ticks(session, [silence(TICK)] * 5, first=2, results=(result,))

    first, after = play(server, steps)
    calls = [c for chunk in first for c in chunk.tool_calls]
    assert [(c.id, c.name, c.arguments, c.requestor) for c in calls] == [("call_1", "get_note", {"id": "n1"}, "assistant")]
    assert server.tool_results_seen(server.session) == [("call_1", '{"text": "hello"}', False)]
    assert server.responses_requested(server.session) == 1
    assert "".join(c.text for c in after) == "Your note says hello."
    assert {c.utterance for c in after if c.speech} == {"answer"}
    assert not any(c.stop for c in first + after)
    seen = server.settings_seen(server.session)
    assert seen["instructions"].startswith(VOICE_BLOCK) and seen["voice"] == "alloy"
    assert seen["tools"] and seen["input_format"] == seen["output_format"] == "audio/pcmu"


def test_only_the_last_result_of_a_batch_asks_for_a_response() -> None:
    server = FakeOpenAIRealtimeServer()
    results = (ToolMessage(id="a", content="1"), ToolMessage(id="b", content="2", error=True))
    play(server, lambda session: ticks(session, [silence(TICK)] * 2, results=results))
    assert [m["type"] for m in server.sent() if m["type"].startswith(("conversation", "response"))] == [
        "conversation.item.create",
        "conversation.item.create",
        "response.create",
    ]


def test_usage_is_ledgered_with_its_cost_and_input_transcripts_are_events() -> None:
    server = FakeOpenAIRealtimeServer(script=[ScriptedResponse.say("Sure.", ms=400)], heard=["I lost my card"])
    chunks: list[Chunk] = []

    async def steps(session: RealtimeSession) -> RealtimeSession:
        chunks.extend(await ticks(session, [voice(TICK)] * 2 + [silence(TICK)] * 6))
        return session

    session = play(server, steps)
    ledger = session.setup.models.ledger
    assert [(e.role, e.kind, e.prompt_tokens, e.cached) for e in ledger] == [("agent", "realtime", 100, False)]
    # The fake's usage: 60 text in (20 cached), 40 audio in, 1 text and 8 audio tokens out, at gpt-realtime's rates.
    expected = (40 * 4 + 40 * 32 + 20 * 0.4 + 1 * 16 + 8 * 64) / 1e6
    assert ledger[0].cost == pytest.approx(expected)
    events = session.setup.events.of_kind("realtime.transcript")
    assert [(e.data["text"], e.source) for e in events] == [("I lost my card", "realtime")]
    assert next(c for c in chunks if c.speech).vad == ("speech_stopped",)


def test_an_unknown_model_has_an_unknown_cost() -> None:
    server = FakeOpenAIRealtimeServer(at_tick={1: ScriptedResponse.say("Hi")})
    session = play(server, _return, model="my-own-realtime")
    assert [e.cost for e in session.setup.models.ledger] == [None]
    assert session.setup.models.cost("agent") is None


async def _return(session: RealtimeSession) -> RealtimeSession:
    await ticks(session, [silence(TICK)] * 2)
    return session


def test_a_barge_in_truncates_the_agent() -> None:
    long = ScriptedResponse.say("Let me explain everything about your booking in detail", ms=2000, item_id="long")
    server = FakeOpenAIRealtimeServer(at_tick={1: long})
    chunks = play(server, lambda s: ticks(s, [silence(TICK)] * 3 + [voice(TICK)] + [silence(TICK)] * 2))
    assert [c.speech for c in chunks] == [False, True, True, False, False, False]
    assert [c.truncated for c in chunks] == [False, False, False, True, False, False]
    assert "speech_started" in chunks[3].vad
    assert server.truncations_seen(server.session) == [("long", 2 * TICK)]
    assert 0 < len("".join(c.text for c in chunks)) < len(long.transcript)


def test_a_transfer_ends_the_conversation() -> None:
    server = FakeOpenAIRealtimeServer(at_tick={1: ScriptedResponse.call("transfer_to_human_agents", {"summary": "x"})})
    chunks = play(server, lambda s: ticks(s, [silence(TICK)] * 2))
    assert chunks[1].stop and chunks[1].tool_calls[0].name == "transfer_to_human_agents"


def test_gemini_plays_with_invented_call_ids_mapped_back() -> None:
    server = FakeGeminiLiveServer(at_tick={1: ScriptedResponse.call("get_note", {"id": "n1"}, call_id="")}, script=[ScriptedResponse.say("Done.")])

    async def steps(session: RealtimeSession) -> list[Chunk]:
        first = await ticks(session, [silence(TICK)] * 2)
        call = first[1].tool_calls[0]
        return first + await ticks(session, [silence(TICK)] * 3, first=2, results=(ToolMessage(id=call.id, content="ok"),))

    chunks = play(server, steps, model="gemini-3.1-flash-live-preview", backend="gemini-live")
    call = chunks[1].tool_calls[0]
    assert call.id.startswith("gemini_") and len(call.id) == len("gemini_") + 8
    assert server.tool_results_seen(server.session) == [("", "ok", False)]
    assert server.session.config["generationConfig"]["speechConfig"]["voiceConfig"]["prebuiltVoiceConfig"] == {"voiceName": "Zephyr"}
    assert "".join(c.text for c in chunks) == "Done."


def test_the_provider_option_picks_the_adapter_and_the_role_defaults() -> None:
    agent = RealtimeAgent()
    assert agent.default_models({})["agent"]["backend"] == "openai-realtime"
    assert agent.default_models({"provider": "gemini"})["agent"] == {
        "backend": "gemini-live",
        "model": "gemini-3.1-flash-live-preview",
        "api_key_env": "GEMINI_API_KEY",
    }
    with pytest.raises(ConfigError, match="unknown provider 'nova'"):
        agent.default_models({"provider": "nova"})
    session = agent.start(
        setup_for("ws://127.0.0.1:9/x", options={"provider": "gemini", "pacing": "lockstep", "voice": "Puck", "reasoning_effort": "low"})
    )
    assert session.adapter.provider == "gemini"
    assert (session.settings.voice, session.settings.pacing, session.settings.reasoning_effort) == ("Puck", "lockstep", "low")


def test_the_agent_plays_only_in_full_duplex() -> None:
    with pytest.raises(ConfigError, match="only in --mode full-duplex"):
        RealtimeAgent().start(setup_for("ws://127.0.0.1:9/x", duplex=False))
    with pytest.raises(ConfigError, match="pacing must be one of"):
        RealtimeAgent().start(setup_for("ws://127.0.0.1:9/x", options={"pacing": "fast"}))


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        (ScriptedResponse.error("rate limited", "rate_limit"), RealtimeError),
        (ScriptedResponse.malformed(), RealtimeError),
        (ScriptedResponse.drop(), RealtimeConnectionError),
        (ScriptedResponse.close(1011, "maintenance"), RealtimeConnectionError),
    ],
)
@pytest.mark.parametrize("server_type", [FakeOpenAIRealtimeServer, FakeGeminiLiveServer])
def test_faults_are_typed_errors(server_type: type[FakeRealtimeServer], fault: ScriptedResponse, error: type[Exception]) -> None:
    server = server_type(at_tick={2: fault})
    backend = "gemini-live" if server_type is FakeGeminiLiveServer else "openai-realtime"
    with pytest.raises(error) as caught:
        play(server, lambda s: ticks(s, [silence(TICK)] * 4), backend=backend)
    # A dropped or closed socket is retried on resume; a provider's error or garbage is the agent's own.
    assert isinstance(caught.value, INFRASTRUCTURE_FAILURES) == (error is RealtimeConnectionError)


def test_gemini_refusing_the_setup_is_the_agents_error() -> None:
    server = FakeGeminiLiveServer(setup_error="Request contains an invalid argument.")
    with pytest.raises(RealtimeError, match="invalid argument"):
        play(server, lambda s: ticks(s, [silence(TICK)]), backend="gemini-live")


def test_openai_refusing_the_setup_is_the_agents_error() -> None:
    server = FakeOpenAIRealtimeServer(setup_error="Invalid value: 'pcm17'")
    with pytest.raises(RealtimeError, match="pcm17"):
        play(server, lambda s: ticks(s, [silence(TICK)]))


def test_the_plugin_registers_the_agent_and_both_backends() -> None:
    registry = collect(get_plugin_manager(["realtime"]))
    assert "realtime" in registry.components["agent"]
    assert {"openai-realtime", "gemini-live"} <= set(registry.components["model"])


@pytest.mark.parametrize(("server_type", "backend"), [(FakeOpenAIRealtimeServer, "openai-realtime"), (FakeGeminiLiveServer, "gemini-live")])
def test_the_backend_check_opens_a_session(server_type: type[FakeRealtimeServer], backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = collect(get_plugin_manager(["realtime"]))
    monkeypatch.setenv("RT_KEY", "right")

    async def scenario() -> None:
        async with server_type(api_key="right") as server:
            hub = ModelHub(
                configs={"agent": ModelConfig(backend=backend, model="m", base_url=server.url, api_key_env="RT_KEY")},
                backends=registry.components["model"],
            )
            await hub.check()  # the agent role's kind check passes, and a session opens and closes
            assert isinstance(hub.client("agent"), RealtimeCheckClient)
            assert len(server.sessions) == 1
            monkeypatch.setenv("RT_KEY", "wrong")
            with pytest.raises(ModelAuthError):
                await RealtimeCheckClient(backend.split("-")[0], hub.config("agent")).check()

    asyncio.run(scenario())


def test_cost_of_records() -> None:
    record = {
        "provider": "gemini",
        "model": "models/gemini-3.1-flash-live-preview",
        "input_text_tokens": 1_000_000,
        "input_audio_tokens": 0,
        "output_text_tokens": 0,
        "output_audio_tokens": 1_000_000,
    }
    assert cost_of(record) == pytest.approx(0.75 + 12.0)
    assert cost_of({**record, "billable": False}) == 0.0
    assert cost_of({**record, "model": "unknown"}) is None
    assert cost_of({"provider": "openai", "model": "gpt-realtime-2025-08-28", "input_tokens": 10}) is None
