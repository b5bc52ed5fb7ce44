"""The voice channel in full duplex: synthesised speech in tick chunks, the user's line effects, recognition of a turn.

`render` speaks a text with the `tts` role and cuts it into tick chunks of 16 kHz PCM (marked in `Chunk.info`), the
user's with its per-utterance effects; `on_line` turns every tick into mu-law 8 kHz, adding on the user's side the
background noise, bursts, out-of-turn speech, telephony and frame drops of the conversation's speech conditions
(`complexity.py`); `hear` recognises an utterance's mu-law audio with the `asr` role. Imported only when a full-duplex
conversation starts (numpy and scipy come with the `engines` extra).
"""

from __future__ import annotations

import array
import math
import re
from collections.abc import Mapping
from typing import Any, Literal

import attrs
import numpy as np
from bench_duplex import Chunk, Utterance, duplex_settings, spread, utterance_id, word_error_rate

from bench_kernel import ConversationSetup

from .audio import Pcm, digest, read_wav, write_wav
from .complexity import SpeechConditions, conditions_for
from .effects import (
    PCM_RATE,
    REFERENCE_RMS,
    Downsampler,
    Floats,
    Insert,
    Rendered,
    UserLine,
    low_pass,
    mulaw_decode,
    mulaw_encode,
    pcm_samples,
    resample,
    tic_kind,
    tic_sound,
    to_pcm16,
    user_line,
    utterance_effects,
)
from .fields import accuracy, fields_in, for_speech
from .speech import Audio, SpeechModels, SpeechRequest, TranscriptionRequest
from .turns import VoiceTurn

CONTROL = re.compile(r"###[A-Z-]+###")
Side = Literal["agent", "user"]
FORMAT_KEY = "audio_format"
PCM_FORMAT = "pcm_s16le/16000"
"""`Chunk.info[FORMAT_KEY]` of chunks whose audio is still 16 kHz PCM (render's output, before on_line)."""
FADE_SAMPLES = 100
NON_DIRECTED_CUTOFF_HZ = 1000.0
"""Phrases not meant for the agent are muffled (said away from the phone)."""


def parse_voices(option: Any) -> dict[str, str]:
    """The channel option `voices=persona:voice,...` as a mapping (a mapping given as such is taken as it is)."""
    if not option:
        return {}
    if isinstance(option, Mapping):
        return {str(k): str(v) for k, v in option.items()}
    pairs = [part.split(":", 1) for part in str(option).split(",") if part.strip()]
    return {k.strip(): v.strip() for k, v in pairs if v.strip()}


@attrs.define
class DuplexVoice:
    """One full-duplex conversation's speech: its conditions, the user's line and the agent's downsampler."""

    setup: ConversationSetup
    conditions: SpeechConditions
    requested_voice: str | None
    """The voice named for the persona by the `voices` option (None: the tts role's own voice)."""
    line: UserLine
    agent: Downsampler = attrs.field(factory=Downsampler)
    prepared: bool = False

    @classmethod
    def start(cls, setup: ConversationSetup) -> DuplexVoice:
        """The conversation's conditions at the run's speech complexity, and its line with the noise files loaded."""
        options = dict(setup.channel_options)
        settings = duplex_settings(setup)
        level = settings.speech_complexity if settings is not None else "control"
        conditions = conditions_for(
            level, setup.task.id, setup.seed, setup.data_dir, noise_dir=str(options["noise_dir"]) if options.get("noise_dir") else None
        )
        requested = parse_voices(options.get("voices")).get(conditions.persona)
        conditions = attrs.evolve(conditions, voice=requested or _role_voice(setup))
        return cls(setup=setup, conditions=conditions, requested_voice=requested, line=user_line(conditions))

    async def prepare(self) -> None:
        """Synthesise the out-of-turn inserts once per conversation (phrases through `tts`, muffled; tics as sounds)."""
        if self.prepared:
            return
        self.prepared = True
        settings, inserts = self.conditions.inserts, []
        rng = np.random.default_rng(self.conditions.voice_seed + 5)
        if settings.vocal_tics:
            inserts += [Insert(kind="vocal_tic", text=t, samples=tic_sound(tic_kind(t), rng, REFERENCE_RMS)) for t in settings.tics]
        if settings.non_directed:
            for phrase in settings.phrases:
                inserts.append(Insert(kind="non_directed", text=phrase, samples=low_pass(await self._speak(phrase), NON_DIRECTED_CUTOFF_HZ)))
        self.line.inserts = inserts

    async def render(self, text: str, side: Side, *, tick_ms: int, index: int) -> Utterance:
        """The text spoken as tick chunks of 16 kHz PCM (the user's with its per-utterance effects); control tokens are not spoken."""
        tokens, spoken = CONTROL.findall(text), CONTROL.sub("", text).strip()
        uid = utterance_id(side, index, text)
        if not spoken:
            return Utterance(chunks=(Chunk(text=text, speech=True, utterance=uid),), text=text)
        if side == "user":
            await self.prepare()
        samples = await self._speak(spoken)
        rendered = utterance_effects(samples, spoken, self.conditions, index) if side == "user" else Rendered(samples=samples, text=spoken)
        return chunked(rendered, tokens, uid, tick_ms)

    def on_line(self, chunk: Chunk, side: Side, tick: int, *, tick_ms: int) -> Chunk:
        """One tick as the line carries it: the user's with noise, bursts, inserts, telephony and drops; the agent's clean."""
        ours = chunk.info.get(FORMAT_KEY) == PCM_FORMAT
        info = {k: v for k, v in chunk.info.items() if k != FORMAT_KEY}
        if side == "agent":
            if not ours:
                return chunk
            audio = mulaw_encode(np.round(self.agent(np.frombuffer(chunk.audio, dtype="<i2").astype(np.float64))))
            return attrs.evolve(chunk, audio=audio, info=info)
        if ours:
            samples: Floats | None = np.frombuffer(chunk.audio, dtype="<i2").astype(np.float64)
        else:  # mu-law 8 kHz from elsewhere: back to 16 kHz so the line treats it as its own speech
            samples = resample(mulaw_decode(chunk.audio), 8000) if chunk.audio else None
        audio, effects = self.line.tick(samples, chunk.speech, tick_ms)
        return attrs.evolve(chunk, audio=audio, effects=(*chunk.effects, *effects), info=info)

    async def hear(self, audio: bytes, side: Side, text: str) -> str:
        """What the `asr` role recognises in an utterance's mu-law audio (control tokens cross as they are)."""
        tokens, meant = CONTROL.findall(text), CONTROL.sub("", text).strip()
        heard = ""
        samples = mulaw_decode(audio) if audio else np.zeros(0)
        if len(samples) and np.any(samples):
            wav = write_wav(Pcm(array.array("h", samples.astype("<i2").tobytes()), 8000))
            result = await SpeechModels(self.setup.models).transcribe("asr", TranscriptionRequest(audio=Audio(data=wav, sample_rate=8000)))
            heard = result.text
            self._record(side, meant, heard, wav, len(samples) / 8000, result)
        return " ".join([heard, *tokens]).strip() if tokens else heard

    def _record(self, side: Side, meant: str, heard: str, wav: bytes, seconds: float, result: Any) -> None:
        """A `voice.turn` event, as half duplex keeps one per turn (the voice metric's WER and critical fields)."""
        declared = self.setup.task.extension("critical_fields") or [] if side == "user" else []
        said_fields = fields_in(meant, declared)
        right, said, misheard = accuracy(said_fields, heard)
        self.setup.events.emit(
            VoiceTurn(
                speaker=side,
                meant=meant,
                heard=heard,
                wer=word_error_rate(for_speech(meant), heard),
                audio_sha256=digest(wav),
                seconds=round(seconds, 3),
                snr_db=None,
                tts_ms=None,
                asr_ms=result.latency_ms,
                asr_cached=result.cached,
                fields=[f.value for f in said_fields],
                fields_said=said,
                fields_heard=right,
                misheard=misheard,
            ),
            source="voice",
        )

    async def _speak(self, text: str) -> Floats:
        """The tts role's speech for a text, as 16 kHz samples."""
        spoken = await SpeechModels(self.setup.models).synthesize("tts", SpeechRequest(text=for_speech(text), voice=self.requested_voice))
        pcm = read_wav(spoken.data)
        return resample(np.frombuffer(pcm.samples, dtype=np.int16).astype(np.float64), pcm.rate)


def _role_voice(setup: ConversationSetup) -> str | None:
    """The tts role's own voice (its model name: piper's `joe`), for the record."""
    models = setup.models
    if models is None or not hasattr(models, "has") or not models.has("tts"):
        return None
    return str(models.config("tts").model)


def chunked(rendered: Rendered, tokens: list[str], uid: str, tick_ms: int) -> Utterance:
    """The samples as tick chunks of 16 kHz PCM, the text spread over them, each effect on the chunk where it starts."""
    size = pcm_samples(tick_ms)
    count = max(1, math.ceil(len(rendered.samples) / size))
    samples = np.array(rendered.samples, dtype=np.float64)
    fade = min(FADE_SAMPLES, len(samples))
    samples[len(samples) - fade :] *= np.linspace(1.0, 0.0, fade)
    padded = np.pad(samples, (0, count * size - len(samples)))
    parts = spread(rendered.text, count)
    if tokens:  # a stop token ends the last chunk, whole
        parts[-1] = " ".join([parts[-1].rstrip(), *tokens]).strip()
    effects: list[list[dict[str, Any]]] = [[] for _ in range(count)]
    for effect in rendered.effects:
        effects[min(count - 1, int(effect.get("start_ms", 0)) * PCM_RATE // 1000 // size)].append(effect)
    chunks = tuple(
        Chunk(
            audio=to_pcm16(padded[i * size : (i + 1) * size]),
            text=parts[i],
            speech=True,
            utterance=uid,
            effects=tuple(effects[i]),
            info={FORMAT_KEY: PCM_FORMAT},
        )
        for i in range(count)
    )
    text = " ".join([rendered.text, *tokens])
    return Utterance(chunks=chunks, text=text, effects=rendered.effects)
