"""The voice channel: what the user says is spoken, mixed with noise and recognised before the agent reads it.

Per user turn the conversation's events keep a `voice.turn` record: the text meant and heard, the
word error rate, the audio's sha256 and duration, the noise level, and each engine's latency and
whether the run's speech cache answered instead (the kernel adds a `channel.transcript` event when
meant and heard differ). Noise is added to the audio the cache gives, so every conversation still
hears its own noise. With `keep_audio=DIR` the noisy recordings are written there, named by
conversation seed and turn. With `listen=true` the agent's replies go through the same path before
the user simulator reads them.

In full duplex the session's `render`, `on_line`, `hear` and `conditions` speak in tick chunks under the run's speech
complexity (duplex.py, effects.py, complexity.py; numpy and scipy load only then). The turn-based path is unchanged.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import attrs
from bench_duplex import Chunk, DuplexChannelSession, Utterance, word_error_rate

from bench_kernel import (
    AssistantMessage,
    Channel,
    ConversationSetup,
    ModelUnavailableError,
    UserMessage,
)

from .audio import digest, read_wav, with_noise, write_wav
from .fields import accuracy, fields_in, for_speech
from .speech import Audio, SpeechModels, SpeechRequest, TranscriptionRequest
from .turns import VoiceTurn

if TYPE_CHECKING:
    from .duplex import DuplexVoice

CONTROL = re.compile(r"###[A-Z-]+###")
Side = Literal["agent", "user"]


@attrs.define
class VoiceSession(DuplexChannelSession):
    """The voice path for one conversation."""

    setup: ConversationSetup
    turn: int = 0
    speech: DuplexVoice | None = None
    """Full duplex: the conversation's speech conditions and line state (made on first use)."""

    @property
    def options(self) -> dict[str, Any]:
        """The run's channel options."""
        return dict(self.setup.channel_options)

    async def to_agent(self, message: UserMessage) -> UserMessage:
        """The user's words as the agent hears them."""
        if not message.content:
            return message
        return attrs.evolve(message, content=await self._through(message.content, "user"))

    async def to_user(self, message: AssistantMessage) -> AssistantMessage:
        """The agent's words as the user hears them (only when the user simulator listens)."""
        if not message.content or not self.options.get("listen"):
            return message
        return attrs.evolve(message, content=await self._through(message.content, "agent"))

    async def _through(self, text: str, speaker: str) -> str:
        # Control tokens (###STOP###) are not speech: they cross the channel as they are.
        tokens = CONTROL.findall(text)
        spoken_text = CONTROL.sub("", text).strip()
        if not spoken_text:
            return text
        heard = await self._speak_and_hear(spoken_text, speaker)
        return " ".join([heard, *tokens]) if tokens else heard

    async def _speak_and_hear(self, text: str, speaker: str) -> str:
        self.turn += 1
        models = SpeechModels(self.setup.models)
        spoken: Audio = await models.synthesize("tts", SpeechRequest(text=for_speech(text)))
        snr = self.options.get("snr_db")
        data = spoken.data
        if snr is not None:
            seed = int(hashlib.sha256(f"{self.setup.seed}:{self.turn}".encode()).hexdigest()[:12], 16)
            data = write_wav(with_noise(read_wav(spoken.data), float(snr), seed))
        heard = await models.transcribe("asr", TranscriptionRequest(audio=Audio(data=data, sample_rate=spoken.sample_rate)))
        self._keep(data)
        pcm = read_wav(data)
        declared = self.setup.task.extension("critical_fields") or [] if speaker == "user" else []
        said_fields = fields_in(text, declared)
        right, said, misheard = accuracy(said_fields, heard.text)
        self.setup.events.emit(
            VoiceTurn(
                speaker=speaker,
                meant=text,
                heard=heard.text,
                wer=word_error_rate(for_speech(text), heard.text),
                audio_sha256=digest(data),
                seconds=round(pcm.seconds, 3),
                snr_db=None if snr is None else float(snr),
                tts_ms=spoken.latency_ms,
                asr_ms=heard.latency_ms,
                tts_cached=spoken.cached,
                asr_cached=heard.cached,
                fields=[f.value for f in said_fields],
                fields_said=said,
                fields_heard=right,
                misheard=misheard,
            ),
            source="voice",
        )
        return heard.text

    async def begin(self) -> None:
        """Full duplex: the out-of-turn inserts synthesised before tick 0, so one may play from the first tick."""
        await self._duplex().prepare()

    async def render(self, text: str, side: Side, *, tick_ms: int, index: int) -> Utterance:
        """Full duplex: the text spoken by the `tts` role as tick chunks of 16 kHz PCM (the user's with its effects)."""
        return await self._duplex().render(text, side, tick_ms=tick_ms, index=index)

    def on_line(self, chunk: Chunk, side: Side, tick: int, *, tick_ms: int) -> Chunk:
        """Full duplex: one tick as mu-law 8 kHz; the user's with noise, bursts, inserts, telephony and frame drops."""
        return self._duplex().on_line(chunk, side, tick, tick_ms=tick_ms)

    async def hear(self, audio: bytes, side: Side, text: str) -> str:
        """Full duplex: what the `asr` role recognises in an utterance's mu-law audio."""
        return await self._duplex().hear(audio, side, text)

    def conditions(self) -> dict[str, Any]:
        """Full duplex: the conversation's speech conditions (level, persona, voice, noise files, seed, source)."""
        return self._duplex().conditions.as_dict()

    def _duplex(self) -> DuplexVoice:
        if self.speech is None:
            try:
                from .duplex import DuplexVoice  # numpy and scipy load only when a full-duplex conversation starts
            except ImportError as exc:  # a tts/asr role on an endpoint, without the engines extra that brings them
                raise ModelUnavailableError(
                    f"full duplex through the voice channel needs numpy and scipy ({exc}): pip install 'bench-voice[engines]'"
                ) from exc
            self.speech = DuplexVoice.start(self.setup)
        return self.speech

    def _keep(self, data: bytes) -> None:
        folder = self.options.get("keep_audio")
        if folder:
            path = Path(str(folder))
            path.mkdir(parents=True, exist_ok=True)
            (path / f"{self.setup.task.id[:80].replace('/', '_')}-{self.setup.seed}-{self.turn:03d}.wav").write_bytes(data)


@attrs.define(kw_only=True)
class VoiceChannel(Channel):
    """User text -> speech (tts) -> optional noise (snr_db) -> recognition (asr) -> agent."""

    name: str = "voice"
    description: str = "Spoken user turns: TTS, noise at --channel-option snr_db=N, ASR (offline piper + faster-whisper by default)."
    model_roles: tuple[str, ...] = ("tts", "asr")
    default_models: dict[str, dict[str, Any]] = attrs.field(
        factory=lambda: {"tts": {"backend": "piper", "model": "joe"}, "asr": {"backend": "faster-whisper", "model": "tiny.en"}}
    )

    def start(self, setup: ConversationSetup) -> DuplexChannelSession:
        """A voice session for one conversation."""
        return VoiceSession(setup)
