"""Audio helpers: WAV in and out, white noise at a signal-to-noise ratio, and word error rate.

Noise is drawn from `random.Random(seed)` (the seed derives from the conversation and the turn), so
the same conversation hears the same noise every time. Without numpy each sample costs a Python
`gauss` call (about 0.65 s of CPU for the 54 s opening of a telecom call); with numpy (which the
engines bring) the same samples come out about ten times faster (`_noisy_with_numpy`).
"""

from __future__ import annotations

import array
import functools
import hashlib
import io
import math
import wave
from random import Random
from types import ModuleType

import attrs


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
    np = _numpy()
    if np is None:
        energy = sum(s * s for s in pcm.samples)
    else:
        wide = np.frombuffer(pcm.samples, dtype=np.int16).astype(np.int64)
        energy = int(wide @ wide)  # an exact integer, as the sum above (no overflow below 2^33 samples)
    power = energy / max(1, len(pcm.samples))
    if power == 0:
        return pcm
    sigma = math.sqrt(power / (10 ** (snr_db / 10)))
    noisy = _noisy_in_python(pcm.samples, sigma, seed) if np is None else _noisy_with_numpy(pcm.samples, sigma, seed)
    return Pcm(noisy, pcm.rate)


@functools.cache
def _numpy() -> ModuleType | None:
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def _noisy_in_python(samples: array.array, sigma: float, seed: int) -> array.array:
    """The definition: each sample plus `Random(seed).gauss(0.0, sigma)`, truncated and clipped to 16 bits."""
    rng = Random(seed)
    return array.array("h", (max(-32768, min(32767, int(s + rng.gauss(0.0, sigma)))) for s in samples))


NEAR_INTEGER = 1e-6
"""numpy's cos, sin and log may differ from the C library's in the last bits (a relative 1e-15 at most, so at most
1e-10 on a noisy sample); a sample that close to an integer could truncate the other way, so it is computed again
exactly as `_noisy_in_python` does."""


def _noisy_with_numpy(samples: array.array, sigma: float, seed: int) -> array.array:
    """The same samples as `_noisy_in_python`, drawn with numpy.

    `Random.gauss` draws two uniforms from the Mersenne Twister per pair of samples (Box-Muller: the first sample of a
    pair gets the cosine, the second the sine); numpy's legacy MT19937, given `Random(seed)`'s state, draws the very same
    uniforms. Only cos, sin and log are numpy's own, hence the exact second pass near integers.
    """
    import numpy as np

    n = len(samples)
    state = Random(seed).getstate()[1]
    twister = np.random.RandomState()
    twister.set_state(("MT19937", np.array(state[:-1], dtype=np.uint32), state[-1], 0, 0.0))
    uniforms = twister.random_sample(2 * ((n + 1) // 2))
    angle, radius = uniforms[0::2] * math.tau, np.sqrt(-2.0 * np.log(1.0 - uniforms[1::2]))
    gauss = np.empty(len(uniforms))
    gauss[0::2], gauss[1::2] = np.cos(angle) * radius, np.sin(angle) * radius
    noisy = np.frombuffer(samples, dtype=np.int16).astype(np.float64) + (0.0 + gauss[:n] * sigma)
    out = np.clip(np.trunc(noisy), -32768, 32767).astype(np.int16)
    for i in np.flatnonzero(np.abs(noisy - np.round(noisy)) < NEAR_INTEGER).tolist():
        pair = 2 * (i // 2)
        x2pi, g2rad = float(uniforms[pair]) * math.tau, math.sqrt(-2.0 * math.log(1.0 - float(uniforms[pair + 1])))
        z = (math.cos(x2pi) if i % 2 == 0 else math.sin(x2pi)) * g2rad
        out[i] = max(-32768, min(32767, int(samples[i] + (0.0 + z * sigma))))
    return array.array("h", out.tobytes())


def digest(data: bytes) -> str:
    """The sha256 of an audio file."""
    return hashlib.sha256(data).hexdigest()
