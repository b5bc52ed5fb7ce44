"""WAV round trips, noise at a measured signal-to-noise ratio, and word error rate."""

from __future__ import annotations

import array
import math

import pytest
from bench_duplex import word_error_rate
from bench_voice.audio import Pcm, read_wav, with_noise, write_wav


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


@pytest.mark.parametrize("snr_db", [20.0, -2.0, -30.0])  # -30 dB clips most samples
@pytest.mark.parametrize("length", [1, 2, 1001, 16000])
def test_numpy_draws_the_very_same_noise_as_random_gauss(snr_db: float, length: int) -> None:
    """The noise stays exactly what `Random(seed).gauss` gives (what every run before numpy heard), sample for sample."""
    pytest.importorskip("numpy", reason="numpy is not installed (the engines bring it): only the pure Python noise runs")
    from bench_voice.audio import _noisy_in_python, _noisy_with_numpy

    samples = tone().samples[:length]
    for seed in (7, 123_456_789, 2**40 + 3):
        sigma = math.sqrt(max(1.0, sum(s * s for s in samples) / length) / 10 ** (snr_db / 10))
        assert _noisy_with_numpy(samples, sigma, seed) == _noisy_in_python(samples, sigma, seed)


def test_noise_near_an_integer_is_computed_again_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """With the margin widened to every sample, the second pass alone computes them all: still the same samples."""
    pytest.importorskip("numpy", reason="numpy is not installed (the engines bring it): only the pure Python noise runs")
    from bench_voice import audio

    monkeypatch.setattr(audio, "NEAR_INTEGER", 1.0)
    samples = tone().samples[:999]
    assert audio._noisy_with_numpy(samples, 300.0, 11) == audio._noisy_in_python(samples, 300.0, 11)


def test_without_numpy_the_noise_is_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_voice import audio

    pcm = tone()
    with_numpy = with_noise(pcm, -2.0, seed=5)
    monkeypatch.setattr(audio, "_numpy", lambda: None)
    assert with_noise(pcm, -2.0, seed=5).samples == with_numpy.samples
