"""Speech conditions of a full-duplex conversation: tau2's eight speech-complexity levels and one task's sampled config.

A level is a preset (who speaks, which noise, which effects at which rates); a conversation's `SpeechConditions` are
the preset sampled for one task: a persona, an environment, its noise files and a voice seed that seeds every effect.
tau2 ships the sampled configs in `<data_dir>/tasks_voice.json` (per task and level); when a task or level is not
there, one is sampled here. Unlike tau2, whose task seed uses Python's salted `hash()` (it changes per process unless
PYTHONHASHSEED is fixed), every seed here is derived with sha256 from the conversation's seed, the task id and the level.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from random import Random
from typing import Any

import attrs

from bench_kernel import ConfigError

NOISE_SUBDIR = Path("voice") / "background_noise_audio_pcm_mono_verified"
"""Where tau2 keeps its noise files, relative to a data directory's parent (and tried under the data dir itself)."""
PERSONAS = {
    "control": ("matt_delaney", "lisa_brenner"),
    "regular": ("mildred_kaplan", "arjun_roy", "wei_lin", "mamadou_diallo", "priya_patil"),
}
ENVIRONMENTS = {
    "indoor": (("people_talking.wav", "medium_size_room_tv_news_iphone_mic.wav"), ("ringing_phone.wav", "dog_bark.wav")),
    "outdoor": (("busy_street_iphone_mic.wav", "street_and_metro_station_iphone_mic.wav"), ("car_horn.wav", "engine_idling.wav", "siren.wav")),
}
"""Environment -> (background files, burst files), tau2's."""
VOCAL_TICS = (".[cough][cough][cough]", ".[sneeze][sneeze][sneeze]", ".[sniffle][sniffle][sniffle]")
NON_DIRECTED = (
    "Not now.",
    "Hold on a second.",
    "I'm on the phone.",
    "Just a minute.",
    "I don't know.",
    "Give me a moment.",
    "One second.",
    "I'll be right with you.",
    "Can you wait?",
    "Shh, quiet.",
)


@attrs.frozen(kw_only=True)
class Preset:
    """One speech-complexity level as tau2 defines it."""

    personas: str
    """Which persona group speaks: control (American voices) or regular (accents)."""
    audio: bool = False
    """Background noise, bursts (1/min), muffling (p 0.2) and frame drops."""
    frame_drop_rate: float = 0.0
    behavior: bool = False
    """Vocal tics and non-directed phrases (0.7/min), LLM backchannels, a persona that interrupts."""


LEVELS: dict[str, Preset] = {
    "control": Preset(personas="control"),
    "regular": Preset(personas="regular", audio=True, frame_drop_rate=0.02, behavior=True),
    "control_audio": Preset(personas="control", audio=True, frame_drop_rate=0.005),
    "control_accents": Preset(personas="regular"),
    "control_behavior": Preset(personas="control", behavior=True),
    "control_audio_accents": Preset(personas="regular", audio=True, frame_drop_rate=0.005),
    "control_audio_behavior": Preset(personas="control", audio=True, frame_drop_rate=0.005, behavior=True),
    "control_accents_behavior": Preset(personas="regular", behavior=True),
}


@attrs.frozen(kw_only=True)
class NoiseSettings:
    """Background noise at a drifting SNR (dB against a reference speech RMS of 3000)."""

    enabled: bool = False
    snr_db: float = 15.0
    drift_db: float = 3.0
    variation_speed: float = 0.5


@attrs.frozen(kw_only=True)
class BurstSettings:
    """Short noises (a phone ringing, a dog) arriving as a Poisson process."""

    enabled: bool = False
    per_minute: float = 0.0
    snr_range_db: tuple[float, float] = (-5.0, 10.0)


@attrs.frozen(kw_only=True)
class FrameDropSettings:
    """Audio lost on the line: a Gilbert-Elliott model whose long-run loss rate is `rate`."""

    enabled: bool = False
    rate: float = 0.0
    burst_ms: float = 200.0
    drop_ms: int = 150


@attrs.frozen(kw_only=True)
class MufflingSettings:
    """A muffled stretch inside an utterance (the speaker turns away)."""

    enabled: bool = False
    probability: float = 0.0
    segment_ms: int = 500
    cutoff_hz: float = 1500.0
    transition_ms: int = 100


@attrs.frozen(kw_only=True)
class InsertSettings:
    """Vocal tics and phrases not meant for the agent, in turn (tics) and out of turn (both)."""

    vocal_tics: bool = False
    tics: tuple[str, ...] = VOCAL_TICS
    min_words_for_tics: int = 3
    non_directed: bool = False
    phrases: tuple[str, ...] = NON_DIRECTED
    per_minute: float = 0.0


@attrs.frozen(kw_only=True)
class SpeechConditions:
    """One conversation's speech conditions: who speaks, in which environment, with which effects."""

    level: str
    task_id: str
    persona: str
    voice: str | None = None
    """The TTS voice the persona speaks with (set by the channel)."""
    environment: str | None = None
    background_file: str | None = None
    burst_files: tuple[str, ...] = ()
    noise_dir: str | None = None
    """Where the files were found (None: nowhere)."""
    missing_files: tuple[str, ...] = ()
    """Named files not found on disk: their tracks are silent (as tau2 does)."""
    noise: NoiseSettings = NoiseSettings()
    bursts: BurstSettings = BurstSettings()
    frame_drops: FrameDropSettings = FrameDropSettings()
    muffling: MufflingSettings = MufflingSettings()
    inserts: InsertSettings = InsertSettings()
    telephony: bool = True
    use_llm_backchannel: bool = False
    backchannel_min_s: float | None = None
    interrupt_tendency: str = "waits"
    verbosity: str = "minimal"
    voice_seed: int = 0
    source: str = "sampled"
    """tasks_voice.json (tau2's shipped config) or sampled (derived here from the seed)."""

    def as_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (for the timeline)."""
        return attrs.asdict(self, value_serializer=lambda _, __, v: list(v) if isinstance(v, tuple) else v)

    def path(self, name: str, kind: str) -> Path | None:
        """A noise file's path (kind: continuous or bursts), None when missing."""
        if self.noise_dir is None or name in self.missing_files:
            return None
        return _find(Path(self.noise_dir), name, kind)


def stable_seed(*parts: object) -> int:
    """A seed from stable inputs (sha256; Python's hash() is salted per process)."""
    return int(hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()[:12], 16)


def preset(level: str) -> Preset:
    """The level's preset, or a clear error listing the levels."""
    if level not in LEVELS:
        raise ConfigError(f"unknown speech complexity {level!r}; the levels are: {', '.join(LEVELS)}")
    return LEVELS[level]


def conditions_for(level: str, task_id: str, seed: int, data_dir: str | None, *, noise_dir: str | None = None) -> SpeechConditions:
    """The task's conditions at a level: tau2's shipped config when tasks_voice.json has it, else sampled from the seed."""
    preset(level)
    voice_seed = stable_seed(seed, task_id, level)
    shipped = _shipped(data_dir, task_id, level)
    made = from_tasks_voice(shipped, level, task_id, voice_seed) if shipped is not None else sample(level, task_id, voice_seed)
    return _locate(made, _noise_dirs(data_dir, noise_dir))


def sample(level: str, task_id: str, voice_seed: int) -> SpeechConditions:
    """Conditions drawn from the level's preset with `Random(voice_seed)`: persona, then environment and files."""
    p, rng = preset(level), Random(voice_seed)
    persona = rng.choice(PERSONAS[p.personas])
    environment = background = None
    bursts: tuple[str, ...] = ()
    if p.audio:
        environment = rng.choice(sorted(ENVIRONMENTS))
        backgrounds, bursts = ENVIRONMENTS[environment]
        background = rng.choice(backgrounds)
    return SpeechConditions(
        level=level,
        task_id=task_id,
        persona=persona,
        environment=environment,
        background_file=background,
        burst_files=bursts,
        noise=NoiseSettings(enabled=p.audio),
        bursts=BurstSettings(enabled=p.audio, per_minute=1.0 if p.audio else 0.0),
        frame_drops=FrameDropSettings(enabled=p.frame_drop_rate > 0, rate=p.frame_drop_rate, burst_ms=100.0 if p.audio else 200.0),
        muffling=MufflingSettings(enabled=p.audio, probability=0.2 if p.audio else 0.0),
        inserts=InsertSettings(vocal_tics=p.behavior, non_directed=p.behavior, per_minute=0.7 if p.behavior else 0.0),
        use_llm_backchannel=p.behavior,
        backchannel_min_s=3.0 if p.behavior else None,
        interrupt_tendency="interrupts" if p.behavior else "waits",
        voice_seed=voice_seed,
        source="sampled",
    )


def from_tasks_voice(config: Mapping[str, Any], level: str, task_id: str, voice_seed: int) -> SpeechConditions:
    """Conditions from one tasks_voice.json entry (either schema; the legacy one lacks two flags, both True there)."""
    channel, source = config.get("channel_effects_config", {}), config.get("source_effects_config", {})
    speech, persona = config.get("speech_effects_config", {}), config.get("persona_config", {})
    threshold = config.get("backchannel_min_threshold")
    return SpeechConditions(
        level=level,
        task_id=task_id,
        persona=config["persona_name"],
        environment=config.get("environment"),
        background_file=config.get("background_noise_file"),
        burst_files=tuple(config.get("burst_noise_files") or ()),
        noise=NoiseSettings(
            enabled=bool(source.get("enable_background_noise")),
            snr_db=float(source.get("noise_snr_db", 15.0)),
            drift_db=float(source.get("noise_snr_drift_db", 3.0)),
            variation_speed=float(source.get("noise_variation_speed", 0.5)),
        ),
        bursts=BurstSettings(
            enabled=bool(source.get("enable_burst_noise")),
            per_minute=float(source.get("burst_noise_events_per_minute", 0.0)),
            snr_range_db=_pair(source.get("burst_snr_range_db", (-5.0, 10.0))),
        ),
        frame_drops=FrameDropSettings(
            enabled=bool(channel.get("enable_frame_drops")),
            rate=float(channel.get("frame_drop_rate", 0.0)),
            burst_ms=float(channel.get("frame_drop_burst_duration_ms", 200.0)),
            drop_ms=int(channel.get("frame_drop_duration_ms", 150)),
        ),
        muffling=MufflingSettings(
            enabled=bool(speech.get("enable_dynamic_muffling")),
            probability=float(speech.get("muffle_probability", 0.0)),
            segment_ms=int(speech.get("muffle_segment_duration_ms", 500)),
            cutoff_hz=float(speech.get("muffle_cutoff_freq", 1500.0)),
            transition_ms=int(speech.get("muffle_transition_ms", 100)),
        ),
        inserts=InsertSettings(
            vocal_tics=bool(speech.get("enable_vocal_tics")),
            tics=_texts(speech.get("vocal_tics"), VOCAL_TICS),
            min_words_for_tics=int(speech.get("min_words_for_vocal_tics", 3)),
            non_directed=bool(speech.get("enable_non_directed_phrases")),
            phrases=_texts(speech.get("non_directed_phrases"), NON_DIRECTED),
            per_minute=float(speech.get("speech_insert_events_per_minute", 0.0)),
        ),
        telephony=bool(config.get("telephony_enabled", True)),
        use_llm_backchannel=bool(config.get("use_llm_backchannel", True)),
        backchannel_min_s=None if threshold is None else float(threshold),
        interrupt_tendency=persona.get("interrupt_tendency", "waits"),
        verbosity=persona.get("verbosity", "minimal"),
        voice_seed=voice_seed,
        source="tasks_voice.json",
    )


def _pair(value: Any) -> tuple[float, float]:
    low, high = value
    return float(low), float(high)


def _texts(items: Any, default: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(item["text"] if isinstance(item, Mapping) else str(item) for item in items) if items else default


def _shipped(data_dir: str | None, task_id: str, level: str) -> Mapping[str, Any] | None:
    """The task's entry for the level in `<data_dir>/tasks_voice.json`, if there is one."""
    if data_dir is None:
        return None
    entry = tasks_voice(str(Path(data_dir) / "tasks_voice.json")).get(task_id)
    if not isinstance(entry, Mapping):
        return None
    levels = entry["configs"] if isinstance(entry.get("configs"), Mapping) else entry  # current schema, else legacy (mock)
    found = levels.get(level)
    return found if isinstance(found, Mapping) else None


@functools.cache
def tasks_voice(path: str) -> Mapping[str, Any]:
    """A tasks_voice.json's per-task configs (empty when the file does not exist)."""
    file = Path(path)
    if not file.is_file():
        return {}
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc})") from exc
    configs = data.get("configs") if isinstance(data, Mapping) else None
    if not isinstance(configs, Mapping):
        raise ConfigError(f"{path}: expected an object with 'configs' @ $.configs")
    return configs


def _noise_dirs(data_dir: str | None, option: str | None) -> list[Path]:
    """Where noise files may be: the channel option, then under the data dir, then beside it (tau2's layout)."""
    found = [Path(option)] if option else []
    if data_dir:
        found += [Path(data_dir) / NOISE_SUBDIR, Path(data_dir).parent / NOISE_SUBDIR]
    return found


def _find(folder: Path, name: str, kind: str) -> Path | None:
    for candidate in (folder / kind / name, folder / name):
        if candidate.is_file():
            return candidate
    return None


def _locate(conditions: SpeechConditions, folders: list[Path]) -> SpeechConditions:
    """Record the first folder that holds noise files and which of the conditions' files are missing."""
    wanted = ([(conditions.background_file, "continuous")] if conditions.background_file else []) + [
        (name, "bursts") for name in conditions.burst_files
    ]
    if not wanted:
        return conditions
    folder = next((f for f in folders if any(_find(f, n, k) for n, k in wanted)), None)
    missing = tuple(n for n, k in wanted if folder is None or _find(folder, n, k) is None)
    return attrs.evolve(conditions, noise_dir=None if folder is None else str(folder), missing_files=missing)
