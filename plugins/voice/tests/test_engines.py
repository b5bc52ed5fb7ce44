"""The offline engines (the bench-voice[engines] extra): refused with the install command when absent, real speech when present."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bench_voice.engines import INSTALL, missing_engines

from bench_kernel import ModelUnavailableError, RunConfig, Store, run

MISSING = missing_engines()


@pytest.mark.skipif(not MISSING, reason="the voice engines are installed")
def test_without_the_engines_the_channel_refuses_to_start_with_the_install_command(tmp_path: Path) -> None:
    with pytest.raises(ModelUnavailableError) as raised:
        run(RunConfig(domain="mock", plugins=["mock", "voice"], channel="voice", num_tasks=1), tmp_path / "r.db")
    assert INSTALL in str(raised.value)
    assert not (tmp_path / "r.db").exists() or Store(tmp_path / "r.db").runs() == []


@pytest.mark.skipif(bool(MISSING), reason=f"bench-voice[engines] extra not installed: {INSTALL}")
def test_piper_and_whisper_carry_a_telecom_conversation_offline(tmp_path: Path) -> None:
    summary = run(
        RunConfig(
            domain="telecom",
            plugins=["telecom", "voice"],
            channel="voice",
            baseline=False,
            task_ids=["[service_issue]airplane_mode_on[PERSONA:None]"],
        ),
        tmp_path / "r.db",
    )
    store = Store(tmp_path / "r.db")
    try:
        [row] = store.conversations(summary.run_id)
        turns = [json.loads(e["data_json"]) for e in store.conversation_events(row["id"]) if e["kind"] == "voice.turn"]
    finally:
        store.close()
    assert row["reward"] == 1.0
    assert turns and turns[0]["wer"] < 0.2  # the opening line, recognised almost word for word
    assert all(t["tts_ms"] is not None and t["asr_ms"] is not None for t in turns)


@pytest.mark.skipif(bool(MISSING), reason=f"bench-voice[engines] extra not installed: {INSTALL}")
def test_with_real_engines_noise_makes_the_listening_oracle_fail_on_a_misheard_phone_number(tmp_path: Path) -> None:
    def reward(snr: float | None, folder: str) -> tuple[float, list[dict]]:
        summary = run(
            RunConfig(
                domain="telecom",
                plugins=["telecom", "voice"],
                channel="voice",
                agent="listening-oracle",
                baseline=False,
                task_ids=["[service_issue]airplane_mode_on[PERSONA:None]"],
                channel_options=None if snr is None else {"snr_db": snr},
            ),
            tmp_path / folder / "r.db",
        )
        store = Store(tmp_path / folder / "r.db")
        try:
            [row] = store.conversations(summary.run_id)
            [cfa] = store.db.query("select details_json from metric_values where metric = 'voice.cfa'")
        finally:
            store.close()
        return row["reward"], json.loads(cfa["details_json"])["misheard"]

    (tmp_path / "clean").mkdir()
    (tmp_path / "noisy").mkdir()
    assert reward(None, "clean")[0] == 1.0  # (Whisper tiny may drop a digit in the long opening; a repeat fixes it)
    noisy_reward, misheard = reward(-6.0, "noisy")  # well below the level Whisper tiny still copes with (about -2 dB)
    assert noisy_reward == 0.0 and misheard and misheard[0]["meant"] == "612-555-0142"
