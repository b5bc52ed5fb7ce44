"""A byte-coded speech engine pair for tests without the heavy extra: its 'speech' carries the text's bytes as samples,
so noise garbles what the recogniser reads back, as it would real speech."""

from __future__ import annotations

import array
from collections.abc import Callable
from typing import Any

import attrs
import pytest
from bench_voice import Audio, SpeechClient, SpeechRequest, Transcription, TranscriptionClient, TranscriptionRequest

from bench_kernel import ConversationModels, Model, ModelConfig, ModelHub, ModelUnavailableError, hookimpl

STEP = 64
"""Amplitude per byte value: a character is a level; noise moves levels to neighbouring characters."""
RATE = 8000
REPEAT = 40
"""Samples per character (40 samples at 8 kHz: 5 ms)."""


def speak(text: str) -> bytes:
    from bench_voice.audio import Pcm, write_wav

    samples = array.array("h", (min(32767, ord(c) * STEP if ord(c) < 512 else ord("?") * STEP) for c in text for _ in range(REPEAT)))
    return write_wav(Pcm(samples, RATE))


def hear(data: bytes) -> str:
    from bench_voice.audio import read_wav

    pcm = read_wav(data)
    chars = []
    for i in range(0, len(pcm.samples), REPEAT):
        chunk = pcm.samples[i : i + REPEAT]
        level = round(sorted(chunk)[len(chunk) // 2] / STEP)  # the median sample of a character decides it
        chars.append(chr(max(32, min(126, level))))
    return "".join(chars)


@attrs.define(kw_only=True, eq=False)
class ByteModel(Model):
    """One engine (byte-tts or byte-asr); it keeps what it was asked, and can be made to fail."""

    asked: list[str] = attrs.field(factory=list)
    """The texts spoken (byte-tts) or heard (byte-asr), one per engine call."""
    broken: bool = False
    """Every call raises ModelUnavailableError (the conversation ends as an infrastructure error, re-run on resume)."""

    def client(self, config: ModelConfig) -> Any:
        return ByteSpeech(config, self) if self.name == "byte-tts" else ByteHearing(config, self)


@attrs.define
class ByteSpeech(SpeechClient):
    config: ModelConfig
    engine: ByteModel

    async def synthesize(self, request: SpeechRequest) -> Audio:
        if self.engine.broken:
            raise ModelUnavailableError("byte-tts is broken")
        self.engine.asked.append(request.text)
        return Audio(data=speak(request.text), sample_rate=RATE, latency_ms=1)


@attrs.define
class ByteHearing(TranscriptionClient):
    config: ModelConfig
    engine: ByteModel

    async def transcribe(self, request: TranscriptionRequest) -> Transcription:
        if self.engine.broken:
            raise ModelUnavailableError("byte-asr is broken")
        text = hear(request.audio.data)
        self.engine.asked.append(text)
        return Transcription(text=text, latency_ms=1)


class BytePlugin:
    """Registers the byte-coded engines (`tts` and `asr`: the same instances for every run that loads this plugin)."""

    def __init__(self) -> None:
        self.tts = ByteModel(name="byte-tts")
        self.asr = ByteModel(name="byte-asr")

    @hookimpl
    def register_models(self, register: Callable[[Model], None]) -> None:
        register(self.tts)
        register(self.asr)


@pytest.fixture
def byte_models() -> dict[str, ModelConfig]:
    """Model roles that use the byte-coded engines."""
    return {"tts": ModelConfig(backend="byte-tts", model="bytes"), "asr": ModelConfig(backend="byte-asr", model="bytes")}


@pytest.fixture
def byte_plugin() -> BytePlugin:
    """The plugin object registering the byte-coded engines."""
    return BytePlugin()


REFERENCE = "/work/shared/reference/tau2"
"""tau2's data (tasks_voice.json, audio_difficulty.json, noise files), when this machine has it; tests skip without it."""
NOISE = f"{REFERENCE}/voice/background_noise_audio_pcm_mono_verified"


def _reference(relative: str) -> str:
    from pathlib import Path

    path = Path(REFERENCE) / relative
    if not path.exists():
        pytest.skip(f"tau2 reference data not present: {path} (copy tau2's data/tau2/domains and data/voice there to run this)")
    return str(path)


@pytest.fixture
def reference() -> Callable[[str], str]:
    """A path under the tau2 reference data (`reference("airline")`), or skip the test saying what is missing."""
    return _reference


@pytest.fixture
def noise_dir() -> str:
    """tau2's noise files (skips without them)."""
    return _reference("voice/background_noise_audio_pcm_mono_verified/bursts") and NOISE


def voiced(text: str, rate: int = 22050) -> bytes:
    """A speech-like WAV for a text: a voiced buzz with one syllable envelope per character pair (no engine needed)."""
    import numpy as np
    from bench_voice.audio import Pcm, write_wav

    n = max(1, len(text)) * rate // 15
    t = np.arange(n) / rate
    pitch = 120 + 10 * np.sin(2 * np.pi * 0.5 * t)
    buzz = sum(np.sin(2 * np.pi * k * pitch * t) / k for k in range(1, 12))
    syllables = 0.5 + 0.5 * np.sin(2 * np.pi * 7.5 * t)
    samples = np.clip(3000 * buzz * syllables, -32768, 32767).astype(np.int16)
    return write_wav(Pcm(array.array("h", samples.tobytes()), rate))


@attrs.define(eq=False)
class FakeEngine(Model, SpeechClient, TranscriptionClient):
    """Speech-like audio for any text, a fixed transcript; it keeps what it was asked (no engine needed)."""

    name: str = "fake"
    spoken: list[SpeechRequest] = attrs.field(factory=list)
    heard: list[TranscriptionRequest] = attrs.field(factory=list)

    def client(self, config: ModelConfig) -> FakeEngine:
        return self

    async def synthesize(self, request: SpeechRequest) -> Audio:
        self.spoken.append(request)
        return Audio(data=voiced(request.text), sample_rate=22050)

    async def transcribe(self, request: TranscriptionRequest) -> Transcription:
        self.heard.append(request)
        return Transcription(text="heard", latency_ms=1)


@attrs.define
class FakeModels:
    """A conversation's model access (`models`, over a hub without a store) whose `tts` and `asr` roles are one
    `FakeEngine` (`spoken`, `heard`)."""

    engine: FakeEngine = attrs.field(factory=FakeEngine)
    models: ConversationModels = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        configs = {"tts": ModelConfig(backend="fake", model="fake-voice"), "asr": ModelConfig(backend="fake", model="fake-asr")}
        self.models = ConversationModels(ModelHub(configs=configs, backends={"fake": self.engine}))

    @property
    def spoken(self) -> list[SpeechRequest]:
        return self.engine.spoken

    @property
    def heard(self) -> list[TranscriptionRequest]:
        return self.engine.heard


def _duplex_setup(
    models: Any, *, level: str = "regular", seed: int = 7, task_id: str = "t1", data_dir: str | None = None, tick_ms: int = 200, **options: Any
) -> Any:
    """A full-duplex conversation's setup for the voice channel (`models`: a conversation's model access, or FakeModels)."""
    from bench_kernel import ConversationSetup, Mode, Task, UserScenario

    task = Task(id=task_id, user_scenario=UserScenario(instructions="Ask for help."))
    return ConversationSetup(
        task=task,
        domain="mock",
        mode=Mode.DEFAULT,
        seed=seed,
        policy="",
        agent_tools=[],
        user_tools=None,
        models=models.models if isinstance(models, FakeModels) else models,
        channel="voice",
        channel_options=options,
        duplex={"tick_ms": tick_ms, "speech_complexity": level},
        data_dir=data_dir,
    )


@pytest.fixture
def fake_models() -> FakeModels:
    """Model access without engines (speech-like audio, a fixed transcript)."""
    return FakeModels()


@pytest.fixture
def duplex_setup() -> Callable[..., Any]:
    """`duplex_setup(models, level=..., seed=..., task_id=..., data_dir=..., tick_ms=..., **channel_options)`."""
    return _duplex_setup
