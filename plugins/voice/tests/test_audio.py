"""WAV round trips, noise at a measured signal-to-noise ratio, and word error rate."""

from __future__ import annotations

import array
import math

import pytest
from bench_voice.audio import Pcm, read_wav, with_noise, word_error_rate, write_wav


def tone() -> Pcm:
    return Pcm(array.array("h", (int(8000 * math.sin(2 * math.pi * 440 * i / 16000)) for i in range(16000))), 16000)


def test_a_wav_round_trip_keeps_the_samples() -> None:
    pcm = tone()
    back = read_wav(write_wav(pcm))
    assert back.samples == pcm.samples and back.rate == 16000 and back.seconds == 1.0


@pytest.mark.parametrize("snr_db", [20.0, 5.0, -2.0])
def test_noise_is_added_at_the_asked_ratio_and_is_reproducible(snr_db: float) -> None:
    pcm = tone()
    noisy = with_noise(pcm, snr_db, seed=7)
    signal = sum(s * s for s in pcm.samples)
    noise = sum((a - b) ** 2 for a, b in zip(noisy.samples, pcm.samples, strict=True))
    assert 10 * math.log10(signal / noise) == pytest.approx(snr_db, abs=0.3)
    assert with_noise(pcm, snr_db, seed=7).samples == noisy.samples
    assert with_noise(pcm, snr_db, seed=8).samples != noisy.samples


def test_word_error_rate_on_canonical_words() -> None:
    assert word_error_rate("My code is K7 X9 P2.", "my code is k 7 x 9 p 2") == 0.0
    assert word_error_rate("call five five five", "call 555") == 0.0
    assert word_error_rate("cancel booking ZQ51", "cancel looking ZQ51") == pytest.approx(1 / 5)  # cancel booking zq 5 1
    assert word_error_rate("", "") == 0.0 and word_error_rate("", "noise") == 1.0
    assert word_error_rate("yes", "") == 1.0
