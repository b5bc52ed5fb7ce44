"""Speech conditions: tau2's eight levels, configs from tasks_voice.json (both schemas) and sampled ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from bench_voice.complexity import LEVELS, PERSONAS, conditions_for, stable_seed

from bench_kernel import ConfigError

AUDIO = {"regular", "control_audio", "control_audio_accents", "control_audio_behavior"}
BEHAVIOR = {"regular", "control_behavior", "control_audio_behavior", "control_accents_behavior"}
ACCENTS = {"regular", "control_accents", "control_audio_accents", "control_accents_behavior"}


@pytest.mark.parametrize("level", list(LEVELS))
def test_every_level_samples_its_preset(level: str) -> None:
    c = conditions_for(level, "task-1", 3, None)
    assert c.source == "sampled" and c.level == level and c.telephony
    assert c.persona in PERSONAS["regular" if level in ACCENTS else "control"]
    audio, behavior = level in AUDIO, level in BEHAVIOR
    assert (c.noise.enabled, c.bursts.enabled, c.muffling.enabled, c.frame_drops.enabled) == (audio,) * 4
    assert (c.environment is not None, bool(c.burst_files)) == (audio, audio)
    assert c.frame_drops.rate == {True: 0.02 if level == "regular" else 0.005, False: 0.0}[audio]
    assert (c.inserts.vocal_tics, c.inserts.non_directed, c.use_llm_backchannel) == (behavior,) * 3
    assert c.interrupt_tendency == ("interrupts" if behavior else "waits")


def test_control_has_no_effect_but_telephony() -> None:
    c = conditions_for("control", "task-1", 3, None)
    assert (
        not any((c.noise.enabled, c.bursts.enabled, c.muffling.enabled, c.frame_drops.enabled, c.inserts.vocal_tics, c.inserts.non_directed))
        and c.telephony
    )


def test_an_unknown_level_is_refused_naming_the_levels() -> None:
    with pytest.raises(ConfigError, match=r"unknown speech complexity 'loud'.*control, regular, control_audio"):
        conditions_for("loud", "task-1", 3, None)


def test_seeds_are_derived_from_the_seed_the_task_and_the_level() -> None:
    seeds = {conditions_for(level, task, seed, None).voice_seed for level in LEVELS for task in ("a", "b") for seed in (1, 2)}
    assert len(seeds) == len(LEVELS) * 4
    assert conditions_for("regular", "a", 1, None).voice_seed == stable_seed(1, "a", "regular")


def test_sampled_conditions_are_the_same_in_another_process(tmp_path: Path) -> None:
    code = (
        "import json; from bench_voice.complexity import conditions_for, LEVELS; "
        "print(json.dumps([conditions_for(l, t, 11, None).as_dict() for l in LEVELS for t in ('0', 'x/y')]))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=tmp_path)
    here = [conditions_for(level, task, 11, None).as_dict() for level in LEVELS for task in ("0", "x/y")]
    assert json.loads(other.stdout) == json.loads(json.dumps(here))


@pytest.mark.parametrize("domain,task", [("airline", "0"), ("retail", "94"), ("banking_knowledge", "task_001")])
def test_configs_come_from_tasks_voice_json(domain: str, task: str, reference: Callable[[str], str]) -> None:
    data_dir = reference(f"{domain}/tasks_voice.json").rsplit("/", 1)[0]
    shipped = json.loads(Path(data_dir, "tasks_voice.json").read_text())["configs"][task]["configs"]
    for level in LEVELS:
        c, want = conditions_for(level, task, 5, data_dir), shipped[level]
        assert c.source == "tasks_voice.json" and c.persona == want["persona_name"]
        assert (c.environment, c.background_file, list(c.burst_files)) == (
            want["environment"],
            want["background_noise_file"],
            want["burst_noise_files"],
        )
        assert c.frame_drops.rate == want["channel_effects_config"]["frame_drop_rate"]
        assert c.muffling.probability == want["speech_effects_config"]["muffle_probability"]
        assert c.inserts.per_minute == want["speech_effects_config"]["speech_insert_events_per_minute"]
        assert c.use_llm_backchannel == want["use_llm_backchannel"] and c.telephony == want["telephony_enabled"]


def test_the_legacy_schema_is_read_and_its_missing_levels_are_sampled(reference: Callable[[str], str]) -> None:
    data_dir = reference("mock/tasks_voice.json").rsplit("/", 1)[0]
    regular = conditions_for("regular", "create_task_1", 5, data_dir)
    assert regular.source == "tasks_voice.json" and regular.persona == "mildred_kaplan"
    assert regular.frame_drops.rate == 0.01  # the legacy file's value (the preset's is 0.02)
    assert regular.use_llm_backchannel and regular.telephony  # absent in the legacy form: True, as tau2's defaults
    assert conditions_for("control_audio", "create_task_1", 5, data_dir).source == "sampled"
    assert conditions_for("regular", "no-such-task", 5, data_dir).source == "sampled"


def test_noise_files_are_found_beside_the_data_dir_and_missing_ones_recorded(reference: Callable[[str], str], noise_dir: str) -> None:
    data_dir = reference("airline/tasks_voice.json").rsplit("/", 1)[0]
    c = conditions_for("regular", "0", 5, data_dir)  # outdoor: street_and_metro_station, which the copy lacks
    assert c.noise_dir == noise_dir
    assert c.missing_files == ("street_and_metro_station_iphone_mic.wav",)
    assert c.path("car_horn.wav", "bursts") == Path(noise_dir, "bursts", "car_horn.wav")
    assert c.path(c.background_file or "", "continuous") is None
    as_dict = c.as_dict()
    assert as_dict["missing_files"] == ["street_and_metro_station_iphone_mic.wav"] and as_dict["source"] == "tasks_voice.json"


def test_the_noise_dir_option_and_no_files_anywhere(tmp_path: Path) -> None:
    (tmp_path / "continuous").mkdir()
    (tmp_path / "continuous" / "people_talking.wav").write_bytes(b"")
    c = next(
        conditions_for("control_audio", str(t), 1, None, noise_dir=str(tmp_path))
        for t in range(50)
        if conditions_for("control_audio", str(t), 1, None).background_file == "people_talking.wav"
    )
    assert c.noise_dir == str(tmp_path) and "people_talking.wav" not in c.missing_files
    nowhere = conditions_for("control_audio", "1", 1, str(tmp_path / "data"))
    assert nowhere.noise_dir is None and set(nowhere.missing_files) == {nowhere.background_file, *nowhere.burst_files}
