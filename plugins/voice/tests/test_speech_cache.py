"""The run's speech cache seen from the voice channel: each text is spoken once per run (every arm, noise level, trial
and resume), noise is still each conversation's own, and results are the same with and without the cache."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench_voice.engines import INSTALL, missing_engines

from bench_kernel import ModelConfig, RunConfig, RunSummary, Store, get_plugin_manager, run

SWEEP = {"snr_db": [30, -4]}
"""Two noise levels: -4 dB garbles the byte engines' speech, so the listening oracle asks callers to repeat."""


def telecom_run(db: Path, models: dict[str, ModelConfig], plugin: object, **fields: Any) -> RunSummary:
    settings: dict[str, Any] = {
        "domain": "telecom",
        "agent": "listening-oracle",
        "channel": "voice",
        "models": models,
        "baseline": False,
        "num_tasks": 4,
        "paired": True,
        "sweep": SWEEP,
        **fields,
    }
    return run(RunConfig(**settings), db, plugins=get_plugin_manager(["telecom", "voice"], extra=[("bytes", plugin)]))


def stored(db: Path, run_id: str) -> tuple[dict[tuple[str, str, int], Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """Per conversation (arm, task, trial): reward and the turns' meant, heard and audio digest; every voice.turn; the
    speech engines' ledger rows."""
    store = Store(db)
    try:
        outcomes, turns = {}, []
        for row in store.conversations(run_id):
            said = [json.loads(e["data_json"]) for e in store.conversation_events(row["id"]) if e["kind"] == "voice.turn"]
            turns += [{**t, "arm": row["arm"]} for t in said]
            outcomes[row["arm"], row["task_id"], row["trial"]] = (
                row["reward"],
                [(t["meant"], t["heard"], t["audio_sha256"], t["snr_db"]) for t in said],
            )
        calls = list(
            store.db.query(
                "select arm, kind, cached, request_hash, error from llm_calls where run_id = ? and kind in ('tts', 'asr') order by id", [run_id]
            )
        )
        return outcomes, turns, calls
    finally:
        store.close()


def test_each_text_is_spoken_once_for_every_arm_and_noise_level(tmp_path: Path, byte_models: dict, byte_plugin: Any) -> None:
    summary = telecom_run(tmp_path / "r.db", byte_models, byte_plugin)
    _, turns, calls = stored(tmp_path / "r.db", summary.run_id)
    spoken = [c for c in calls if c["kind"] == "tts"]
    assert sorted(byte_plugin.tts.asked) == sorted({t["meant"] for t in turns})  # the engine spoke each text once
    assert len(spoken) == len(turns) and sum(not c["cached"] for c in spoken) == len(byte_plugin.tts.asked)
    assert {c["arm"] for c in spoken if c["cached"]} == {"agent", "snr_db=-4"}  # within the first level, and the second
    assert all(c["cached"] for c in spoken if c["arm"] == "snr_db=-4")
    assert all(t["tts_cached"] == (t["tts_ms"] == 0) for t in turns)


def test_noise_is_added_after_the_cache_so_each_conversation_hears_its_own(tmp_path: Path, byte_models: dict, byte_plugin: Any) -> None:
    summary = telecom_run(tmp_path / "r.db", byte_models, byte_plugin)
    _, turns, calls = stored(tmp_path / "r.db", summary.run_id)
    # Every user turn of the four tasks opens with one of a few scripted lines, so texts repeat; the noisy recordings
    # do not (the noise is drawn from the conversation's seed and turn), so each is recognised for itself.
    assert len({t["meant"] for t in turns}) < len(turns)
    assert len({t["audio_sha256"] for t in turns}) == len(turns)
    assert not any(c["cached"] for c in calls if c["kind"] == "asr")
    assert len({(t["arm"], t["heard"]) for t in turns if t["arm"] == "snr_db=-4"}) > 1


def test_a_clean_recording_said_again_is_recognised_once(tmp_path: Path, byte_models: dict, byte_plugin: Any) -> None:
    summary = telecom_run(tmp_path / "r.db", byte_models, byte_plugin, sweep=None, paired=False, trials=2)
    _, turns, calls = stored(tmp_path / "r.db", summary.run_id)
    heard = [c for c in calls if c["kind"] == "asr"]
    assert len(byte_plugin.asr.asked) == len({t["audio_sha256"] for t in turns}) < len(turns)
    assert sum(c["cached"] for c in heard) == len(turns) - len(byte_plugin.asr.asked)
    assert all(t["asr_cached"] for t in turns if t["meant"] == turns[0]["meant"] and t is not turns[0])


def test_results_are_the_same_with_and_without_the_speech_cache(tmp_path: Path, byte_models: dict, byte_plugin: Any) -> None:
    cached = telecom_run(tmp_path / "cached.db", byte_models, byte_plugin, trials=2)
    uncached = telecom_run(tmp_path / "uncached.db", byte_models, byte_plugin, trials=2, speech_cache=False)
    with_cache, _, calls = stored(tmp_path / "cached.db", cached.run_id)
    without, _, plain_calls = stored(tmp_path / "uncached.db", uncached.run_id)
    assert with_cache == without and len(with_cache) == 4 * 3 * 2
    assert any(c["cached"] for c in calls) and not any(c["cached"] for c in plain_calls)
    assert cached.run_id == uncached.run_id  # how a run is executed is not its identity


def test_a_resumed_run_speaks_nothing_its_unfinished_conversations_had_spoken(tmp_path: Path, byte_models: dict, byte_plugin: Any) -> None:
    """The recogniser fails: every conversation stops after its first spoken line, unfinished (an infrastructure error).
    The resume plays them all again and speaks no text a second time."""
    byte_plugin.asr.broken = True
    first = telecom_run(tmp_path / "r.db", byte_models, byte_plugin)
    assert first.infrastructure_errors == 8 and first.status == "incomplete"  # the text arm has no channel: it finished
    spoken_before = list(byte_plugin.tts.asked)
    byte_plugin.asr.broken = False
    resumed = telecom_run(tmp_path / "r.db", byte_models, byte_plugin)
    outcomes, _, calls = stored(tmp_path / "r.db", resumed.run_id)
    assert resumed.run_id == first.run_id and resumed.resumed and resumed.status == "complete"
    spoken = [c for c in calls if c["kind"] == "tts" and not c["cached"]]
    assert len(byte_plugin.tts.asked) == len(spoken) == len({c["request_hash"] for c in spoken})  # none spoken twice
    assert set(spoken_before) < set(byte_plugin.tts.asked)  # the resume spoke only lines the first attempt never reached
    assert not set(byte_plugin.tts.asked[len(spoken_before) :]) & set(spoken_before)
    fresh = telecom_run(tmp_path / "fresh.db", byte_models, byte_plugin)
    assert stored(tmp_path / "fresh.db", fresh.run_id)[0] == outcomes  # the same results as a run never interrupted


@pytest.mark.skipif(bool(missing_engines()), reason=f"bench-voice[engines] extra not installed: {INSTALL}")
def test_with_real_engines_the_cache_changes_no_transcript_and_each_text_is_spoken_once(tmp_path: Path) -> None:
    def voice(db: str, **fields: Any) -> RunSummary:
        return run(
            RunConfig(
                domain="telecom",
                plugins=["telecom", "voice"],
                channel="voice",
                agent="listening-oracle",
                baseline=False,
                num_tasks=2,
                sweep={"snr_db": [20, -2]},
                **fields,
            ),
            tmp_path / db,
        )

    cached, uncached = voice("cached.db"), voice("uncached.db", speech_cache=False)
    with_cache, turns, calls = stored(tmp_path / "cached.db", cached.run_id)
    without, _, _ = stored(tmp_path / "uncached.db", uncached.run_id)
    assert with_cache == without  # piper's samples and whisper's transcripts do not depend on the cache
    spoken = [c for c in calls if c["kind"] == "tts" and not c["cached"]]
    assert len(spoken) == len({t["meant"] for t in turns}) < len(turns)
