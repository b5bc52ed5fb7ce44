"""The voice channel end to end through the kernel's runner, with byte-coded engines: meant, heard, WER, noise, control tokens."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bench_kernel import ModelConfig, RunConfig, Store, get_plugin_manager, run


def voice_run(tmp_path: Path, models: dict[str, ModelConfig], plugin: object, **options: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    plugins = get_plugin_manager(["mock", "voice"], extra=[("bytes", plugin)])
    config = RunConfig(domain="mock", channel="voice", models=models, baseline=False, num_tasks=3, channel_options=options or None)
    summary = run(config, tmp_path / "r.db", plugins=plugins)
    store = Store(tmp_path / "r.db")
    try:
        rows = store.conversations(summary.run_id)
        turns = [json.loads(e["data_json"]) for r in rows for e in store.conversation_events(r["id"]) if e["kind"] == "voice.turn"]
        return rows, turns
    finally:
        store.close()


def test_clean_speech_is_heard_as_meant_and_the_stop_token_crosses_untouched(tmp_path: Path, byte_models: dict, byte_plugin: object) -> None:
    rows, turns = voice_run(tmp_path, byte_models, byte_plugin)
    assert turns and all(t["wer"] == 0.0 and t["heard"] == t["meant"] for t in turns)
    assert all(r["reward"] == 1.0 and r["termination_reason"] == "user_stop" for r in rows)
    assert all("###" not in t["meant"] for t in turns)  # control tokens are not spoken
    assert all(len(t["audio_sha256"]) == 64 and t["seconds"] > 0 and t["snr_db"] is None for t in turns)


def test_noise_garbles_what_the_agent_hears_and_is_recorded(tmp_path: Path, byte_models: dict, byte_plugin: object) -> None:
    _, clean = voice_run(tmp_path / "a", byte_models, byte_plugin, snr_db=30)
    _, noisy = voice_run(tmp_path / "b", byte_models, byte_plugin, snr_db=-2)
    assert sum(t["wer"] for t in noisy) > sum(t["wer"] for t in clean)
    assert all(t["snr_db"] == -2.0 for t in noisy)
    _, again = voice_run(tmp_path / "c", byte_models, byte_plugin, snr_db=-2)
    assert [t["heard"] for t in again] == [t["heard"] for t in noisy]  # the same conversation hears the same noise


def test_keep_audio_writes_the_recordings(tmp_path: Path, byte_models: dict, byte_plugin: object) -> None:
    _, turns = voice_run(tmp_path, byte_models, byte_plugin, keep_audio=str(tmp_path / "audio"))
    assert len(list((tmp_path / "audio").glob("*.wav"))) == len(turns)


def test_the_command_line_spells_the_voice_options(tmp_path: Path) -> None:
    """--snr and --keep-audio are the command line's names for the sweep and the keep_audio option."""
    from click.testing import CliRunner

    from bench_kernel.testing import cli

    result = CliRunner().invoke(
        cli,
        [
            "run",
            "--plugin",
            "mock",
            "--plugin",
            "voice",
            "--channel",
            "voice",
            "--snr",
            "5",
            "--snr",
            "-2",
            "--keep-audio",
            str(tmp_path / "audio"),
            "--num-tasks",
            "1",
            "--db",
            str(tmp_path / "r.db"),
            "--format",
            "none",
        ],
    )
    from bench_voice.engines import missing_engines

    if not missing_engines():
        assert result.exit_code == 0, result.output
        assert any((tmp_path / "audio").glob("*.wav"))
    else:  # the options parsed (a bad one is a usage error, exit 2); the run is refused for want of the engines
        assert result.exit_code == 1 and "bench-voice[engines]" in result.output
