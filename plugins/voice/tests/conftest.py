"""A byte-coded speech engine pair for tests without the heavy extra: its 'speech' carries the text's bytes as samples,
so noise garbles what the recogniser reads back, as it would real speech."""

from __future__ import annotations

import array
from collections.abc import Callable
from typing import Any

import attrs
import pytest

from bench_kernel import (
    Audio,
    Model,
    ModelConfig,
    ModelUnavailableError,
    SpeechClient,
    SpeechRequest,
    Transcription,
    TranscriptionClient,
    TranscriptionRequest,
    hookimpl,
)

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
        chunk = pcm.samples[i:i + REPEAT]
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
