"""Telephone audio in pure Python: the line's ticks of G.711 mu-law, 16-bit PCM bytes and a streaming linear resampler
(no numpy, no audioop)."""

from __future__ import annotations

import sys
from array import array
from collections.abc import Sequence

SAMPLE_RATE = 8000
"""Audio between the two sides is G.711 mu-law, 8 kHz, mono: one byte per sample (telephony, as tau2's voice track)."""
SILENCE_BYTE = 0xFF
"""mu-law's zero amplitude."""


def tick_bytes(tick_ms: int) -> int:
    """Bytes of mu-law audio in one tick."""
    return SAMPLE_RATE * tick_ms // 1000


def silence(tick_ms: int) -> bytes:
    """One tick of mu-law silence."""
    return bytes([SILENCE_BYTE]) * tick_bytes(tick_ms)


def fit(audio: bytes, tick_ms: int) -> bytes:
    """Exactly one tick of audio: cut, or padded with silence."""
    size = tick_bytes(tick_ms)
    if len(audio) >= size:
        return audio[:size]
    return audio + bytes([SILENCE_BYTE]) * (size - len(audio))


def _decode(byte: int) -> int:
    value = ~byte & 0xFF
    sign, exponent, mantissa = value & 0x80, (value >> 4) & 0x07, value & 0x0F
    magnitude = ((mantissa << 3) + 0x84) << exponent
    return -(magnitude - 0x84) if sign else magnitude - 0x84


def ulaw_byte(sample: int) -> int:
    """One 16-bit sample as G.711 mu-law."""
    sign = 0x80 if sample < 0 else 0
    magnitude = min(abs(sample), 32635) + 0x84
    exponent = max(0, min(7, magnitude.bit_length() - 8))
    mantissa = (magnitude >> (exponent + 3)) & 0x0F
    return ~(sign | (exponent << 4) | mantissa) & 0xFF


ULAW_TO_PCM: tuple[int, ...] = tuple(_decode(b) for b in range(256))
"""G.711 mu-law byte -> 16-bit sample."""
_PCM_TO_ULAW: bytes = b""


def ulaw_to_pcm(data: bytes) -> list[int]:
    """mu-law bytes as 16-bit samples."""
    return [ULAW_TO_PCM[b] for b in data]


def pcm_to_ulaw(samples: Sequence[int]) -> bytes:
    """16-bit samples as mu-law bytes (clipped)."""
    global _PCM_TO_ULAW
    if not _PCM_TO_ULAW:
        _PCM_TO_ULAW = bytes(ulaw_byte(s - 65536 if s > 32767 else s) for s in range(65536))
    table = _PCM_TO_ULAW
    return bytes(table[max(-32768, min(32767, s)) & 0xFFFF] for s in samples)


def pcm_bytes(samples: Sequence[int]) -> bytes:
    """16-bit samples as little-endian PCM bytes."""
    out = array("h", (max(-32768, min(32767, s)) for s in samples))
    if sys.byteorder != "little":
        out.byteswap()
    return out.tobytes()


def pcm_samples(data: bytes) -> list[int]:
    """Little-endian PCM16 bytes as samples (an odd trailing byte is dropped)."""
    out = array("h")
    out.frombytes(data[: len(data) - len(data) % 2])
    if sys.byteorder != "little":
        out.byteswap()
    return out.tolist()


class Resampler:
    """Sample-rate conversion of a 16-bit stream chunk by chunk, its state kept so chunk joins stay smooth.

    An integer down-ratio averages each group of samples (a box filter); any other ratio interpolates linearly.
    """

    def __init__(self, source: int, target: int) -> None:
        self.source, self.target = source, target
        self.reset()

    def reset(self) -> None:
        """Forget the stream (after an interruption the next audio is a new stream)."""
        self._pending: list[int] = []
        self._last: int | None = None
        self._position = 0.0

    def convert(self, samples: Sequence[int]) -> list[int]:
        """The next chunk at the target rate."""
        if self.source == self.target:
            return list(samples)
        if self.source % self.target == 0:
            ratio = self.source // self.target
            pending = self._pending + list(samples)
            full = len(pending) - len(pending) % ratio
            self._pending = pending[full:]
            return [sum(pending[i : i + ratio]) // ratio for i in range(0, full, ratio)]
        return self._interpolate(samples)

    def _interpolate(self, samples: Sequence[int]) -> list[int]:
        if not samples:
            return []
        # The stream's first sample stands in for the one before it, so every chunk gives exactly its share.
        points = [self._last if self._last is not None else samples[0], *samples]
        step = self.source / self.target
        out, position, end = [], self._position, len(points) - 1
        while position < end:
            index = int(position)
            fraction = position - index
            out.append(round(points[index] + (points[index + 1] - points[index]) * fraction))
            position += step
        self._position = position - end
        self._last = points[-1]
        return out
