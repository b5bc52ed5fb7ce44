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


@attrs.define
class ByteSpeech(SpeechClient):
    config: ModelConfig

    async def synthesize(self, request: SpeechRequest) -> Audio:
        return Audio(data=speak(request.text), sample_rate=RATE, latency_ms=1)


@attrs.define
class ByteHearing(TranscriptionClient):
    config: ModelConfig

    async def transcribe(self, request: TranscriptionRequest) -> Transcription:
        return Transcription(text=hear(request.audio.data), latency_ms=1)


@attrs.define(kw_only=True)
class ByteModel(Model):
    def client(self, config: ModelConfig) -> Any:
        return ByteSpeech(config) if self.name == "byte-tts" else ByteHearing(config)


class BytePlugin:
    """Registers the byte-coded engines."""

    @hookimpl
    def register_models(self, register: Callable[[Model], None]) -> None:
        register(ByteModel(name="byte-tts"))
        register(ByteModel(name="byte-asr"))


@pytest.fixture
def byte_models() -> dict[str, ModelConfig]:
    """Model roles that use the byte-coded engines."""
    return {"tts": ModelConfig(backend="byte-tts", model="bytes"), "asr": ModelConfig(backend="byte-asr", model="bytes")}


@pytest.fixture
def byte_plugin() -> BytePlugin:
    """The plugin object registering the byte-coded engines."""
    return BytePlugin()
