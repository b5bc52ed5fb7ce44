"""voice-cascade with the real offline engines (piper, faster-whisper through the asr and tts roles), the user speaking
through bench-voice's channel: a spoken question is recognised, answered with a tool call and spoken back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlite_utils
from bench_realtime.cascade import plugin as cascade_plugin
from bench_voice.engines import INSTALL, missing_engines

from bench_kernel import Mode, RunConfig, get_plugin_manager, run
from bench_kernel.testing import KitPlugin

MISSING = missing_engines()

pytestmark = pytest.mark.skipif(bool(MISSING), reason=f"the voice engines are not installed: {INSTALL}")


def _installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def test_the_cascade_hears_a_spoken_question_and_answers_it_aloud(tmp_path: Path) -> None:
    import bench_realtime

    extra: list[tuple[str, object]] = [("conformance-kit", KitPlugin())]
    if not hasattr(bench_realtime, "register_metrics"):
        extra.append(("realtime-cascade", cascade_plugin))
    plugins = get_plugin_manager(["realtime", "duplex", "voice"], extra)
    assert plugins.failures() == []
    models: dict[str, Any] = {}  # the voice channel's defaults: piper joe and faster-whisper tiny.en
    config = RunConfig(
        domain="kit-notes",
        agent="voice-cascade",
        agent_options={"inner": "oracle"},
        mode=Mode.FULL_DUPLEX,
        task_ids=["read-note"],
        baseline=False,
        models=models,
        duplex={"max_seconds": 90},
    )
    summary = run(config, tmp_path / "r.db", plugins=plugins)
    db = sqlite_utils.Database(tmp_path / "r.db")
    [row] = db.query("select * from conversations where arm = 'agent'")
    assert (summary.status, row["reward"], row["termination_reason"]) == ("complete", 1.0, "user_stop"), row["error"]
    heard = [json.loads(r["data_json"])["text"] for r in db.query("select data_json from conversation_events where kind = 'realtime.transcript'")]
    assert heard and "door" in heard[0].lower()
    [wer] = [r["value"] for r in db.query("select value from metric_values where metric = 'realtime_asr_wer'")]
    assert wer is not None and wer < 0.5
    spoken = [r["content"] for r in db.query("select content from messages where role = 'assistant' and content is not null")]
    assert any("1234" in text for text in spoken)
    calls = {r["role"] for r in db.query("select role from llm_calls")}
    assert {"asr", "tts"} <= calls


def cascade_run(tmp_path: Path, level: str) -> dict[str, Any]:
    """`bench run` of three mock tasks with voice-cascade (llm-fc inside, on the testing kit's fake chat server), the
    scripted user speaking through bench-voice's line at this speech complexity; the JSON report."""
    import os
    import subprocess
    import sys

    from bench_kernel.testing import FakeOpenAIServer

    tasks = ["upgrade_by_email", "plan_price_question", "reactivate_and_restart"]
    with FakeOpenAIServer() as server:
        args = [
            "run",
            "--plugin",
            "mock",
            "--plugin",
            "realtime",
            "--plugin",
            "voice",
            "--plugin",
            "interaction",
            "--plugin",
            "llm",
            "--mode",
            "full-duplex",
            "--agent",
            "voice-cascade",
            "--agent-model",
            "m",
            "--agent-base-url",
            server.base_url,
            "--agent-api-key-env",
            "CASCADE_TEST_KEY",
            "--user",
            "scripted",
            "--speech-complexity",
            level,
            "--db",
            str(tmp_path / f"{level}.db"),
            "--no-baseline",
            *(a for t in tasks for a in ("--task-id", t)),
            "--format",
            "json",
        ]
        result = subprocess.run(
            [sys.executable, "-m", "bench_kernel", *args], env={**os.environ, "CASCADE_TEST_KEY": "k"}, capture_output=True, text=True, timeout=600
        )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.mark.skipif(
    not all(_installed(n) for n in ("bench_mock", "bench_interaction", "bench_llm")),
    reason="needs bench-mock, bench-interaction and bench-llm installed",
)
def test_a_cascade_run_reports_interaction_metrics_and_a_word_error_rate_that_noise_raises(tmp_path: Path) -> None:
    control, regular = cascade_run(tmp_path, "control"), cascade_run(tmp_path, "regular")
    for report in (control, regular):
        # Every conversation completes (the echoing model solves nothing, so rewards are not the point here).
        assert report["terminations"] == {"user_stop": 3} and report["infrastructure_errors"] == 0
        names = set(report["metrics"])
        assert any("latency" in n for n in names) and any("interrupt" in n for n in names), names
    wer = "realtime:realtime_asr_wer"
    assert regular["metrics"][wer]["value"] > control["metrics"][wer]["value"]
    [section] = [s for s in regular["sections"] if s["name"] == "interaction"]
    [table] = [t for t in section["tables"] if t["title"] == "Per conversation"]
    column = table["headers"].index("effects applied")
    assert [row[table["headers"].index("speech complexity")] for row in table["rows"]] == ["regular"] * 3
    assert all("telephony" in row[column] for row in table["rows"])
