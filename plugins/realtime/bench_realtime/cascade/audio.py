"""Audio for the cascade: G.711 mu-law both ways, WAV in and out, resampling and frame energy, in pure Python.

The line between bench's two sides is 8 kHz mu-law (`bench_kernel.SAMPLE_RATE`); the recogniser takes WAV and the
synthesiser gives WAV at its own rate (piper: 22.05 kHz). Utterances are a few seconds long, so table look-ups and a
linear resampler cost a few milliseconds per utterance and need neither numpy nor audioop (gone in Python 3.13).
"""

from __future__ import annotations

import array
import functools
import io
import math
import wave

from bench_kernel import SAMPLE_RATE

FULL_SCALE = 32768.0


@functools.cache
def _decode_table() -> tuple[int, ...]:
    """mu-law byte -> 16-bit sample (G.711)."""
    table = []
    for byte in range(256):
        value = ~byte & 0xFF
        sign, exponent, mantissa = value & 0x80, (value >> 4) & 0x07, value & 0x0F
        magnitude = ((mantissa << 3) + 0x84) << exponent
        table.append(-(magnitude - 0x84) if sign else magnitude - 0x84)
    return tuple(table)


def _encode(sample: int) -> int:
    bias, clip = 0x84, 32635
    sign = 0x80 if sample < 0 else 0
    magnitude = min(abs(sample), clip) + bias
    exponent = max(0, magnitude.bit_length() - 8)  # the highest set bit above bit 7 (magnitude >= 0x84 always)
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return ~(sign | (exponent << 4) | mantissa) & 0xFF


@functools.cache
def _encode_table() -> bytes:
    """16-bit sample + 32768 -> mu-law byte, built once (64 KiB)."""
    return bytes(_encode(s) for s in range(-32768, 32768))


def ulaw_to_pcm(data: bytes) -> array.array:
    """mu-law bytes as 16-bit samples."""
    table = _decode_table()
    return array.array("h", (table[b] for b in data))


def pcm_to_ulaw(samples: array.array) -> bytes:
    """16-bit samples as mu-law bytes."""
    table = _encode_table()
    return bytes(table[s + 32768] for s in samples)


def wav_bytes(samples: array.array, rate: int) -> bytes:
    """A 16-bit mono WAV file."""
    out = io.BytesIO()
    with wave.open(out, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(rate)
        wav.writeframes(samples.tobytes())
    return out.getvalue()


def read_wav(data: bytes) -> tuple[array.array, int]:
    """A 16-bit WAV file's samples (its first channel) and rate."""
    with wave.open(io.BytesIO(data), "rb") as wav:
        if wav.getsampwidth() != 2:
            raise ValueError(f"expected 16-bit audio, got {8 * wav.getsampwidth()}-bit")
        frames = array.array("h", wav.readframes(wav.getnframes()))
        channels = wav.getnchannels()
        return (frames[::channels] if channels > 1 else frames), wav.getframerate()


def resample(samples: array.array, rate: int, target: int) -> array.array:
    """Linear resampling, with a box filter first when going down (so speech above the new Nyquist does not alias)."""
    if rate == target or not samples:
        return array.array("h", samples)
    source = _box_filter(samples, rate / target) if rate > target else samples
    n = max(1, int(len(source) * target / rate))
    step = rate / target
    last = len(source) - 1
    out = array.array("h", bytes(2 * n))
    for i in range(n):
        position = i * step
        left = min(int(position), last)
        right = min(left + 1, last)
        frac = position - left
        out[i] = int(source[left] + (source[right] - source[left]) * frac)
    return out


def _box_filter(samples: array.array, ratio: float) -> array.array:
    width = max(1, round(ratio))
    if width == 1:
        return samples
    total, out = 0, array.array("h", bytes(2 * len(samples)))
    for i, sample in enumerate(samples):
        total += sample - (samples[i - width] if i >= width else 0)
        out[i] = int(total / min(i + 1, width))
    return out


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
    table = _decode_table()
    power = sum(table[b] * table[b] for b in data) / len(data)
    return 10 * math.log10(power / (FULL_SCALE * FULL_SCALE)) if power > 0 else -math.inf


def ms_to_bytes(ms: int) -> int:
    """Bytes of 8 kHz mu-law in a duration."""
    return SAMPLE_RATE * ms // 1000


def bytes_to_ms(n: int) -> int:
    """The duration of n bytes of 8 kHz mu-law."""
    return n * 1000 // SAMPLE_RATE
