"""The voice channel in full duplex: render, on_line, hear and conditions, with fake engines and with the real ones."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

import pytest
from bench_duplex import EFFECT_TYPES, Chunk, tick_bytes, word_error_rate
from bench_voice import VoiceChannel
from bench_voice.channel import VoiceSession
from bench_voice.complexity import conditions_for

from bench_kernel import ConfigError

# The duplex line mixes and filters with numpy and scipy (the engines extra brings both).
pytest.importorskip("numpy", reason="numpy is not installed: pip install 'bench-voice[engines]'")
pytest.importorskip("scipy", reason="scipy is not installed: pip install 'bench-voice[engines]'")

BABBLE_SEEDS = (18, 28)
"""Seeds whose regular conditions have background babble and, in three sentences, frame drops and muffling (measured:
Whisper tiny.en hears control speech perfectly, while these have WER 0.07 and 2.5, a loop of repeats)."""
SENTENCE = "Hello, I would like to change my flight from Boston to Denver next Monday, please."


def session(setup: Any) -> VoiceSession:
    made = VoiceChannel().start(setup)
    assert isinstance(made, VoiceSession)
    return made


def play(voice: VoiceSession, text: str, side: str = "user", tick_ms: int = 200, index: int = 0, silent_after: int = 3) -> list[Chunk]:
    """Render a text and put each of its chunks, then a few silent ticks, on the line."""
    utterance = asyncio.run(voice.render(text, side, tick_ms=tick_ms, index=index))  # type: ignore[arg-type]
    chunks = [*utterance.chunks, *[Chunk() for _ in range(silent_after)]]
    return [voice.on_line(c, side, tick, tick_ms=tick_ms) for tick, c in enumerate(chunks)]  # type: ignore[arg-type]


@pytest.mark.parametrize("tick_ms", [200, 100])
@pytest.mark.parametrize("level", ["control", "regular"])
def test_every_tick_on_the_line_is_one_tick_of_mulaw(fake_models: Any, duplex_setup: Callable[..., Any], level: str, tick_ms: int) -> None:
    voice = session(duplex_setup(fake_models, level=level, tick_ms=tick_ms))
    utterance = asyncio.run(voice.render(SENTENCE, "user", tick_ms=tick_ms, index=0))
    assert all(len(c.audio) == 2 * 16 * tick_ms and c.info["audio_format"] == "pcm_s16le/16000" for c in utterance.chunks)
    assert "".join(c.text for c in utterance.chunks) == utterance.text and len({c.utterance for c in utterance.chunks}) == 1
    for side in ("user", "agent"):
        carried = play(voice, SENTENCE, side, tick_ms)
        spoken = [c for c in carried if c.speech]
        assert spoken and all(len(c.audio) == tick_bytes(tick_ms) and "audio_format" not in c.info for c in spoken)
        assert all(e["type"] in EFFECT_TYPES for c in carried for e in c.effects)
    user_silence = voice.on_line(Chunk(), "user", 99, tick_ms=tick_ms)
    assert len(user_silence.audio) == tick_bytes(tick_ms)  # silent ticks get the line too (noise, or mu-law silence)
    assert voice.on_line(Chunk(), "agent", 99, tick_ms=tick_ms) == Chunk()  # the agent's silence is left to the loop


def test_the_agent_side_is_clean_and_control_applies_no_effect(fake_models: Any, duplex_setup: Callable[..., Any]) -> None:
    regular = session(duplex_setup(fake_models, level="regular"))
    assert not any(c.effects for c in play(regular, SENTENCE, "agent"))
    control = session(duplex_setup(fake_models, level="control"))
    assert not any(c.effects for c in play(control, SENTENCE, "user"))


def test_a_conversation_sounds_the_same_every_time(fake_models: Any, duplex_setup: Callable[..., Any], noise_dir: str) -> None:
    def audio(seed: int) -> list[bytes]:
        voice = session(duplex_setup(fake_models, level="regular", seed=seed, noise_dir=noise_dir))
        return [c.audio for i in range(3) for c in play(voice, SENTENCE, index=i)]

    assert audio(7) == audio(7) and audio(7) != audio(17)  # two seeds with background babble (people_talking.wav)


def test_regular_applies_effects_over_a_long_conversation(fake_models: Any, duplex_setup: Callable[..., Any], noise_dir: str) -> None:
    voice = session(duplex_setup(fake_models, level="regular", seed=3, noise_dir=noise_dir))
    carried = [c for i in range(12) for c in play(voice, SENTENCE, index=i, silent_after=60)]  # about 14 minutes
    kinds = {(e["type"], e.get("kind")) for c in carried for e in c.effects}
    assert {("burst", None), ("frame_drop", None), ("muffling", None)} <= kinds
    assert ("speech_insert", "non_directed") in kinds or ("speech_insert", "vocal_tic") in kinds
    out_of_turn = [c for c in carried for e in c.effects if e["type"] == "speech_insert" and not e["in_turn"]]
    assert all(not c.speech for c in out_of_turn)
    phrases = [r.text for r in fake_models.spoken if r.text != SENTENCE]
    assert len(phrases) == len(set(phrases)) == 10  # the non-directed phrases, synthesised once per conversation


def test_stop_tokens_are_not_spoken(fake_models: Any, duplex_setup: Callable[..., Any]) -> None:
    voice = session(duplex_setup(fake_models, level="control"))
    utterance = asyncio.run(voice.render("Thanks, bye. ###STOP###", "user", tick_ms=200, index=0))
    assert utterance.chunks[-1].text.endswith("###STOP###") and utterance.text == "Thanks, bye. ###STOP###"
    assert all("###" not in r.text for r in fake_models.spoken)
    only = asyncio.run(voice.render("###STOP###", "user", tick_ms=200, index=1))
    assert [(c.text, c.audio, c.speech) for c in only.chunks] == [("###STOP###", b"", True)]


def test_conditions_name_the_persona_voice_and_source(fake_models: Any, duplex_setup: Callable[..., Any]) -> None:
    voice = session(duplex_setup(fake_models, level="regular", seed=2))
    conditions = voice.conditions()
    assert conditions["level"] == "regular" and conditions["voice"] == "fake-voice" and conditions["source"] == "sampled"
    assert json.loads(json.dumps(conditions)) == conditions
    persona = conditions["persona"]
    named = session(duplex_setup(fake_models, level="regular", seed=2, voices=f"{persona}:amy, other:bob"))
    assert named.conditions()["voice"] == "amy"
    asyncio.run(named.render("Hi there.", "user", tick_ms=200, index=0))
    assert fake_models.spoken[-1].voice == "amy"
    with pytest.raises(ConfigError, match="not one of tau2's levels"):
        session(duplex_setup(fake_models, level="noisy")).conditions()


def test_hear_recognises_the_mulaw_audio_and_records_the_turn(fake_models: Any, duplex_setup: Callable[..., Any]) -> None:
    setup = duplex_setup(fake_models, level="control")
    voice = session(setup)
    audio = b"".join(c.audio for c in play(voice, SENTENCE, silent_after=0))
    assert asyncio.run(voice.hear(audio, "user", SENTENCE + " ###STOP###")) == "heard ###STOP###"
    request = fake_models.heard[-1]
    assert request.audio.sample_rate == 8000 and request.audio.data[:4] == b"RIFF"
    turns = setup.events.of_kind("voice.turn")
    assert len(turns) == 1 and turns[0].data["meant"] == SENTENCE and turns[0].data["heard"] == "heard"
    assert asyncio.run(voice.hear(b"\xff" * 1600, "user", "")) == ""  # silence is not sent to the recogniser
    assert len(fake_models.heard) == 1


def test_real_engines_hear_regular_speech_worse_than_control(duplex_setup: Callable[..., Any], noise_dir: str) -> None:
    from bench_voice.engines import INSTALL, missing_engines

    if missing_engines():
        pytest.skip(f"the voice engines are not installed: {INSTALL}")
    from bench_voice import PiperModel, WhisperModel

    from bench_kernel import ConversationModels, ModelConfig, ModelHub

    errors = {"control": 0.0, "regular": 0.0}
    said = " ".join([SENTENCE] * 3)
    for seed in BABBLE_SEEDS:
        assert conditions_for("regular", "t1", seed, None).background_file == "people_talking.wav"
        for level in errors:
            hub = ModelHub(
                configs={"tts": ModelConfig(backend="piper", model="joe"), "asr": ModelConfig(backend="faster-whisper", model="tiny.en")},
                backends={"piper": PiperModel(), "faster-whisper": WhisperModel()},
                speech_cache=False,
            )
            voice = session(duplex_setup(ConversationModels(hub), level=level, seed=seed, noise_dir=noise_dir))
            audio = b"".join(c.audio for i in range(3) for c in play(voice, SENTENCE, index=i, silent_after=0))
            errors[level] += word_error_rate(said, asyncio.run(voice.hear(audio, "user", said)))
    assert errors["regular"] > errors["control"], errors


def test_registering_the_plugin_loads_no_signal_processing() -> None:
    import subprocess
    import sys

    code = (
        "import sys, bench_voice; [h(lambda c: None) for h in (bench_voice.register_channels, bench_voice.register_report_sections,"
        " bench_voice.register_models)]; print('scipy' in sys.modules or 'bench_voice.effects' in sys.modules)"
    )
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
