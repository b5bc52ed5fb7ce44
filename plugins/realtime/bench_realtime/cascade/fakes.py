"""Stand-in speech engines for testing the cascade without piper or faster-whisper: a scripted recogniser, a tone synthesiser."""

from __future__ import annotations

import array
import math
from collections.abc import Callable
from typing import Any

import attrs
from bench_duplex import paced_utterance
from bench_voice import Audio, SpeechClient, SpeechRequest, Transcription, TranscriptionClient, TranscriptionRequest

from bench_kernel import Model, ModelConfig, hookimpl

from .audio import wav_bytes

TTS_RATE = 16000


def tone_ticks(text: str, tick_ms: int = 200) -> list[bytes]:
    """The kernel's text-paced user tone for a text, tick by tick."""
    return [chunk.audio for chunk in paced_utterance(text, "user", tick_ms=tick_ms, index=0).chunks]


@attrs.define
class FakeSpeech:
    """Speech roles (duck-typed `SpeechModels`, no hub): `asr` answering from a script, `tts` speaking a tone as long as the text."""

    heard: list[str]
    speech_seconds: float | None = None
    """Every synthesised text lasts this long (default: 15 characters a second)."""
    asr_calls: int = 0
    spoken: list[str] = attrs.field(factory=list)

    async def transcribe(self, role: str, request: TranscriptionRequest) -> Transcription:
        assert role == "asr" and request.audio.data[:4] == b"RIFF"
        self.asr_calls += 1
        return Transcription(text=self.heard.pop(0) if self.heard else "")

    async def synthesize(self, role: str, request: SpeechRequest) -> Audio:
        assert role == "tts"
        self.spoken.append(request.text)
        return tone_wav(request.text, self.seconds(request.text))

    def seconds(self, text: str) -> float:
        return self.speech_seconds if self.speech_seconds is not None else len(text) / 15

    def ulaw_bytes(self, text: str) -> int:
        """Bytes of 8 kHz mu-law the synthesised text comes to."""
        return int(int(self.seconds(text) * TTS_RATE) * 8000 / TTS_RATE)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


def tone_wav(text: str, seconds: float | None = None) -> Audio:
    """A 16 kHz WAV tone lasting as long as the text takes to say (15 characters a second), or `seconds`."""
    n = int((len(text) / 15 if seconds is None else seconds) * TTS_RATE)
    samples = array.array("h", (int(6000 * math.sin(2 * math.pi * 180 * i / TTS_RATE)) for i in range(n)))
    return Audio(data=wav_bytes(samples, TTS_RATE), sample_rate=TTS_RATE)


class ToneSpeech(SpeechClient):
    """A `tts` backend's client: every text becomes a tone as long as the text takes to say."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    async def synthesize(self, request: SpeechRequest) -> Audio:
        """The text's tone."""
        return tone_wav(request.text)


class ScriptedHearing(TranscriptionClient):
    """An `asr` backend's client: hears `config.options["heard"]` (a sentence) in every recording."""

    def __init__(self, config: ModelConfig) -> None:
        self.config = config

    async def transcribe(self, request: TranscriptionRequest) -> Transcription:
        """The scripted sentence."""
        return Transcription(text=str(self.config.options.get("heard", "Hello, I need some help.")))


@attrs.define(kw_only=True)
class FakeEngine(Model):
    """A stand-in speech backend: `tone-tts` or `scripted-asr`."""

    def client(self, config: ModelConfig) -> SpeechClient | TranscriptionClient:
        """The backend's client."""
        return ToneSpeech(config) if self.name == "tone-tts" else ScriptedHearing(config)


class FakeEnginesPlugin:
    """Registers `tone-tts` and `scripted-asr` (add it as an extra plugin in a test's plugin manager)."""

    @hookimpl
    def register_models(self, register: Callable[[Model], None]) -> None:
        """The two stand-in engines."""
        register(FakeEngine(name="tone-tts", description="a tone as long as the text (tests)"))
        register(FakeEngine(name="scripted-asr", description="hears one scripted sentence (tests)"))
