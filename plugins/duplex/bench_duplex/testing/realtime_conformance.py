"""The conformance suite of realtime adapters, run against the fake server of the adapter's protocol.

    class TestMyAdapter(RealtimeConformance):
        adapter = MyRealtimeAdapter
        server = FakeOpenAIRealtimeServer

Each `check_*` function is also usable on its own: `check_function_call(MyRealtimeAdapter, FakeOpenAIRealtimeServer)`.
The checks open real sockets on 127.0.0.1 only, run in lockstep (no wall-clock assertions), and stop their servers.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, ClassVar

from bench_kernel import ModelAuthError

from ..audio import silence, tick_bytes, ulaw_to_pcm
from ..realtime import RealtimeAdapter, RealtimeConnectionError, RealtimeError, RealtimeSettings, TickOutput, VadSettings
from .fake_realtime import FakeRealtimeServer, ScriptedResponse, voice

TICK_MS = 200
TOOLS = (
    {
        "type": "function",
        "function": {"name": "lookup", "description": "Find a record.", "parameters": {"type": "object", "properties": {"id": {"type": "string"}}}},
    },
)
AdapterType = type[RealtimeAdapter]
ServerType = type[FakeRealtimeServer]


def conformance_settings(url: str, **fields: Any) -> RealtimeSettings:
    """The settings every check opens its session with (a field may be overridden)."""
    values: dict[str, Any] = {
        "model": "fake-realtime",
        "base_url": url,
        "api_key": "fake-key",
        "instructions": "You answer the phone for a test.",
        "tools": TOOLS,
        "voice": "test-voice",
        "tick_ms": TICK_MS,
        "vad": VadSettings(threshold=0.5, prefix_padding_ms=300, silence_duration_ms=500),
    }
    return RealtimeSettings(**{**values, **fields})


async def _session(adapter: AdapterType, server: FakeRealtimeServer, **fields: Any) -> RealtimeAdapter:
    session = adapter()
    await session.connect(conformance_settings(server.url, **fields))
    return session


async def _ticks(session: RealtimeAdapter, audio: Iterable[bytes], first: int = 0) -> list[TickOutput]:
    return [await session.run_tick(chunk, first + i) for i, chunk in enumerate(audio)]


def _run(
    adapter: AdapterType,
    server_type: ServerType,
    body: Callable[[RealtimeAdapter, FakeRealtimeServer], Awaitable[None]],
    server_options: Mapping[str, Any] | None = None,
    **fields: Any,
) -> None:
    async def scenario() -> None:
        async with server_type(**dict(server_options or {})) as server:
            session = await _session(adapter, server, **fields)
            try:
                await body(session, server)
            finally:
                await session.close()

    asyncio.run(scenario())


def _who(adapter: AdapterType) -> str:
    return f"{adapter.__name__} ({adapter.provider or 'no provider'})"


def check_setup(adapter: AdapterType, server: ServerType) -> None:
    """The session's settings reach the server: instructions, tools, voice, audio formats, VAD; lockstep is taken."""

    async def body(session: RealtimeAdapter, fake: FakeRealtimeServer) -> None:
        await session.run_tick(silence(TICK_MS), 0)
        seen = fake.settings_seen(fake.session)
        assert session.lockstep, f"{_who(adapter)} did not take the lockstep pacing the server announced"
        assert seen["instructions"] == "You answer the phone for a test.", f"instructions not sent: {seen['instructions']!r}"
        assert seen["tools"] == ["lookup"], f"tools not sent as the protocol's functions: {seen['tools']!r}"
        assert seen["voice"] == "test-voice", f"voice not sent: {seen['voice']!r}"
        assert seen["input_format"] and seen["output_format"], f"audio formats not set: {seen}"
        vad = seen["vad"]
        assert vad.get("prefix_padding_ms") == 300 and vad.get("silence_duration_ms") == 500, f"VAD settings not sent: {vad}"

    _run(adapter, server, body)


def check_audio(adapter: AdapterType, server: ServerType) -> None:
    """The user's audio arrives; the agent's comes back exactly one tick per run_tick, the excess buffered, then silence."""
    size = tick_bytes(TICK_MS)
    spoken = voice(3 * TICK_MS + TICK_MS // 2, hz=330.0)

    async def body(session: RealtimeAdapter, fake: FakeRealtimeServer) -> None:
        outputs = await _ticks(session, [silence(TICK_MS), silence(TICK_MS)] + [silence(TICK_MS)] * 4)
        assert all(len(o.audio) == size for o in outputs), f"{_who(adapter)}: a tick's audio is not {size} bytes"
        speaking = [o.tick for o in outputs if o.speech]
        assert speaking == [1, 2, 3, 4], f"agent audio of 3.5 ticks should play in ticks 1-4, played in {speaking}"
        played = b"".join(o.audio for o in outputs[1:5])[: len(spoken)]
        assert ulaw_to_pcm(played) == ulaw_to_pcm(spoken), "the agent's audio came back altered"
        assert outputs[4].audio[len(spoken) - 3 * size :] == silence(TICK_MS)[len(spoken) - 3 * size :], "a shortfall is not padded with silence"
        assert "".join(o.text for o in outputs).replace(" ", "") == "Onetwothreefour", "the transcript was not released in full"
        assert outputs[1].text and outputs[1].text != "One two three four", "the transcript is not released in proportion to the audio"
        assert outputs[1].items, "the provider's item id is not reported"
        assert fake.session.user_audio, "no user audio reached the server"

    _run(adapter, server, body, {"at_tick": {1: ScriptedResponse.say("One two three four", audio=spoken)}})


def check_user_audio(adapter: AdapterType, server: ServerType) -> None:
    """The user's speech reaches the server whole: its VAD hears it start and stop."""

    async def body(session: RealtimeAdapter, fake: FakeRealtimeServer) -> None:
        outputs = await _ticks(session, [voice(TICK_MS)] * 3 + [silence(TICK_MS)] * 5)
        assert fake.session.vad is not None and fake.session.vad.ms == 8 * TICK_MS, (
            f"the server received {fake.session.vad.ms if fake.session.vad else 0} ms of audio, not {8 * TICK_MS}"
        )
        assert fake.session.user_turns == 1, "the server did not hear one user utterance end"
        heard = [text for o in outputs for _, text in o.input_transcripts]
        assert heard == ["hello there"], f"the input transcription was not reported: {heard}"
        assert any(o.speech for o in outputs), "the answer to the utterance was not played"

    _run(adapter, server, body, {"script": [ScriptedResponse.say("Hi")], "heard": ["hello there"]})


def check_function_call(adapter: AdapterType, server: ServerType) -> None:
    """A function call arrives as a ToolCall; its result goes back at the next tick, with a request for a response."""

    async def body(session: RealtimeAdapter, fake: FakeRealtimeServer) -> None:
        first = await _ticks(session, [silence(TICK_MS)] * 2)
        calls = [c for o in first for c in o.tool_calls]
        assert [(c.name, c.arguments) for c in calls] == [("lookup", {"id": "u1"})], f"{_who(adapter)} reported {calls}"
        assert calls[0].id, "the call has no id"
        session.send_tool_result(calls[0].id, '{"name": "Ann"}', respond=True)
        after = await _ticks(session, [silence(TICK_MS)] * 3, first=2)
        results = fake.tool_results_seen(fake.session)
        assert [(r[0], r[1]) for r in results] == [("call_7", '{"name": "Ann"}')], f"the tool result was not sent: {results}"
        assert fake.responses_requested(fake.session) == 1, "no response was requested after the result"
        assert any(o.speech for o in after) and "Found" in "".join(o.text for o in after), "the answer after the result did not play"
        assert any(o.usage for o in first + after), "no usage was reported"

    _run(
        adapter,
        server,
        body,
        {"at_tick": {1: ScriptedResponse.call("lookup", {"id": "u1"}, call_id="call_7")}, "script": [ScriptedResponse.say("Found it")]},
    )


def check_interruption(adapter: AdapterType, server: ServerType) -> None:
    """The user barges in: the agent's audio is cut locally (and the server told where, when its protocol needs it)."""

    async def body(session: RealtimeAdapter, fake: FakeRealtimeServer) -> None:
        outputs = await _ticks(session, [silence(TICK_MS)] * 3 + [voice(TICK_MS)] + [silence(TICK_MS)] * 3)
        assert [o.tick for o in outputs if o.speech][:2] == [1, 2], "the agent's speech did not start at once"
        cut = [o.tick for o in outputs if o.truncated]
        assert cut == [3], f"the barge-in at tick 3 should truncate that tick, truncated: {cut}"
        assert not any(o.speech for o in outputs[4:]), "the agent's audio went on after the barge-in"
        if fake.server_truncates:
            truncations = fake.truncations_seen(fake.session)
            assert len(truncations) == 1, f"{_who(adapter)} did not tell the server where its item was cut: {truncations}"
            item, end_ms = truncations[0]
            assert item == "agent_item_1", f"truncated item {item!r}, not the one playing"
            played_ms = sum(len(o.audio) for o in outputs if o.speech and "agent_item_1" in o.items) // 8
            assert end_ms == played_ms == 2 * TICK_MS, f"audio_end_ms {end_ms}, the user heard {played_ms} ms"
        text = "".join(o.text for o in outputs)
        assert text and len(text) < len("This is a long answer that the user will not wait for"), "the cut item's transcript was released whole"

    long = ScriptedResponse.say("This is a long answer that the user will not wait for", ms=10 * TICK_MS, item_id="agent_item_1")
    _run(adapter, server, body, {"at_tick": {1: long}})


def _expect_failure(adapter: AdapterType, server: ServerType, fault: ScriptedResponse, error: type[Exception]) -> None:
    async def body(session: RealtimeAdapter, fake: FakeRealtimeServer) -> None:
        await session.run_tick(silence(TICK_MS), 0)
        try:
            await _ticks(session, [silence(TICK_MS)] * 3, first=1)
        except error:
            return
        raise AssertionError(f"{_who(adapter)} raised nothing for the server's {fault.fault}")

    _run(adapter, server, body, {"at_tick": {1: fault}})


def check_server_error(adapter: AdapterType, server: ServerType) -> None:
    """A provider error is a RealtimeError (the agent's error), not a connection failure."""
    _expect_failure(adapter, server, ScriptedResponse.error("scripted failure", "server_error"), RealtimeError)


def check_malformed_event(adapter: AdapterType, server: ServerType) -> None:
    """An event that is not JSON is a RealtimeError with code malformed_event."""
    _expect_failure(adapter, server, ScriptedResponse.malformed(), RealtimeError)


def check_dropped_socket(adapter: AdapterType, server: ServerType) -> None:
    """A socket cut mid-session, or closed by the server, is a RealtimeConnectionError (an infrastructure failure)."""
    _expect_failure(adapter, server, ScriptedResponse.drop(), RealtimeConnectionError)
    _expect_failure(adapter, server, ScriptedResponse.close(1011, "going down"), RealtimeConnectionError)


def check_connection_failures(adapter: AdapterType, server: ServerType) -> None:
    """No server: RealtimeConnectionError; a refused key: ModelAuthError."""

    async def scenario() -> None:
        with socket.socket() as probe:  # a port nobody listens on
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        try:
            await _session(adapter, server(), base_url=f"ws://127.0.0.1:{port}/v1/realtime")
        except RealtimeConnectionError:
            pass
        else:
            raise AssertionError(f"{_who(adapter)} connected to a closed port")
        async with server(api_key="right-key") as fake:
            try:
                session = await _session(adapter, fake, api_key="wrong-key")
            except ModelAuthError:
                return
            await session.close()
            raise AssertionError(f"{_who(adapter)} did not refuse a key the server refused")

    asyncio.run(scenario())


class RealtimeConformance:
    """Subclass with `adapter` (a RealtimeAdapter class) and `server` (the fake server class of its protocol)."""

    adapter: ClassVar[AdapterType]
    server: ClassVar[ServerType]

    def test_realtime_setup(self) -> None:
        """Session settings reach the server."""
        check_setup(self.adapter, self.server)

    def test_realtime_audio(self) -> None:
        """Agent audio one tick at a time, the excess buffered."""
        check_audio(self.adapter, self.server)

    def test_realtime_user_audio(self) -> None:
        """User audio reaches the server; its transcription comes back."""
        check_user_audio(self.adapter, self.server)

    def test_realtime_function_call(self) -> None:
        """A function call and its result."""
        check_function_call(self.adapter, self.server)

    def test_realtime_interruption(self) -> None:
        """A barge-in truncates the agent."""
        check_interruption(self.adapter, self.server)

    def test_realtime_server_error(self) -> None:
        """A provider error is typed."""
        check_server_error(self.adapter, self.server)

    def test_realtime_malformed_event(self) -> None:
        """A malformed event is typed."""
        check_malformed_event(self.adapter, self.server)

    def test_realtime_dropped_socket(self) -> None:
        """A dropped socket is an infrastructure failure."""
        check_dropped_socket(self.adapter, self.server)

    def test_realtime_connection_failures(self) -> None:
        """No server, or a refused key."""
        check_connection_failures(self.adapter, self.server)
