"""voice-cascade with the real offline engines (piper, faster-whisper through the asr and tts roles), the user speaking
through bench-voice's channel: a spoken question is recognised, answered with a tool call and spoken back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from bench_realtime.cascade import plugin as cascade_plugin

from bench_kernel import DuplexSettings, Mode, RunConfig, get_plugin_manager, run
from bench_kernel.testing import KitPlugin

try:
    from bench_voice.engines import INSTALL, missing_engines
except ImportError:  # bench-voice itself is not installed
    INSTALL, MISSING = "pip install 'bench-voice[engines]'", ["bench-voice"]
else:
    MISSING = missing_engines()

pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"the voice engines are not installed: {INSTALL}")


def test_the_cascade_hears_a_spoken_question_and_answers_it_aloud(tmp_path: Path) -> None:
    import bench_realtime

    extra: list[tuple[str, object]] = [("conformance-kit", KitPlugin())]
    if not hasattr(bench_realtime, "register_metrics"):
        extra.append(("realtime-cascade", cascade_plugin))
    plugins = get_plugin_manager(["realtime", "voice"], extra)
    assert plugins.failures() == []
    models: dict[str, Any] = {}  # the voice channel's defaults: piper joe and faster-whisper tiny.en
    config = RunConfig(domain="kit-notes", agent="voice-cascade", agent_options={"inner": "oracle"}, mode=Mode.FULL_DUPLEX,
                       task_ids=["read-note"], baseline=False, models=models, duplex=DuplexSettings(max_seconds=90))
    summary = run(config, tmp_path / "r.db", plugins=plugins)
    db = sqlite_utils.Database(tmp_path / "r.db")
    [row] = db.query("select * from conversations where arm = 'agent'")
    assert (summary.status, row["reward"], row["termination_reason"]) == ("complete", 1.0, "user_stop"), row["error"]
    heard = [json.loads(r["data_json"])["text"] for r in db.query(
        "select data_json from conversation_events where kind = 'realtime.transcript'")]
    assert heard and "door" in heard[0].lower()
    [wer] = [r["value"] for r in db.query("select value from metric_values where metric = 'realtime_asr_wer'")]
    assert wer is not None and wer < 0.5
    spoken = [r["content"] for r in db.query("select content from messages where role = 'assistant' and content is not null")]
    assert any("1234" in text for text in spoken)
    calls = {r["role"] for r in db.query("select role from llm_calls")}
    assert {"asr", "tts"} <= calls
