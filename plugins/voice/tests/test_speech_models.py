"""The speech kinds through the run's hub and its speech cache: each text spoken once per engine and voice, each
recording recognised once, across conversations, concurrent requests and processes (a resume); ledgered, within the
cost cap, with the hub's kind checks."""

from __future__ import annotations

import asyncio
from pathlib import Path

import attrs
import pytest
from bench_voice import (
    Audio,
    SpeechClient,
    SpeechModels,
    SpeechRequest,
    Transcription,
    TranscriptionClient,
    TranscriptionRequest,
    speech_key,
)

from bench_kernel import BudgetExceededError, ChatRequest, ConfigError, ConversationModels, Model, ModelConfig, ModelHub, ModelUnavailableError, Store


@attrs.define(eq=False)
class CountingEngine(SpeechClient, TranscriptionClient):
    """Speaks a text as its bytes (prefixed by the voice) and hears bytes as text; counts what it was asked."""

    config: ModelConfig
    spoken: list[str]
    heard: list[bytes]
    failures: list[str]

    async def synthesize(self, request: SpeechRequest) -> Audio:
        self.spoken.append(request.text)
        await asyncio.sleep(0.01)  # other conversations ask meanwhile
        if request.text in self.failures:
            self.failures.remove(request.text)
            raise ModelUnavailableError("the engine fell over")
        return Audio(data=f"{self.config.model}:{request.voice}:{request.text}".encode(), sample_rate=8000, latency_ms=5)

    async def transcribe(self, request: TranscriptionRequest) -> Transcription:
        self.heard.append(request.audio.data)
        return Transcription(text=request.audio.data.decode(errors="replace"), latency_ms=5)


@attrs.define(kw_only=True, eq=False)
class CountingModel(Model):
    name: str = "counting"
    spoken: list[str] = attrs.field(factory=list)
    heard: list[bytes] = attrs.field(factory=list)
    failures: list[str] = attrs.field(factory=list)

    def client(self, config: ModelConfig) -> CountingEngine:
        return CountingEngine(config, self.spoken, self.heard, self.failures)


def speech_hub(path: Path, engine: CountingModel, **fields: object) -> ModelHub:
    configs = {
        "tts": ModelConfig(backend="counting", model="joe"),
        "tts-2": ModelConfig(backend="counting", model="amy"),
        "asr": ModelConfig(backend="counting", model="tiny.en"),
    }
    return ModelHub(configs=configs, backends={"counting": engine}, store=Store(path), **fields)  # type: ignore[arg-type]


def say(hub: ModelHub, text: str, role: str = "tts", voice: str | None = None) -> tuple[Audio, ConversationModels]:
    models = ConversationModels(hub)
    return asyncio.run(SpeechModels(models).synthesize(role, SpeechRequest(text=text, voice=voice))), models


def test_a_text_is_spoken_once_per_engine_and_voice_and_later_requests_are_ledgered_as_cached(tmp_path: Path) -> None:
    engine = CountingModel()
    hub = speech_hub(tmp_path / "r.db", engine)
    first, _ = say(hub, "My number is 612-555-0142.")
    again, models = say(hub, "My number is 612-555-0142.")
    assert again.data == first.data and again.sample_rate == first.sample_rate
    assert again.cached and not first.cached and again.latency_ms == 0
    [entry] = models.ledger
    assert entry.cached and entry.kind == "tts" and entry.cost == 0.0 and entry.request_hash is not None
    say(hub, "Another text.")
    say(hub, "My number is 612-555-0142.", role="tts-2")  # another voice of the engine
    say(hub, "My number is 612-555-0142.", voice="whisper")  # the request names another voice
    assert engine.spoken == ["My number is 612-555-0142.", "Another text.", "My number is 612-555-0142.", "My number is 612-555-0142."]


def test_the_key_names_engine_voice_options_and_text_and_a_recording_by_its_samples() -> None:
    joe, amy = ModelConfig(backend="piper", model="joe"), ModelConfig(backend="piper", model="amy")
    text = SpeechRequest(text="hello")
    assert speech_key(joe, text) == speech_key(joe, SpeechRequest(text="hello"))
    assert (
        len(
            {
                speech_key(joe, text),
                speech_key(amy, text),
                speech_key(joe, SpeechRequest(text="hello!")),
                speech_key(attrs.evolve(joe, options={"length_scale": 1.2}), text),
                speech_key(ModelConfig(backend="openai", model="joe"), text),
            }
        )
        == 5
    )
    recording = TranscriptionRequest(audio=Audio(data=b"RIFF....", sample_rate=22050))
    assert speech_key(joe, recording) != speech_key(joe, SpeechRequest(text="RIFF...."))
    assert speech_key(joe, recording) != speech_key(joe, TranscriptionRequest(audio=Audio(data=b"RIFF...!", sample_rate=22050)))


def test_conversations_asking_for_the_same_text_at_once_wait_for_one_synthesis(tmp_path: Path) -> None:
    engine = CountingModel()
    hub = speech_hub(tmp_path / "r.db", engine)
    conversations = [ConversationModels(hub) for _ in range(5)]

    async def all_at_once() -> list[Audio]:
        return await asyncio.gather(*(SpeechModels(m).synthesize("tts", SpeechRequest(text="Hello.")) for m in conversations))

    results = asyncio.run(all_at_once())
    assert engine.spoken == ["Hello."]
    assert len({r.data for r in results}) == 1 and sum(r.cached for r in results) == 4
    assert sorted(m.ledger[0].cached for m in conversations) == [False, True, True, True, True]


def test_when_the_synthesis_others_wait_for_fails_each_asks_the_engine_itself(tmp_path: Path) -> None:
    engine = CountingModel(failures=["Hello."])
    hub = speech_hub(tmp_path / "r.db", engine)
    first, second = ConversationModels(hub), ConversationModels(hub)

    async def both() -> list[Audio | BaseException]:
        return await asyncio.gather(
            SpeechModels(first).synthesize("tts", SpeechRequest(text="Hello.")),
            SpeechModels(second).synthesize("tts", SpeechRequest(text="Hello.")),
            return_exceptions=True,
        )

    failed, spoken = asyncio.run(both())
    assert isinstance(failed, ModelUnavailableError) and isinstance(spoken, Audio) and not spoken.cached
    assert engine.spoken == ["Hello.", "Hello."]
    assert first.ledger[0].error is not None and not second.ledger[0].cached


def test_speech_stored_by_one_process_is_reused_by_the_next_one(tmp_path: Path) -> None:
    """A killed run's resume opens the store again: what was spoken before is not spoken again."""
    engine = CountingModel()
    hub = speech_hub(tmp_path / "r.db", engine)
    spoken, _ = say(hub, "Hello.")
    assert hub.store is not None
    hub.store.close()
    resumed = speech_hub(tmp_path / "r.db", engine)
    again, _ = say(resumed, "Hello.")
    assert again.data == spoken.data and again.cached and engine.spoken == ["Hello."]


def test_the_very_same_recording_is_recognised_once_and_any_other_samples_again(tmp_path: Path) -> None:
    engine = CountingModel()
    hub = speech_hub(tmp_path / "r.db", engine)

    def hear(data: bytes) -> Transcription:
        request = TranscriptionRequest(audio=Audio(data=data, sample_rate=8000), language="en")
        return asyncio.run(SpeechModels(ConversationModels(hub)).transcribe("asr", request))

    first = hear(b"clean recording")
    again = hear(b"clean recording")
    noisy = hear(b"clean recordinh")
    assert again.text == first.text and again.cached and not noisy.cached
    assert engine.heard == [b"clean recording", b"clean recordinh"]


@pytest.mark.parametrize("kind", ["tts", "asr"])
def test_without_the_speech_cache_every_request_reaches_the_engine(tmp_path: Path, kind: str) -> None:
    engine = CountingModel()
    hub = speech_hub(tmp_path / "r.db", engine, speech_cache=False)
    for _ in range(2):
        models = ConversationModels(hub)
        if kind == "tts":
            asyncio.run(SpeechModels(models).synthesize("tts", SpeechRequest(text="Hello.")))
        else:
            asyncio.run(SpeechModels(models).transcribe("asr", TranscriptionRequest(audio=Audio(data=b"x", sample_rate=8000))))
        assert not models.ledger[0].cached and models.ledger[0].request_hash is None
    assert len(engine.spoken) + len(engine.heard) == 2
    assert hub.store is not None and hub.store.db.execute("select count(*) from llm_cache").fetchone()[0] == 0


def test_speech_calls_are_ledgered_by_kind_refused_on_another_kind_and_capped(tmp_path: Path) -> None:
    engine = CountingModel()
    hub = speech_hub(tmp_path / "r.db", engine, max_cost=0.0)
    models = ConversationModels(hub, run_id="r", conversation_id="r/agent/t/0")
    with pytest.raises(BudgetExceededError):  # the cap holds for the speech cache's answers too
        asyncio.run(SpeechModels(models).synthesize("tts", SpeechRequest(text="Hello.")))
    hub.max_cost = None
    audio = asyncio.run(SpeechModels(models).synthesize("tts", SpeechRequest(text="Hello.")))
    heard = asyncio.run(SpeechModels(models).transcribe("asr", TranscriptionRequest(audio=audio)))
    assert heard.text == "joe:None:Hello."
    with pytest.raises(ConfigError, match="the tts role needs a chat model, but backend 'counting' gives tts clients only"):
        asyncio.run(models.complete("tts", ChatRequest(messages=[])))
    assert [(e.role, e.kind, e.cost, e.cached) for e in models.ledger] == [("tts", "tts", None, False), ("asr", "asr", None, False)]
    assert hub.store is not None and [r["kind"] for r in hub.store.db.query("select kind from llm_calls order by id")] == ["tts", "asr"]
