"""Audio for the cascade: WAV in and out, frame energy and durations, over the kernel's mu-law codec and resampler.

The line between bench's two sides is 8 kHz mu-law (`bench_kernel.SAMPLE_RATE`); the recogniser takes WAV and the
synthesiser gives WAV at its own rate (piper: 22.05 kHz). Utterances are a few seconds long, so the kernel's pure-Python
table look-ups and resampler cost a few milliseconds per utterance and need neither numpy nor audioop.
"""

from __future__ import annotations

import array
import io
import math
import wave

from bench_duplex import SAMPLE_RATE, Resampler, pcm_to_ulaw, ulaw_to_pcm

FULL_SCALE = 32768.0
__all__ = [
    "bytes_to_ms",
    "level_dbfs",
    "ms_to_bytes",
    "pcm_to_ulaw",
    "read_wav",
    "resample",
    "ulaw_to_pcm",
    "ulaw_to_wav",
    "wav_bytes",
    "wav_to_ulaw",
]


def wav_bytes(samples: array.array | list[int], rate: int) -> bytes:
    """A 16-bit mono WAV file."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(array.array("h", samples).tobytes())
    return out.getvalue()


def read_wav(data: bytes) -> tuple[array.array, int]:
    """A 16-bit WAV file's samples (its first channel) and rate."""
    with wave.open(io.BytesIO(data), "rb") as wav:
        if wav.getsampwidth() != 2:
            raise ValueError(f"expected 16-bit audio, got {8 * wav.getsampwidth()}-bit")
        frames = array.array("h", wav.readframes(wav.getnframes()))
        channels = wav.getnchannels()
        return (frames[::channels] if channels > 1 else frames), wav.getframerate()


def resample(samples: array.array | list[int], rate: int, target: int) -> list[int]:
    """A whole utterance at another rate (the kernel's resampler, as the realtime adapters use it)."""
    return list(samples) if rate == target else Resampler(rate, target).convert(samples)


def wav_to_ulaw(data: bytes) -> bytes:
    """A synthesiser's WAV as 8 kHz mu-law."""
    samples, rate = read_wav(data)
    return pcm_to_ulaw(resample(samples, rate, SAMPLE_RATE))


def ulaw_to_wav(data: bytes) -> bytes:
    """8 kHz mu-law as a WAV file the recogniser reads."""
    return wav_bytes(ulaw_to_pcm(data), SAMPLE_RATE)


def level_dbfs(data: bytes) -> float:
    """The RMS level of mu-law audio in dB relative to full scale (-inf for digital silence)."""
    if not data:
        return -math.inf
    samples = ulaw_to_pcm(data)
    power = sum(s * s for s in samples) / len(samples)
    return 10 * math.log10(power / (FULL_SCALE * FULL_SCALE)) if power > 0 else -math.inf


def ms_to_bytes(ms: int) -> int:
    """Bytes of 8 kHz mu-law in a duration."""
    return SAMPLE_RATE * ms // 1000


def bytes_to_ms(n: int) -> int:
    """The duration of n bytes of 8 kHz mu-law."""
    return n * 1000 // SAMPLE_RATE
