"""Audio helpers without numpy: WAV in and out, white noise at a signal-to-noise ratio, and word error rate.

Noise is drawn from `random.Random(seed)` (the seed derives from the conversation and the turn), so
the same conversation hears the same noise every time.
"""

from __future__ import annotations

import array
import hashlib
import io
import math
import re
import wave
from random import Random

import attrs

NUMBERS = {"zero": "0", "oh": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
           "eight": "8", "nine": "9"}


@attrs.frozen
class Pcm:
    """16-bit mono samples and their rate."""

    samples: array.array
    rate: int

    @property
    def seconds(self) -> float:
        """The duration."""
        return len(self.samples) / self.rate if self.rate else 0.0


def read_wav(data: bytes) -> Pcm:
    """A WAV file's 16-bit mono samples (the first channel of a multi-channel file)."""
    with wave.open(io.BytesIO(data), "rb") as wav:
        if wav.getsampwidth() != 2:
            raise ValueError(f"expected 16-bit audio, got {8 * wav.getsampwidth()}-bit")
        frames = array.array("h", wav.readframes(wav.getnframes()))
        channels = wav.getnchannels()
        return Pcm(frames[::channels] if channels > 1 else frames, wav.getframerate())


def write_wav(pcm: Pcm) -> bytes:
    """A 16-bit mono WAV file."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(pcm.rate)
        wav.writeframes(pcm.samples.tobytes())
    return out.getvalue()


def with_noise(pcm: Pcm, snr_db: float, seed: int) -> Pcm:
    """The recording with white noise added so that signal power / noise power = 10^(snr_db/10)."""
    power = sum(s * s for s in pcm.samples) / max(1, len(pcm.samples))
    if power == 0:
        return pcm
    sigma = math.sqrt(power / (10 ** (snr_db / 10)))
    rng = Random(seed)
    noisy = array.array("h", (max(-32768, min(32767, int(s + rng.gauss(0.0, sigma)))) for s in pcm.samples))
    return Pcm(noisy, pcm.rate)


def digest(data: bytes) -> str:
    """The sha256 of an audio file."""
    return hashlib.sha256(data).hexdigest()


def words(text: str) -> list[str]:
    """Text as comparable tokens: lower case, punctuation dropped, digit runs and number words as single digits."""
    tokens = []
    for token in re.findall(r"[a-z]+|\d", text.lower().replace("'", "")):
        tokens.append(NUMBERS.get(token, token))
    return tokens


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Edit distance between the canonical token lists, over the reference length (0 for an empty reference)."""
    ref, hyp = words(reference), words(hypothesis)
    if not ref:
        return 0.0 if not hyp else 1.0
    previous = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, start=1):
        current = [i]
        for j, h in enumerate(hyp, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (r != h)))
        previous = current
    return previous[-1] / len(ref)
