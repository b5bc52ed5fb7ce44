"""Each effect on synthetic signals: noise level against SNR, the phone band, frame drops, bursts, muffling, tics, inserts."""

from __future__ import annotations

from random import Random

import attrs
import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed: pip install 'bench-voice[engines]'")
pytest.importorskip("scipy", reason="scipy is not installed: pip install 'bench-voice[engines]'")

from bench_duplex import SAMPLE_RATE, pcm_to_ulaw, tick_bytes  # noqa: E402
from bench_voice.complexity import (  # noqa: E402 - after the skips above
    BurstSettings,
    FrameDropSettings,
    InsertSettings,
    MufflingSettings,
    NoiseSettings,
    SpeechConditions,
    conditions_for,
)
from bench_voice.effects import (  # noqa: E402
    PCM_RATE,
    REFERENCE_RMS,
    SILENCE_BYTE,
    GilbertElliott,
    Insert,
    NoiseTrack,
    Telephony,
    UserLine,
    drop_frame,
    insert_tic,
    muffle_segment,
    mulaw_decode,
    mulaw_encode,
    pcm_samples,
    poisson_fires,
    rms,
    snr_envelope,
    utterance_effects,
)


def sine(hz: float, seconds: float, amplitude: float = 8000.0, rate: int = PCM_RATE) -> np.ndarray:
    return amplitude * np.sin(2 * np.pi * hz * np.arange(int(seconds * rate)) / rate)


def quiet(**changes: object) -> SpeechConditions:
    """Conditions with every effect off (control), changed as asked."""
    return attrs.evolve(conditions_for("control", "t", 1, None), **changes)


def test_mulaw_is_the_kernels_encoding_and_decodes_close() -> None:
    values = np.arange(-32768, 32768, 7)
    assert mulaw_encode(values) == pcm_to_ulaw([int(v) for v in values])
    decoded = mulaw_decode(mulaw_encode(values))
    assert np.all(np.abs(decoded - values) <= np.maximum(40, np.abs(values) * 0.07))
    assert mulaw_decode(bytes([SILENCE_BYTE]))[0] == 0


@pytest.mark.parametrize("snr", [5.0, 15.0, 25.0])
def test_background_noise_rms_follows_the_snr(snr: float) -> None:
    white = np.random.default_rng(0).standard_normal(PCM_RATE * 3) * 1000
    track = NoiseTrack(white, NoiseSettings(enabled=True, snr_db=snr, drift_db=0.0))
    for _ in range(10):
        assert rms(track.next(pcm_samples(200))) == pytest.approx(REFERENCE_RMS * 10 ** (-snr / 20), rel=1e-9)


def test_the_snr_drifts_within_its_range_and_silence_stays_silent() -> None:
    settings = NoiseSettings(enabled=True, snr_db=15.0, drift_db=3.0, variation_speed=0.5)
    envelope = [snr_envelope(settings, i * 3200, 3200) for i in range(300)]
    assert 12.0 <= min(envelope) < 13.5 and 16.5 < max(envelope) <= 18.0
    assert not np.any(NoiseTrack(None, settings).next(3200))


def tone_through_line(hz: float, ticks: int = 10) -> float:
    phone = Telephony()
    signal = sine(hz, ticks * 0.2)
    out = [mulaw_decode(phone(signal[i * 3200 : (i + 1) * 3200])) for i in range(ticks)]
    return rms(np.concatenate(out[2:]))  # past the filters' start-up


def test_the_phone_band_passes_speech_and_cuts_100_hz_and_6_khz() -> None:
    passed = tone_through_line(1000.0)
    assert passed == pytest.approx(0.9 * 8000 / np.sqrt(2), rel=0.05)  # 0.9 headroom
    assert tone_through_line(100.0) < 0.05 * passed
    assert tone_through_line(6000.0) < 0.01 * passed


def test_filter_state_carries_over_ticks() -> None:
    signal = sine(440.0, 1.0)
    ticked, whole = Telephony(), Telephony()
    pieces = b"".join(ticked(signal[i : i + 3200]) for i in range(0, len(signal), 3200))
    assert np.max(np.abs(mulaw_decode(pieces) - mulaw_decode(whole(signal)))) <= 64  # one mu-law step at most
    assert len(pieces) == SAMPLE_RATE


def test_a_frame_drop_silences_the_first_150_ms() -> None:
    audio = mulaw_encode(sine(1000.0, 0.2, rate=SAMPLE_RATE))
    dropped = drop_frame(audio, 150)
    assert dropped[:1200] == bytes([SILENCE_BYTE]) * 1200 and dropped[1200:] == audio[1200:] and len(dropped) == 1600


@pytest.mark.parametrize("loss", [0.005, 0.02])
def test_gilbert_elliott_loses_frames_at_its_rate_in_bursts(loss: float) -> None:
    model = GilbertElliott(FrameDropSettings(enabled=True, rate=loss, burst_ms=100.0), Random(3))
    drops = [model.drops(200) for _ in range(100_000)]
    assert sum(drops) / len(drops) == pytest.approx(loss, rel=0.15)


def test_bursts_arrive_as_a_poisson_process_with_snr_in_range() -> None:
    conditions = quiet(bursts=BurstSettings(enabled=True, per_minute=6.0, snr_range_db=(-5.0, 10.0)), voice_seed=9)
    line = UserLine(conditions, NoiseTrack(None, conditions.noise), [("beep.wav", sine(800.0, 0.1))])
    started = []
    for _ in range(30_000):  # 100 simulated minutes
        started += line._schedule(speaking=False, tick_ms=200)
        line.burst = None  # a 0.1 s burst is over within its tick
    assert len(started) == pytest.approx(600, rel=0.12)
    assert all(e["type"] == "burst" and -5.0 <= e["snr_db"] <= 10.0 and e["file"] == "beep.wav" for e in started)


def test_a_burst_is_scaled_to_its_snr_and_plays_across_ticks() -> None:
    conditions = quiet(bursts=BurstSettings(enabled=True, per_minute=1e6, snr_range_db=(0.0, 0.0)), telephony=False, voice_seed=2)
    clip = np.random.default_rng(1).standard_normal(PCM_RATE) * 5000
    line = UserLine(conditions, NoiseTrack(None, conditions.noise), [("noise.wav", clip)])
    audio, effects = line.tick(None, False, 200)
    assert effects == [{"type": "burst", "file": "noise.wav", "snr_db": 0.0}]
    assert rms(mulaw_decode(audio)) == pytest.approx(REFERENCE_RMS, rel=0.1)
    ticks = [line.tick(None, False, 200) for _ in range(6)]
    assert all(not e for _, e in ticks[:4]) and rms(mulaw_decode(ticks[3][0])) > 1000  # 1 s: five ticks
    assert ticks[4][1] == effects  # the next starts only once it is over


def test_out_of_turn_speech_only_while_the_user_is_silent() -> None:
    conditions = quiet(inserts=InsertSettings(non_directed=True, per_minute=1e6), telephony=False)
    line = UserLine(conditions, NoiseTrack(None, conditions.noise), [])
    line.inserts = [Insert(kind="non_directed", text="One second.", samples=sine(300.0, 1.0))]
    _, speaking = line.tick(sine(200.0, 0.2), True, 200)
    assert speaking == []
    _, silent = line.tick(None, False, 200)
    assert silent == [{"type": "speech_insert", "kind": "non_directed", "in_turn": False, "text": "One second.", "duration_ms": 1000}]
    line.tick(sine(200.0, 0.2), True, 200)
    assert line.insert is None  # the user speaking cut it off


def test_control_adds_nothing_but_the_phone_line() -> None:
    conditions = conditions_for("control", "t", 1, None)
    line = UserLine(conditions, NoiseTrack(None, conditions.noise), [])
    speech, phone = sine(700.0, 0.2), Telephony()
    audio, effects = line.tick(speech, True, 200)
    assert effects == [] and audio == phone(speech) and len(audio) == tick_bytes(200)
    fresh = UserLine(conditions, NoiseTrack(None, conditions.noise), [])
    assert fresh.tick(None, False, 200) == (bytes([SILENCE_BYTE]) * 1600, [])


def test_muffling_damps_the_highs_of_a_centred_segment_and_keeps_the_peak() -> None:
    clip = np.random.default_rng(4).standard_normal(PCM_RATE * 2) * 3000
    conditions = quiet(muffling=MufflingSettings(enabled=True, probability=1.0))
    out, effect = muffle_segment(clip, conditions)
    assert effect == {"type": "muffling", "start_ms": 750, "duration_ms": 500, "cutoff_hz": 1500.0}
    middle, edge = slice(int(0.8 * PCM_RATE), int(1.2 * PCM_RATE)), slice(0, int(0.5 * PCM_RATE))
    highs = np.abs(np.fft.rfft(out[middle]))[int(0.4 * 4000) :]  # above 4 kHz
    assert np.mean(highs) < 0.05 * np.mean(np.abs(np.fft.rfft(clip[middle]))[int(0.4 * 4000) :])
    assert np.max(np.abs(out)) == pytest.approx(np.max(np.abs(clip)))
    assert np.allclose(out[edge] / np.max(np.abs(out)), clip[edge] / np.max(np.abs(clip)))
    assert muffle_segment(clip[:4000], conditions)[1] is None  # shorter than the segment and its fades


def test_an_in_turn_tic_is_a_sound_inserted_at_a_word() -> None:
    speech = np.concatenate([sine(200.0, 0.5), np.zeros(1600), sine(200.0, 0.5)])
    out, text, effect = insert_tic(speech, ["I", "need", "help"], ".[cough][cough][cough]", 2, seed=1)
    assert text == "I need.[cough][cough][cough] help"
    assert effect["type"] == "speech_insert" and effect["kind"] == "vocal_tic" and effect["in_turn"] is True
    assert abs(len(out) - len(speech) - effect["duration_ms"] * PCM_RATE // 1000) < PCM_RATE // 1000
    assert 480 <= effect["start_ms"] <= 620  # in the pause between the words, near where "help" starts


def test_utterance_effects_are_drawn_per_utterance_and_reproducible() -> None:
    conditions = conditions_for("regular", "t", 1, None)
    conditions = attrs.evolve(conditions, inserts=attrs.evolve(conditions.inserts, per_minute=5.0))  # tics at p 0.5
    speech = sine(220.0, 2.0)
    runs = [[utterance_effects(speech, "please change my flight to Monday", conditions, i) for i in range(20)] for _ in range(2)]
    assert [r.text for r in runs[0]] == [r.text for r in runs[1]]
    kinds = {e["type"] for r in runs[0] for e in r.effects}
    assert kinds == {"muffling", "speech_insert"}
    plain = [r for r in runs[0] if not r.effects]
    assert plain and all(r.text == "please change my flight to Monday" for r in plain)


def test_poisson_fires_at_its_rate() -> None:
    rng = Random(5)
    fired = sum(poisson_fires(rng, 60.0, 200) for _ in range(50_000))
    assert fired / 50_000 == pytest.approx(1 - np.exp(-0.2), rel=0.05)
