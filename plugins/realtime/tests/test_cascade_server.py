"""The cascade's Realtime server spoken to by a minimal websockets client: VAD, ASR, a function call, speech, barge-in,
lockstep. Speech engines are fakes here (a scripted recogniser, a tone synthesiser); the text agent is the oracle."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest
from bench_duplex import silence
from bench_realtime.cascade.fakes import FakeSpeech, tone_ticks
from bench_realtime.cascade.server import Handoff, cascade_server, stop_cascade_server
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from bench_kernel import OracleAgent
from bench_kernel.testing import kit_setup

QUESTION = "What does the note under the key door say?"


class Client:
    """A minimal Realtime client: sends ticks of audio in 20 ms packets and reads events until bench.tick.done."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.events: list[tuple[int, dict[str, Any]]] = []
        self.tick = 0

    async def event(self) -> dict[str, Any]:
        return json.loads(await asyncio.wait_for(self.ws.recv(), 30))

    async def send(self, event: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(event))

    async def play(self, audio: bytes) -> list[dict[str, Any]]:
        """One tick: its audio, then bench.tick; the events the server sent for it."""
        for i in range(0, len(audio), 160):
            await self.send({"type": "input_audio_buffer.append", "audio": base64.b64encode(audio[i : i + 160]).decode()})
        await self.send({"type": "bench.tick", "tick": self.tick})
        got = []
        while (event := await self.event())["type"] != "bench.tick.done":
            got.append(event)
        assert event["tick"] == self.tick
        self.events += [(self.tick, e) for e in got]
        self.tick += 1
        return got

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for _, e in self.events if e["type"] == kind]


async def open_session(url: str, **vad: Any) -> Client:
    ws = await connect(url + "/realtime?model=voice-cascade", proxy=None)
    client = Client(ws)
    created = await client.event()
    assert created["type"] == "session.created" and created["session"]["bench_lockstep"] is True
    turn_detection = {"type": "server_vad", "threshold": 0.5, "prefix_padding_ms": 300, "silence_duration_ms": 500, **vad}
    await client.send(
        {
            "type": "session.update",
            "session": {
                "type": "realtime",
                "audio": {
                    "input": {"format": {"type": "audio/pcmu"}, "turn_detection": turn_detection},
                    "output": {"format": {"type": "audio/pcmu"}},
                },
            },
        }
    )
    updated = await client.event()
    assert updated["type"] == "session.updated"
    assert updated["session"]["audio"]["input"]["turn_detection"]["silence_duration_ms"] == turn_detection["silence_duration_ms"]
    return client


async def ask_and_answer(speech: FakeSpeech, *, lead_ms: int = 400) -> Client:
    """The user asks; the oracle calls get_note; its result goes back; the answer is spoken to its end."""
    server = cascade_server()
    setup = kit_setup(task_id="read-note")
    url = server.offer(Handoff(agent=OracleAgent().start(setup), models=speech, lead_ms=lead_ms))
    client = await open_session(url)
    try:
        for chunk in tone_ticks(QUESTION):
            await client.play(chunk)
        for _ in range(5):
            await client.play(silence(200))
        [call] = client.of("response.function_call_arguments.done")
        assert (call["name"], json.loads(call["arguments"])) == ("get_note", {"key": "door"})
        await client.send(
            {"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": call["call_id"], "output": "1234"}}
        )
        await client.send({"type": "response.create"})
        for _ in range(30):
            await client.play(silence(200))
    finally:
        await client.ws.close()
    return client


def test_spoken_question_gives_a_function_call_and_a_spoken_answer() -> None:
    speech = FakeSpeech(heard=[QUESTION])

    async def scenario() -> Client:
        try:
            return await ask_and_answer(speech)
        finally:
            await stop_cascade_server()

    client = asyncio.run(scenario())
    kinds = [e["type"] for _, e in client.events]
    assert kinds.index("input_audio_buffer.speech_started") < kinds.index("input_audio_buffer.speech_stopped")
    [started] = client.of("input_audio_buffer.speech_started")
    [stopped] = client.of("input_audio_buffer.speech_stopped")
    assert started["audio_start_ms"] == 0 and stopped["audio_end_ms"] > 2000
    [heard] = client.of("conversation.item.input_audio_transcription.completed")
    assert heard["transcript"] == QUESTION and heard["item_id"] == started["item_id"]
    assert speech.asr_calls == 1 and speech.spoken == ["All done. 1234."]
    audio = b"".join(base64.b64decode(e["delta"]) for e in client.of("response.output_audio.delta"))
    assert len(audio) == speech.ulaw_bytes("All done. 1234.")
    assert "".join(e["delta"] for e in client.of("response.output_audio_transcript.delta")) == "All done. 1234."
    done = client.of("response.done")
    assert [d["response"]["status"] for d in done] == ["completed", "completed"]
    assert done[0]["response"]["output"][0]["type"] == "function_call"
    assert done[1]["response"]["output"][0]["content"][0]["transcript"] == "All done. 1234."
    assert done[1]["response"]["usage"]["output_token_details"] == {"text_tokens": 0, "audio_tokens": 0}
    # Audio is paced by the input clock: never more than the lead ahead of the audio received.
    ticks_with_audio = sorted({t for t, e in client.events if e["type"] == "response.output_audio.delta"})
    assert len(ticks_with_audio) >= len(audio) // 1600 - 2


def test_lockstep_runs_are_identical() -> None:
    async def scenario() -> list[tuple[int, dict[str, Any]]]:
        try:
            client = await ask_and_answer(FakeSpeech(heard=[QUESTION]))
        finally:
            await stop_cascade_server()
        return client.events

    first, second = asyncio.run(scenario()), asyncio.run(scenario())
    assert first == second


def test_barge_in_cancels_the_rest_of_the_response() -> None:
    speech = FakeSpeech(heard=[QUESTION, "Wait, stop."], speech_seconds=8.0)

    async def scenario() -> Client:
        server = cascade_server()
        setup = kit_setup(task_id="read-note")
        client = await open_session(server.offer(Handoff(agent=OracleAgent().start(setup), models=speech)))
        try:
            for chunk in tone_ticks(QUESTION):
                await client.play(chunk)
            for _ in range(4):
                await client.play(silence(200))
            [call] = client.of("response.function_call_arguments.done")
            await client.send(
                {"type": "conversation.item.create", "item": {"type": "function_call_output", "call_id": call["call_id"], "output": "1234"}}
            )
            await client.send({"type": "response.create"})
            for _ in range(5):
                await client.play(silence(200))
            assert client.of("response.output_audio.delta") and not client.of("response.done")[1:]
            for chunk in tone_ticks("Wait, stop."):
                await client.play(chunk)
            for _ in range(6):
                await client.play(silence(200))
        finally:
            await client.ws.close()
            await stop_cascade_server()
        return client

    client = asyncio.run(scenario())
    done = [e["response"] for e in client.of("response.done")]
    assert done[1]["status"] == "cancelled" and done[1]["status_details"]["reason"] == "turn_detected"
    barge = next(t for t, e in client.events if e["type"] == "input_audio_buffer.speech_started" and t > 10)
    cancelled_item = done[1]["output"][0]["id"]
    assert not [t for t, e in client.events if e["type"] == "response.output_audio.delta" and e["item_id"] == cancelled_item and t > barge]
    sent = sum(len(base64.b64decode(e["delta"])) for e in client.of("response.output_audio.delta") if e["item_id"] == cancelled_item)
    assert sent < speech.ulaw_bytes("All done. 1234.")
    # The oracle has nothing more to do after its closing message: it asks whether there is anything else.
    assert speech.spoken[-1] == "Is there anything else I can help you with?"


def test_a_token_is_used_once_and_bad_events_are_errors() -> None:
    async def scenario() -> None:
        server = cascade_server()
        url = server.offer(Handoff(agent=OracleAgent().start(kit_setup()), models=FakeSpeech(heard=[])))
        client = await open_session(url)
        try:
            with pytest.raises(InvalidStatus):
                await connect(url + "/realtime", proxy=None)
            await client.ws.send("not json")
            assert (await client.event())["error"]["code"] == "invalid_json"
            await client.send({"type": "input_audio_buffer.append", "audio": "***"})
            assert (await client.event())["type"] == "error"
            await client.send({"type": "no.such.event"})
            assert (await client.event())["error"]["code"] == "unknown_event"
            await client.send({"type": "session.update", "session": {"audio": {"input": {"format": {"type": "audio/pcm"}}}}})
            assert (await client.event())["error"]["code"] == "unsupported_format"
            await client.send({"type": "response.create"})
            await client.send({"type": "bench.tick", "tick": 0})
            kinds = [(await client.event())["type"] for _ in range(2)]
            assert kinds == ["response.done", "bench.tick.done"]
        finally:
            await client.ws.close()
            await stop_cascade_server()

    asyncio.run(scenario())
