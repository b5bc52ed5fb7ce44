"""The realtime seam: audio converters, the tick bookkeeping, the fake servers and the conformance suite itself,
run against a minimal OpenAI-protocol adapter written here (the real adapters are bench-realtime's)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from bench_duplex import (
    RealtimeAdapter,
    RealtimeError,
    RealtimeSettings,
    Resampler,
    ToolResult,
    b64decode,
    b64encode,
    pcm_to_ulaw,
    silence,
    ulaw_to_pcm,
)
from bench_duplex.testing import FakeOpenAIRealtimeServer, RealtimeConformance, ScriptedResponse, check_interruption, voice


class MiniAdapter(RealtimeAdapter):
    """The least an OpenAI-protocol adapter writes: the wire part only."""

    provider = "mini"

    def endpoint(self, settings: RealtimeSettings) -> tuple[str, dict[str, str]]:
        return f"{settings.base_url}?model={settings.model}", {"Authorization": f"Bearer {settings.api_key}"}

    async def handshake(self, settings: RealtimeSettings) -> bool:
        created = await self.expect("session.created")
        tools = [{"type": "function", **t["function"]} for t in settings.tools]
        vad = {
            "type": "server_vad",
            "threshold": settings.vad.threshold,
            "prefix_padding_ms": settings.vad.prefix_padding_ms,
            "silence_duration_ms": settings.vad.silence_duration_ms,
        }
        await self.send(
            {
                "type": "session.update",
                "session": {
                    "type": "realtime",
                    "instructions": settings.instructions,
                    "tools": tools,
                    "audio": {
                        "input": {"format": {"type": "audio/pcmu"}, "turn_detection": vad},
                        "output": {"format": {"type": "audio/pcmu"}, "voice": settings.voice},
                    },
                },
            }
        )
        await self.expect("session.updated")
        return bool(created["session"].get("bench_lockstep"))

    def audio_messages(self, packet: bytes) -> list[Any]:
        return [{"type": "input_audio_buffer.append", "audio": b64encode(packet)}]

    def tool_result_messages(self, results: Sequence[ToolResult]) -> list[Any]:
        out: list[Any] = []
        for r in results:
            out.append({"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": r.call_id, "output": r.output}})
            if r.respond:
                out.append({"type": "response.create"})
        return out

    async def handle(self, event: Mapping[str, Any]) -> None:
        kind = event["type"]
        if kind == "error":
            raise RealtimeError(event["error"]["message"])
        if kind == "response.output_audio.delta":
            self.on_audio(event["item_id"], b64decode(event["delta"], "delta", self.provider))
        elif kind == "response.output_audio_transcript.delta":
            self.on_transcript(event["item_id"], event["delta"])
        elif kind == "response.function_call_arguments.done":
            self.on_tool_call(event["call_id"], event["name"], event["arguments"])
        elif kind == "conversation.item.input_audio_transcription.completed":
            self.on_input_transcript(event["item_id"], event["transcript"])
        elif kind == "response.done":
            self.on_usage({"provider": "mini", **event["response"]["usage"]})
        elif kind == "input_audio_buffer.speech_started":
            self.on_vad("speech_started")
            cut = self.on_barge_in(event["audio_start_ms"])
            if cut is not None:
                await self.send({"type": "conversation.item.truncate", "item_id": cut[0], "content_index": 0, "audio_end_ms": cut[1]})


class TestMiniAdapter(RealtimeConformance):
    adapter = MiniAdapter
    server = FakeOpenAIRealtimeServer


class ForgetfulAdapter(MiniAdapter):
    """Cuts its audio but never tells the server where."""

    async def send(self, message: Any) -> None:
        if message.get("type") != "conversation.item.truncate":
            await super().send(message)


def test_the_suite_catches_a_missing_truncation() -> None:
    with pytest.raises(AssertionError, match="did not tell the server"):
        check_interruption(ForgetfulAdapter, FakeOpenAIRealtimeServer)


def test_mu_law_round_trips_every_byte() -> None:
    # 0x7F is mu-law's negative zero: it decodes to 0, which encodes as 0xFF.
    assert pcm_to_ulaw(ulaw_to_pcm(bytes(range(256)))) == bytes(b if b != 0x7F else 0xFF for b in range(256))
    assert pcm_to_ulaw([40000, -40000]) == pcm_to_ulaw([32767, -32768])


def test_resampler_keeps_each_chunk_share_and_averages_down() -> None:
    up = Resampler(8000, 16000)
    assert [len(up.convert([100] * 160)) for _ in range(3)] == [320, 320, 320]
    assert up.convert([0, 100]) == [100, 50, 0, 50]
    down = Resampler(24000, 8000)
    assert down.convert([3, 3, 3, 6, 6]) == [3]
    assert down.convert([6, 9]) == [6]
    assert Resampler(16000, 24000).convert([0] * 320) == [0] * 480


def test_settings_hide_the_key() -> None:
    assert "secret" not in repr(RealtimeSettings(model="m", api_key="secret"))


async def _play(server: FakeOpenAIRealtimeServer, ticks: list[bytes], pacing: str = "auto") -> list[Any]:
    adapter = MiniAdapter()
    await adapter.connect(RealtimeSettings(model="m", base_url=server.url, api_key="k", pacing=pacing))  # type: ignore[arg-type]
    try:
        return [await adapter.run_tick(audio, i) for i, audio in enumerate(ticks)]
    finally:
        await adapter.close()


def test_realtime_pacing_plays_without_lockstep() -> None:
    async def scenario() -> list[Any]:
        async with FakeOpenAIRealtimeServer(script=[ScriptedResponse.say("Hi", ms=200)], lockstep=False) as server:
            outputs = await _play(server, [voice(200)] + [silence(200)] * 5)
            assert len(server.sent("input_audio_buffer.append")) == 6 * 10, "audio goes in 20 ms packets"
            assert not server.sent("bench.tick")
            return outputs

    outputs = asyncio.run(scenario())
    assert any(o.speech for o in outputs)
    assert "".join(o.text for o in outputs) == "Hi"


def test_lockstep_is_refused_when_the_server_does_not_offer_it() -> None:
    async def scenario() -> None:
        async with FakeOpenAIRealtimeServer(lockstep=False) as server:
            await _play(server, [], pacing="lockstep")

    with pytest.raises(RealtimeError, match="lockstep"):
        asyncio.run(scenario())


def test_two_items_in_one_tick_share_its_text() -> None:
    async def scenario() -> list[Any]:
        first = ScriptedResponse.say("One", ms=100, item_id="a")
        second = ScriptedResponse.say("Two", ms=200, item_id="b")
        async with FakeOpenAIRealtimeServer(at_tick={1: [first, second]}) as server:
            return await _play(server, [silence(200)] * 4)

    outputs = asyncio.run(scenario())
    assert [o.items for o in outputs] == [(), ("a", "b"), ("b",), ()]
    assert [o.text for o in outputs] == ["", "One Tw", "o", ""]  # ceil: 2 of 3 characters at half the audio
