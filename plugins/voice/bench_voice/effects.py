"""Audio effects of full-duplex speech (numpy and scipy, the `engines` extra): what tau2's voice user sounds like.

Per utterance (16 kHz PCM, before chunking): an in-turn vocal tic and dynamic muffling. Per tick (`UserLine`): the
background noise at a drifting SNR, Poisson noise bursts, out-of-turn speech while the user is silent, then telephony
(16 -> 8 kHz, band-pass 300-3400 Hz with filter state kept across ticks, 0.9 headroom, mu-law) and Gilbert-Elliott
frame drops. Each effect draws from its own random stream, all seeded from the conversation's voice seed, so a
conversation sounds the same every time it is played.

piper cannot say "[cough]": a vocal tic is a short synthesised non-speech sound (filtered noise shaped like a cough,
a sneeze or a sniffle) inserted at the chosen word, at the quietest point near where that word starts (our choice).
"""

from __future__ import annotations

import functools
import math
import re
from pathlib import Path
from random import Random
from typing import Any

import attrs
import numpy as np
from bench_duplex import SAMPLE_RATE, silence, tick_bytes
from numpy.typing import NDArray
from scipy import signal

from .audio import read_wav
from .complexity import FrameDropSettings, NoiseSettings, SpeechConditions

PCM_RATE = 16000
"""The user's speech and effects run at 16 kHz (tau2's), down to 8 kHz only on the line."""
REFERENCE_RMS = 3000.0
"""A typical TTS speech level: noise SNRs are against it (speech itself is never measured, as tau2)."""
SILENCE_BYTE = silence(1)[0]
BAD_STATE_LOSS = 0.2
"""Gilbert-Elliott: the chance a tick is dropped in the bad state (none in the good one); loss rates must be below it."""
Floats = NDArray[np.float64]
Effect = dict[str, Any]


def pcm_samples(tick_ms: int) -> int:
    """16 kHz samples in one tick."""
    return PCM_RATE * tick_ms // 1000


def to_pcm16(samples: Floats) -> bytes:
    """Float samples as clipped little-endian 16-bit PCM."""
    return np.clip(np.round(samples), -32768, 32767).astype("<i2").tobytes()


def from_pcm16(data: bytes) -> Floats:
    """16-bit PCM as float samples."""
    return np.frombuffer(data, dtype="<i2").astype(np.float64)


def resample(samples: Floats, rate: int, to: int = PCM_RATE) -> Floats:
    """Samples at another rate (polyphase, anti-aliased)."""
    if rate == to or not len(samples):
        return samples
    g = math.gcd(rate, to)
    return signal.resample_poly(samples, to // g, rate // g)


def mulaw_encode(samples: NDArray[Any]) -> bytes:
    """16-bit samples as G.711 mu-law (the same bytes as the kernel's scalar encoder)."""
    s = np.asarray(samples, dtype=np.int64)
    sign = np.where(s < 0, 0x80, 0)
    magnitude = np.minimum(np.abs(s), 32635) + 0x84
    exponent = np.clip(np.floor(np.log2(magnitude)).astype(np.int64) - 7, 0, 7)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return (~(sign | (exponent << 4) | mantissa) & 0xFF).astype(np.uint8).tobytes()


def mulaw_decode(data: bytes) -> Floats:
    """G.711 mu-law as 16-bit sample values."""
    u = ~np.frombuffer(data, dtype=np.uint8).astype(np.int64) & 0xFF
    magnitude = (((u & 0x0F) << 3) + 0x84) << ((u >> 4) & 0x07)
    return np.where(u & 0x80, 0x84 - magnitude, magnitude - 0x84).astype(np.float64)


def rms(samples: Floats) -> float:
    """Root mean square (0 for no samples)."""
    return float(np.sqrt(np.mean(samples * samples))) if len(samples) else 0.0


@functools.cache
def _lowpass(cutoff_hz: float, rate: int, order: int) -> Floats:
    return signal.butter(order, cutoff_hz, btype="low", fs=rate, output="sos")


@functools.cache
def _band() -> Floats:
    return signal.butter(4, [300.0, 3400.0], btype="band", fs=SAMPLE_RATE, output="sos")


def low_pass(samples: Floats, cutoff_hz: float) -> Floats:
    """A zero-phase 4th-order Butterworth low-pass at 16 kHz (muffling)."""
    if len(samples) < 64:
        return samples
    return signal.sosfiltfilt(_lowpass(cutoff_hz, PCM_RATE, 4), samples)


def load_noise(path: Path, peak: float) -> Floats | None:
    """A noise file at 16 kHz, peak-normalised to `peak` of full scale (None when silent)."""
    pcm = read_wav(path.read_bytes())
    samples = resample(np.frombuffer(pcm.samples, dtype=np.int16).astype(np.float64), pcm.rate)
    top = float(np.max(np.abs(samples))) if len(samples) else 0.0
    return samples * (peak * 32767 / top) if top > 0 else None


# Per utterance ----------------------------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class Rendered:
    """An utterance's 16 kHz samples after its own effects, the text as rendered, and the effects with their start."""

    samples: Floats
    text: str
    effects: tuple[Effect, ...] = ()


def utterance_effects(samples: Floats, text: str, conditions: SpeechConditions, index: int) -> Rendered:
    """A user utterance with its in-turn vocal tic and muffling, drawn as tau2 draws them (one stream per utterance)."""
    rng = Random(conditions.voice_seed + index)
    # tau2 draws every enabled feature in this order; the frame-drop and burst draws are unused per utterance but
    # still taken, so the draws that matter fall where tau2's do.
    if conditions.frame_drops.enabled:
        rng.random()
    muffle = conditions.muffling.enabled and rng.random() < conditions.muffling.probability
    if conditions.bursts.enabled:
        rng.random()
    inserts = conditions.inserts
    tic = inserts.vocal_tics and rng.random() < min(inserts.per_minute / 10, 0.5)
    effects: list[Effect] = []
    words = text.split()
    if tic and len(words) >= inserts.min_words_for_tics:
        samples, text, effect = insert_tic(
            samples, words, rng.choice(inserts.tics), rng.randint(1, len(words) - 1), seed=conditions.voice_seed + 7919 * (index + 1)
        )
        effects.append(effect)
    if muffle:
        samples, effect_or_none = muffle_segment(samples, conditions)
        effects += [effect_or_none] if effect_or_none else []
    return Rendered(samples=samples, text=text, effects=tuple(effects))


def muffle_segment(samples: Floats, conditions: SpeechConditions) -> tuple[Floats, Effect | None]:
    """One muffled segment centred in the clip, cross-faded in and out, peak kept (skipped when the clip is too short)."""
    m = conditions.muffling
    segment, fade = m.segment_ms * PCM_RATE // 1000, m.transition_ms * PCM_RATE // 1000
    if len(samples) < segment + 2 * fade:
        return samples, None
    start = (len(samples) - segment) // 2 - fade
    mix = np.zeros(len(samples))
    mix[start : start + fade] = np.linspace(0.0, 1.0, fade, endpoint=False)
    mix[start + fade : start + fade + segment] = 1.0
    mix[start + fade + segment : start + 2 * fade + segment] = np.linspace(1.0, 0.0, fade, endpoint=False)
    out = (1 - mix) * samples + mix * low_pass(samples, m.cutoff_hz)
    peak, new_peak = float(np.max(np.abs(samples))), float(np.max(np.abs(out)))
    if new_peak > 0:
        out *= peak / new_peak
    effect = {"type": "muffling", "start_ms": 1000 * (start + fade) // PCM_RATE, "duration_ms": m.segment_ms, "cutoff_hz": m.cutoff_hz}
    return out, effect


def insert_tic(samples: Floats, words: list[str], tic: str, position: int, *, seed: int) -> tuple[Floats, str, Effect]:
    """The tic's sound inserted where word `position` starts (estimated from the characters before it)."""
    before = " ".join(words[:position])
    guess = int(len(samples) * (len(before) + 1) / max(1, len(" ".join(words))))
    at = quietest_point(samples, guess)
    level = max(rms(samples), 500.0)
    gap = np.zeros(PCM_RATE // 12)  # ~80 ms of pause on each side, as a speaker stops to cough
    sound = tic_sound(tic_kind(tic), np.random.default_rng(seed), level)
    out = np.concatenate([samples[:at], gap, sound, gap, samples[at:]])
    text = f"{before}{tic} {' '.join(words[position:])}"
    effect = {
        "type": "speech_insert",
        "kind": "vocal_tic",
        "in_turn": True,
        "text": tic,
        "start_ms": 1000 * at // PCM_RATE,
        "duration_ms": 1000 * (len(sound) + 2 * len(gap)) // PCM_RATE,
    }
    return out, text, effect


def quietest_point(samples: Floats, guess: int, window_ms: int = 200, frame_ms: int = 20) -> int:
    """The start of the quietest frame within window_ms of `guess` (a pause between words, when there is one)."""
    frame, reach = PCM_RATE * frame_ms // 1000, PCM_RATE * window_ms // 1000
    starts = range(max(0, guess - reach), max(1, min(len(samples) - frame, guess + reach)), frame // 2)
    if not starts or len(samples) < frame:
        return min(max(0, guess), len(samples))
    return min(starts, key=lambda s: float(np.sum(samples[s : s + frame] ** 2)))


def tic_kind(text: str) -> str:
    """cough, sneeze or sniffle, from a tic's text such as '.[cough][cough][cough]'."""
    found = re.search(r"\[(\w+)\]", text)
    return found.group(1) if found else "cough"


def tic_sound(kind: str, rng: np.random.Generator, level_rms: float) -> Floats:
    """A short non-speech sound at about the speech's level: three coughs, a sneeze, or three sniffles."""
    if kind == "sneeze":
        parts = [_noise_burst(rng, 250, 400.0, 2500.0, attack_ms=200, decay=2.0), _noise_burst(rng, 180, 1500.0, 6000.0, 5, 12.0)]
    elif kind == "sniffle":
        parts = [_noise_burst(rng, 150, 2000.0, 7000.0, 60, 4.0) * 0.4 for _ in range(3)]
    else:
        parts = [_noise_burst(rng, 180, 200.0, 3000.0, 5, 10.0) for _ in range(3)]
    gap = np.zeros(PCM_RATE * 120 // 1000)
    sound = np.concatenate([x for part in parts for x in (part, gap)][:-1])
    return sound * (level_rms / max(rms(sound), 1e-9)) * (0.5 if kind == "sniffle" else 1.0)


def _noise_burst(rng: np.random.Generator, ms: int, low_hz: float, high_hz: float, attack_ms: int, decay: float) -> Floats:
    """Band-limited noise with a linear attack and an exponential decay."""
    n, attack = PCM_RATE * ms // 1000, max(1, PCM_RATE * attack_ms // 1000)
    sos = signal.butter(2, [low_hz, min(high_hz, PCM_RATE / 2 - 100)], btype="band", fs=PCM_RATE, output="sos")
    noise = signal.sosfilt(sos, rng.standard_normal(n))
    envelope = np.exp(-decay * np.linspace(0.0, 1.0, n))
    envelope[:attack] *= np.linspace(0.0, 1.0, attack)
    return noise * envelope


# Per tick ----------------------------------------------------------------------------------------------------


@attrs.define
class Downsampler:
    """16 -> 8 kHz with an anti-aliasing low-pass whose state carries over from tick to tick."""

    zi: Floats = attrs.field(factory=lambda: np.zeros((_lowpass(3600.0, PCM_RATE, 8).shape[0], 2)))

    def __call__(self, samples: Floats) -> Floats:
        """Half the samples, filtered first."""
        filtered, self.zi = signal.sosfilt(_lowpass(3600.0, PCM_RATE, 8), samples, zi=self.zi)
        return filtered[::2]


@attrs.define
class Telephony:
    """The phone line: 16 -> 8 kHz, band-pass 300-3400 Hz (state kept across ticks), 0.9 headroom, mu-law."""

    down: Downsampler = attrs.field(factory=Downsampler)
    zi: Floats = attrs.field(factory=lambda: np.zeros((_band().shape[0], 2)))

    def __call__(self, samples: Floats) -> bytes:
        """One tick of 16 kHz samples as mu-law 8 kHz."""
        band, self.zi = signal.sosfilt(_band(), self.down(samples), zi=self.zi)
        return mulaw_encode(np.clip(np.round(band * 0.9), -32768, 32767))


def snr_envelope(settings: NoiseSettings, start: int, n: int) -> float:
    """The background noise's mean SNR over n samples from sample `start`: base + drift x a slow normalised wave."""
    t = (start + np.arange(n)) / PCM_RATE
    v = 2 * math.pi * settings.variation_speed
    wave = (np.sin(v * 1.0 * t) + 0.3 * np.sin(v * 2.7 * t) + 0.2 * np.sin(v * 0.4 * t)) / 1.5
    return float(np.mean(settings.snr_db + settings.drift_db * wave))


@attrs.define
class NoiseTrack:
    """The looped background noise, scaled each tick to the drifting SNR against the reference speech level."""

    samples: Floats | None
    settings: NoiseSettings
    position: int = 0

    def next(self, n: int) -> Floats:
        """The next n samples (silence without a file)."""
        start, self.position = self.position, self.position + n
        if self.samples is None or not len(self.samples):
            return np.zeros(n)
        segment = np.take(self.samples, np.arange(start, start + n), mode="wrap")
        level = rms(segment)
        if level == 0:
            return segment
        target = REFERENCE_RMS * 10 ** (-snr_envelope(self.settings, start, n) / 20)
        return segment * (target / level)


@attrs.define
class Playing:
    """A clip playing across ticks (a burst, an out-of-turn insert)."""

    samples: Floats
    position: int = 0

    def next(self, n: int) -> Floats:
        """The next n samples of the clip, zero-padded at its end."""
        part = self.samples[self.position : self.position + n]
        self.position += n
        return np.pad(part, (0, n - len(part)))

    @property
    def done(self) -> bool:
        """Played to the end."""
        return self.position >= len(self.samples)


def poisson_fires(rng: Random, per_minute: float, tick_ms: int) -> bool:
    """A Poisson event at `per_minute` happens in this tick."""
    return per_minute > 0 and rng.random() < 1 - math.exp(-(per_minute / 60) * tick_ms / 1000)


@attrs.define
class GilbertElliott:
    """Two-state frame loss: good (no loss) and bad (loss 0.2); the long-run loss rate is `rate`, bursts last `burst_ms`."""

    settings: FrameDropSettings
    rng: Random
    bad: bool = False

    def drops(self, tick_ms: int) -> bool:
        """Step the state for one tick, then decide whether the tick loses a frame."""
        loss = min(self.settings.rate, BAD_STATE_LOSS - 1e-9)
        to_good = 1 - math.exp(-(1000.0 / self.settings.burst_ms) * tick_ms / 1000)
        # tau2 turns both rates into per-tick chances separately, which at 200 ms ticks nearly doubles the loss (0.0375
        # for 0.02); deriving the good->bad chance from the per-tick bad->good one keeps P(bad) x 0.2 equal to the rate.
        to_bad = min(1.0, to_good * loss / (BAD_STATE_LOSS - loss))
        if self.rng.random() < (to_good if self.bad else to_bad):
            self.bad = not self.bad
        return self.rng.random() < (BAD_STATE_LOSS if self.bad else 0.0)


def drop_frame(audio: bytes, drop_ms: int) -> bytes:
    """The tick's first drop_ms of mu-law silenced."""
    n = min(len(audio), tick_bytes(drop_ms))
    return bytes([SILENCE_BYTE]) * n + audio[n:]


@attrs.frozen(kw_only=True)
class Insert:
    """An out-of-turn clip: a vocal tic or a phrase not meant for the agent (muffled)."""

    kind: str
    text: str
    samples: Floats


@attrs.define
class UserLine:
    """What the user's side of the line adds each tick: noise, bursts, out-of-turn speech, telephony, frame drops."""

    conditions: SpeechConditions
    noise: NoiseTrack
    bursts: list[tuple[str, Floats]]
    inserts: list[Insert] = attrs.field(factory=list)
    telephony: Telephony = attrs.field(factory=Telephony)
    triggers: Random = attrs.field(init=False)
    burst_choice: Random = attrs.field(init=False)
    insert_choice: Random = attrs.field(init=False)
    burst_snr: Random = attrs.field(init=False)
    frames: GilbertElliott = attrs.field(init=False)
    burst: Playing | None = None
    insert: Playing | None = None

    def __attrs_post_init__(self) -> None:
        # One stream per effect (as tau2), so enabling one effect never shifts another's draws.
        seed = self.conditions.voice_seed
        self.triggers, self.burst_choice, self.insert_choice = Random(seed), Random(seed + 1), Random(seed + 2)
        self.frames = GilbertElliott(self.conditions.frame_drops, Random(seed + 3))
        self.burst_snr = Random(seed + 4)  # tau2 seeds this with a constant in every simulation; ours is per conversation

    def tick(self, speech: Floats | None, speaking: bool, tick_ms: int) -> tuple[bytes, list[Effect]]:
        """One tick of the user's 16 kHz speech (None: silent) as it leaves the line: mu-law 8 kHz, and what was applied."""
        n = pcm_samples(tick_ms)
        effects = self._schedule(speaking, tick_ms)
        mixed = np.zeros(n) if speech is None else np.pad(speech[:n], (0, max(0, n - len(speech))))
        mixed = mixed + self.noise.next(n) if self.conditions.noise.enabled else mixed
        mixed = mixed + self._play_burst(n) + self._play_insert(n, speaking)
        mixed = np.clip(mixed, -32768, 32767)
        audio = self.telephony(mixed) if self.conditions.telephony else mulaw_encode(np.round(mixed[::2]))
        if self.conditions.frame_drops.enabled and self.frames.drops(tick_ms):
            drop_ms = min(self.conditions.frame_drops.drop_ms, tick_ms)
            audio = drop_frame(audio, drop_ms)
            effects.append({"type": "frame_drop", "ms": drop_ms})
        return audio, effects

    def _schedule(self, speaking: bool, tick_ms: int) -> list[Effect]:
        """Start a burst and/or an out-of-turn insert this tick (Poisson triggers)."""
        effects: list[Effect] = []
        b, ins = self.conditions.bursts, self.conditions.inserts
        if b.enabled and self.burst is None and poisson_fires(self.triggers, b.per_minute, tick_ms) and self.bursts:
            effects += self._start_burst()
        out_of_turn = ins.vocal_tics or ins.non_directed
        if out_of_turn and not speaking and self.insert is None and poisson_fires(self.triggers, ins.per_minute, tick_ms):
            effects += self._start_insert()
        return effects

    def _start_burst(self) -> list[Effect]:
        name, clip = self.burst_choice.choice(self.bursts)
        low, high = self.conditions.bursts.snr_range_db
        snr = self.burst_snr.uniform(low, high)
        level = rms(clip)
        if level < 100:  # a near-silent file would be amplified into hiss
            return []
        self.burst = Playing(clip * (REFERENCE_RMS / level) * 10 ** (-snr / 20))
        return [{"type": "burst", "file": name, "snr_db": round(snr, 2)}]

    def _start_insert(self) -> list[Effect]:
        if not self.inserts:  # not synthesised yet (the channel prepares them on its first utterance)
            return []
        chosen = self.insert_choice.choice(self.inserts)
        self.insert = Playing(chosen.samples)
        return [
            {
                "type": "speech_insert",
                "kind": chosen.kind,
                "in_turn": False,
                "text": chosen.text,
                "duration_ms": 1000 * len(chosen.samples) // PCM_RATE,
            }
        ]

    def _play_burst(self, n: int) -> Floats:
        if self.burst is None:
            return np.zeros(n)
        out = self.burst.next(n)
        self.burst = None if self.burst.done else self.burst
        return out

    def _play_insert(self, n: int, speaking: bool) -> Floats:
        if self.insert is None or speaking:  # the user speaking cuts an out-of-turn clip off
            self.insert = None
            return np.zeros(n)
        out = self.insert.next(n)
        self.insert = None if self.insert.done else self.insert
        return out


def user_line(conditions: SpeechConditions) -> UserLine:
    """The user's line for a conversation, its noise files loaded (a missing file is a silent track)."""
    background = conditions.path(conditions.background_file, "continuous") if conditions.background_file else None
    noise = NoiseTrack(load_noise(background, 0.6) if background else None, conditions.noise)
    bursts = []
    for name in conditions.burst_files:
        path = conditions.path(name, "bursts")
        clip = load_noise(path, 0.75) if path else None
        if clip is not None:
            bursts.append((name, clip))
    return UserLine(conditions, noise, bursts)
