"""voice-cascade through the realtime adapter: R's OpenAI adapter against bench's own server, whole full-duplex runs
with the oracle and with llm-fc (on the fake OpenAI server) inside, refusals, and failures raised as themselves."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
import sqlite_utils
from bench_duplex import RealtimeSettings, TickOutput, silence
from bench_realtime.cascade import plugin as cascade_plugin
from bench_realtime.cascade.agent import VoiceCascadeAgent
from bench_realtime.cascade.fakes import FakeEnginesPlugin, FakeSpeech, tone_ticks
from bench_realtime.cascade.server import Handoff, cascade_server, stop_cascade_server
from bench_realtime.openai import OpenAIRealtimeAdapter
from bench_voice import Transcription, TranscriptionClient, TranscriptionRequest

from bench_kernel import (
    BenchError,
    ConfigError,
    Mode,
    Model,
    ModelConfig,
    OracleAgent,
    RunConfig,
    collect,
    get_plugin_manager,
    hookimpl,
    run,
)
from bench_kernel.testing import FakeOpenAIServer, KitPlugin, kit_setup

QUESTION = "What does the note under the key door say?"
ENGINES = {
    "asr": ModelConfig(backend="scripted-asr", model="script", options={"heard": QUESTION}),
    "tts": ModelConfig(backend="tone-tts", model="tone"),
}


# --------------------------------------------------------------------------- the adapter against the server


async def adapter_on_server(speech: FakeSpeech, **settings: Any) -> OpenAIRealtimeAdapter:
    url = cascade_server().offer(Handoff(agent=OracleAgent().start(kit_setup(task_id="read-note")), models=speech))
    adapter = OpenAIRealtimeAdapter()
    await adapter.connect(RealtimeSettings(model="voice-cascade", base_url=url, pacing="lockstep", **settings))
    return adapter


async def ask(adapter: OpenAIRealtimeAdapter, outputs: list[TickOutput], text: str) -> None:
    for audio in tone_ticks(text):
        outputs.append(await adapter.run_tick(audio, len(outputs)))


async def wait(adapter: OpenAIRealtimeAdapter, outputs: list[TickOutput], ticks: int) -> None:
    for _ in range(ticks):
        outputs.append(await adapter.run_tick(silence(200), len(outputs)))
        for call in outputs[-1].tool_calls:
            adapter.send_tool_result(call.id, "1234", respond=True)


def test_the_adapter_hears_the_question_calls_the_tool_and_speaks_the_answer() -> None:
    speech = FakeSpeech(heard=[QUESTION])

    async def scenario() -> list[TickOutput]:
        adapter = await adapter_on_server(speech)
        outputs: list[TickOutput] = []
        try:
            await ask(adapter, outputs, QUESTION)
            await wait(adapter, outputs, 20)
        finally:
            await adapter.close()
            await stop_cascade_server()
        return outputs

    outputs = asyncio.run(scenario())
    assert [o.input_transcripts for o in outputs if o.input_transcripts] == [(("item_000001", QUESTION),)]
    [call] = [c for o in outputs for c in o.tool_calls]
    assert (call.name, call.arguments) == ("get_note", {"key": "door"})
    spoken = [o for o in outputs if o.speech]
    assert "".join(o.text for o in spoken) == "All done. 1234."
    assert sum(1 for o in spoken) == pytest.approx(speech.seconds("All done. 1234.") / 0.2, abs=1)
    heard_at = next(o.tick for o in outputs if o.input_transcripts)
    assert spoken[0].tick == heard_at + 1  # the tool's result arrives a tick later; the answer starts in that tick


def test_barge_in_through_the_adapter_cuts_the_answer() -> None:
    speech = FakeSpeech(heard=[QUESTION, "Hold on."], speech_seconds=6.0)

    async def scenario() -> list[TickOutput]:
        adapter = await adapter_on_server(speech)
        outputs: list[TickOutput] = []
        try:
            await ask(adapter, outputs, QUESTION)
            await wait(adapter, outputs, 8)
            await ask(adapter, outputs, "Hold on.")
            await wait(adapter, outputs, 10)
        finally:
            await adapter.close()
            await stop_cascade_server()
        return outputs

    outputs = asyncio.run(scenario())
    cut = next(o for o in outputs if o.truncated)
    assert "speech_started" in cut.vad
    first_item = next(o.items[0] for o in outputs if o.speech)
    assert not [o for o in outputs if o.tick > cut.tick and first_item in o.items]
    played = sum(1 for o in outputs if first_item in o.items)
    assert played < 6.0 / 0.2 - 5


def test_lockstep_makes_the_adapter_path_deterministic() -> None:
    async def scenario() -> list[tuple[Any, ...]]:
        adapter = await adapter_on_server(FakeSpeech(heard=[QUESTION, "Hold on."], speech_seconds=3.0))
        outputs: list[TickOutput] = []
        try:
            await ask(adapter, outputs, QUESTION)
            await wait(adapter, outputs, 6)
            await ask(adapter, outputs, "Hold on.")
            await wait(adapter, outputs, 6)
        finally:
            await adapter.close()
            await stop_cascade_server()
        return [(o.tick, o.audio, o.text, o.tool_calls, o.truncated, o.vad, o.input_transcripts) for o in outputs]

    assert asyncio.run(scenario()) == asyncio.run(scenario())


# --------------------------------------------------------------------------- whole runs


class BrokenHearing(TranscriptionClient):
    """A recogniser that fails."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    async def transcribe(self, request: TranscriptionRequest) -> Transcription:
        raise RuntimeError("the recogniser broke")


@attrs.define(kw_only=True)
class BrokenEngine(Model):
    def client(self, config: ModelConfig) -> BrokenHearing:
        return BrokenHearing(config)


class BrokenPlugin:
    @hookimpl
    def register_models(self, register: Callable[[Model], None]) -> None:
        register(BrokenEngine(name="broken-asr"))


def plugin_set(*selected: str) -> Any:
    extra: list[tuple[str, object]] = [("conformance-kit", KitPlugin()), ("fake-engines", FakeEnginesPlugin()), ("broken", BrokenPlugin())]
    import bench_realtime

    if not hasattr(bench_realtime, "register_metrics"):  # until the package's __init__ re-exports the cascade's hook
        extra.append(("realtime-cascade", cascade_plugin))
    plugins = get_plugin_manager(["realtime", "duplex", *selected], extra)
    assert plugins.failures() == []
    return plugins


def cascade_run(db: Path, plugins: Any, **config: Any) -> sqlite_utils.Database:
    defaults: dict[str, Any] = {
        "domain": "kit-notes",
        "agent": "voice-cascade",
        "mode": Mode.FULL_DUPLEX,
        "baseline": False,
        "speech_cache": False,
        "duplex": {"max_seconds": 90},
        "models": dict(ENGINES),
    }
    summary = run(RunConfig(**{**defaults, **config}), db, plugins=plugins)
    assert summary.status in ("complete", "incomplete"), summary
    return sqlite_utils.Database(db)


def conversations(db: sqlite_utils.Database) -> dict[str, dict[str, Any]]:
    return {r["task_id"]: r for r in db.query("select * from conversations where arm = 'agent'")}


def test_a_run_with_the_oracle_inside_scores_every_task_and_reports_the_wer(tmp_path: Path) -> None:
    db = cascade_run(tmp_path / "a.db", plugin_set(), agent_options={"inner": "oracle"})
    rows = conversations(db)
    assert {t: (r["reward"], r["termination_reason"]) for t, r in rows.items()} == {"read-note": (1.0, "user_stop"), "write-note": (1.0, "user_stop")}
    said = [r["content"] for r in db.query("select content from messages where role = 'assistant' and content is not null")]
    assert "All done. 1234." in said
    wer = {r["conversation_id"].split("/")[2]: r["value"] for r in db.query("select * from metric_values where metric = 'realtime_asr_wer'")}
    assert set(wer) == {"read-note", "write-note"} and all(0.0 < v < 1.0 for v in wer.values())
    heard = [json.loads(r["data_json"]) for r in db.query("select data_json from conversation_events where kind = 'realtime.transcript'")]
    assert {h["text"] for h in heard} == {QUESTION}
    # Lockstep: a second run plays every tick the same.
    again = cascade_run(tmp_path / "b.db", plugin_set(), agent_options={"inner": "oracle"})
    timelines = [
        [r["data_json"] for r in d.query("select data_json from conversation_events where kind = 'duplex.timeline' order by conversation_id")]
        for d in (db, again)
    ]
    assert timelines[0] == timelines[1]


def answers(body: dict[str, Any]) -> dict[str, Any]:
    """The text agent's model: look the note up once asked, say what it holds once it has the result."""
    last = body["messages"][-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"The note says {last['content']}."}
    if any(m["role"] == "tool" for m in body["messages"]):
        return {"role": "assistant", "content": "You're welcome. Goodbye."}
    call = {"id": "call_door", "type": "function", "function": {"name": "get_note", "arguments": json.dumps({"key": "door"})}}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


def test_llm_fc_inside_on_the_fake_openai_server(tmp_path: Path) -> None:
    pytest.importorskip("bench_llm")
    pytest.importorskip("bench_openai")
    with FakeOpenAIServer(answers) as server:
        models = {**ENGINES, "agent": ModelConfig(backend="openai", model="fake-model", base_url=server.base_url, max_retries=0)}
        db = cascade_run(tmp_path / "c.db", plugin_set("llm", "openai"), models=models, task_ids=["read-note"])
        sent = [r.body for r in server.requests if r.body]
    row = conversations(db)["read-note"]
    assert (row["reward"], row["termination_reason"], row["error"]) == (1.0, "user_stop", None)
    assert sent[0]["messages"][-1] == {"role": "user", "content": QUESTION}
    assert sent[1]["messages"][-1]["role"] == "tool"
    ledger = list(db.query("select role, kind from llm_calls"))
    assert {(r["role"], r["kind"]) for r in ledger if r["role"] == "agent"} == {("agent", "chat")}, ledger  # not twice


def test_a_failing_recogniser_ends_the_conversation_with_its_own_error(tmp_path: Path) -> None:
    models = {**ENGINES, "asr": ModelConfig(backend="broken-asr", model="x")}
    db = cascade_run(tmp_path / "d.db", plugin_set(), agent_options={"inner": "oracle"}, models=models, task_ids=["read-note"])
    row = conversations(db)["read-note"]
    assert row["termination_reason"] == "agent_error" and "the recogniser broke" in row["error"]


# --------------------------------------------------------------------------- refusals and roles


class EveryRole:
    """Model access that has every role (the refusals below come before any call)."""

    def has(self, role: str) -> bool:
        return True


def test_refusals_name_what_is_wrong() -> None:
    registry = collect(plugin_set())
    agent = VoiceCascadeAgent()

    async def start(**changes: Any) -> None:
        setup = attrs.evolve(kit_setup(), **{"services": registry, "duplex": {}, **changes})
        session = agent.start(setup)
        await session.close()

    with pytest.raises(ConfigError, match="full-duplex"):
        asyncio.run(start(duplex=None))
    with pytest.raises(ConfigError, match="asr, tts"):
        asyncio.run(start(options={"agent": {"inner": "oracle"}}))
    with pytest.raises(ConfigError, match="lead_ms must be a number"):
        asyncio.run(start(options={"agent": {"inner": "oracle", "lead_ms": "soon"}}, models=EveryRole()))
    with pytest.raises(ConfigError, match="vad_threshold must be a number"):
        asyncio.run(start(options={"agent": {"inner": "oracle", "vad_threshold": "loud"}}, models=EveryRole()))
    with pytest.raises(ConfigError, match="realtime agent"):
        agent.needed_roles({"inner": "realtime"}, registry)
    with pytest.raises(BenchError, match="no agent named 'no-such-agent'"):
        agent.needed_roles({"inner": "no-such-agent"}, registry)


def test_model_roles_are_the_inner_agents_and_the_speech_roles() -> None:
    registry = collect(plugin_set("llm"))
    agent = VoiceCascadeAgent()
    assert agent.needed_roles({}, registry) == ("agent", "asr", "tts")
    assert agent.needed_roles({"inner": "oracle"}, registry) == ("asr", "tts")
    assert agent.default_models({}) == {"asr": {"backend": "faster-whisper", "model": "tiny.en"}, "tts": {"backend": "piper", "model": "joe"}}
