"""The cascade's voice-activity detector: turns hold through quiet stretches of speech, end on silence, and ignore
noise, clicks and dropped frames; piper speech through bench-voice's telephone line stays one turn."""

from __future__ import annotations

import array
import asyncio
import math
import random
from typing import Any

import pytest
from bench_realtime.cascade.audio import pcm_to_ulaw
from bench_realtime.cascade.vad import EnergyVad, VadSettings, hold_dbfs, threshold_dbfs

RATE = 8000
SILENCE = b"\xff"


def amplitude(dbfs: float) -> float:
    """The sine amplitude whose RMS is `dbfs`."""
    return 32768 * 10 ** (dbfs / 20) * math.sqrt(2)


def tone(ms: int, dbfs: float, hz: float = 220.0) -> list[float]:
    """A vowel-like tone (a fundamental and two harmonics) at an RMS level."""
    n = RATE * ms // 1000
    a = amplitude(dbfs) / math.sqrt(1 + 0.25 + 0.0625)
    return [
        a * (math.sin(2 * math.pi * hz * i / RATE) + 0.5 * math.sin(4 * math.pi * hz * i / RATE) + 0.25 * math.sin(6 * math.pi * hz * i / RATE))
        for i in range(n)
    ]


def noise(ms: int, dbfs: float, seed: int = 1) -> list[float]:
    """White noise at an RMS level."""
    rng = random.Random(seed)
    sigma = 32768 * 10 ** (dbfs / 20)
    return [rng.gauss(0.0, sigma) for _ in range(RATE * ms // 1000)]


def quiet(ms: int) -> list[float]:
    """Digital silence."""
    return [0.0] * (RATE * ms // 1000)


def mix(*parts: list[float]) -> list[float]:
    """Signals added sample by sample (the longest sets the length)."""
    out = [0.0] * max(len(p) for p in parts)
    for part in parts:
        for i, sample in enumerate(part):
            out[i] += sample
    return out


def ulaw(samples: list[float]) -> bytes:
    """Samples as mu-law."""
    return pcm_to_ulaw(array.array("h", (max(-32768, min(32767, round(s))) for s in samples)))


def detect(audio: bytes, settings: VadSettings | None = None, tick_ms: int = 200) -> list[tuple[str, int]]:
    """Each event's kind and the input position (ms) where it was found, fed in ticks as the session is."""
    vad = EnergyVad(settings=settings or VadSettings())
    step = RATE * tick_ms // 1000
    found: list[tuple[str, int]] = []
    for i in range(0, len(audio), step):
        found += [(event.kind, vad.position_ms) for event in vad.feed(audio[i : i + step])]
    return found


def kinds(found: list[tuple[str, int]]) -> list[str]:
    """The events' kinds."""
    return [kind for kind, _ in found]


def speech_with_dips(bursts: int = 5) -> list[float]:
    """Voiced bursts at -20 dBFS with 300 ms unvoiced dips at -40 dBFS between them."""
    out: list[float] = []
    for i in range(bursts):
        out += tone(400, -20.0) + (tone(300, -40.0, hz=1800.0) if i < bursts - 1 else [])
    return out


def test_dips_to_minus_40_dbfs_stay_one_turn_and_700_ms_of_silence_ends_it() -> None:
    found = detect(ulaw(quiet(500) + speech_with_dips() + quiet(700)))
    assert kinds(found) == ["started", "stopped"]
    speech_end_ms = 500 + 5 * 400 + 4 * 300
    assert speech_end_ms + 500 <= found[1][1] <= speech_end_ms + 700


def test_an_unvoiced_stretch_longer_than_the_silence_window_stays_one_turn() -> None:
    # piper's sentence ends and fricatives sit at -30..-45 dBFS for hundreds of ms: hysteresis keeps the turn
    found = detect(ulaw(quiet(300) + tone(500, -20.0) + tone(700, -40.0, hz=1800.0) + tone(500, -20.0) + quiet(800)))
    assert kinds(found) == ["started", "stopped"]


def test_steady_noise_at_minus_36_dbfs_does_not_start_speech() -> None:
    assert detect(ulaw(noise(6000, -36.0))) == []


def test_speech_15_db_above_noise_starts_and_ends_a_turn() -> None:
    speech = quiet(2000) + speech_with_dips(3) + quiet(2000)
    found = detect(ulaw(mix(noise(len(speech) * 1000 // RATE, -36.0), [s * 10 ** (-1 / 20) for s in speech])))
    assert kinds(found) == ["started", "stopped"]
    assert 2000 <= found[0][1] <= 2200 and found[1][1] <= 2000 + 3 * 400 + 2 * 300 + 800


def test_a_short_click_does_not_start_speech() -> None:
    click = tone(40, -10.0, hz=2000.0)
    assert detect(ulaw(quiet(500) + click + quiet(1000))) == []
    assert detect(ulaw(mix(noise(2500, -36.0), quiet(1000) + click))) == []


def test_dropped_frames_in_noise_neither_start_speech_nor_keep_a_turn_going() -> None:
    line = noise(6000, -36.0)
    for start in range(800, 6000, 1000):  # 150 ms drops, as bench-voice's line makes them
        line[start * 8 : (start + 150) * 8] = [0.0] * 1200
    assert detect(ulaw(line)) == []
    speech = quiet(2000) + speech_with_dips(2) + quiet(3000)
    found = detect(ulaw(mix(line, speech)))
    assert kinds(found) == ["started", "stopped"]


def test_a_higher_threshold_needs_louder_speech() -> None:
    levels = [0.0, 0.2, 0.5, 0.8, 1.0]
    assert [threshold_dbfs(t) for t in levels] == sorted(threshold_dbfs(t) for t in levels)
    assert all(hold_dbfs(t) < threshold_dbfs(t) for t in levels) and threshold_dbfs(0.5) == -30.0
    soft = ulaw(quiet(300) + tone(600, -40.0) + quiet(800))
    assert kinds(detect(soft, VadSettings(threshold=0.2))) == ["started", "stopped"]
    assert detect(soft, VadSettings(threshold=0.5)) == []


def test_silence_duration_is_the_hangover() -> None:
    audio = ulaw(quiet(200) + tone(600, -20.0) + quiet(400) + tone(600, -20.0) + quiet(1200))
    assert kinds(detect(audio, VadSettings(silence_duration_ms=500))) == ["started", "stopped"]
    assert kinds(detect(audio, VadSettings(silence_duration_ms=300))) == ["started", "stopped", "started", "stopped"]


SENTENCES = (
    "Your internet has been down for two days and the router light is amber. Your email is bruno.lindqvist@example.net. "
    "You paid your overdue bill yesterday. Ask for your internet to be turned back on, and do what the agent asks on your router."
)
"""A mock task's opening: the fixed -30 dBFS detector ended this turn mid-sentence at both levels and both seeds."""


def line_audio(level: str, seed: int) -> bytes:
    """SENTENCES spoken by piper and carried by bench-voice's user line at a speech complexity, then 1.2 s of line."""
    from bench_duplex import Chunk
    from bench_voice import PiperModel, VoiceChannel, WhisperModel

    from bench_kernel import (
        ConversationModels,
        ConversationSetup,
        Mode,
        ModelConfig,
        ModelHub,
        Task,
        UserScenario,
    )

    hub = ModelHub(
        configs={"tts": ModelConfig(backend="piper", model="joe"), "asr": ModelConfig(backend="faster-whisper", model="tiny.en")},
        backends={"piper": PiperModel(), "faster-whisper": WhisperModel()},
        speech_cache=False,
    )
    task = Task(id="t1", user_scenario=UserScenario(instructions="Ask for help."))
    setup = ConversationSetup(
        task=task,
        domain="mock",
        mode=Mode.DEFAULT,
        seed=seed,
        policy="",
        agent_tools=[],
        user_tools=None,
        models=ConversationModels(hub),
        channel="voice",
        channel_options={},
        duplex={"tick_ms": 200, "speech_complexity": level},
        data_dir=None,
    )
    voice: Any = VoiceChannel().start(setup)
    utterance = asyncio.run(voice.render(SENTENCES, "user", tick_ms=200, index=0))
    chunks = [Chunk(), Chunk(), *utterance.chunks, *[Chunk() for _ in range(6)]]
    return b"".join(voice.on_line(c, "user", tick, tick_ms=200).audio for tick, c in enumerate(chunks))


@pytest.mark.parametrize("level", ["control", "regular"])
def test_piper_speech_through_the_telephone_line_is_one_turn(level: str) -> None:
    from bench_voice.engines import INSTALL, missing_engines

    if missing_engines():
        pytest.skip(f"the voice engines are not installed: {INSTALL}")
    for seed in (7, 18):
        assert kinds(detect(line_audio(level, seed))) == ["started", "stopped"], (level, seed)
