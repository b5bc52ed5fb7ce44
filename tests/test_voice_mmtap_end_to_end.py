"""mm-tap end to end: a paired voice run with the listening oracle and the byte-coded engines of bench-voice's tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench_kernel import ModelConfig, RunConfig, get_plugin_manager, run
from bench_kernel.testing import cli


def voice_test_engines() -> Any:
    """bench-voice's test engines (speech that carries the text's bytes, so noise garbles it like real speech)."""
    import importlib.util
    import sys

    if "voice_test_engines" not in sys.modules:
        source = Path(__file__).parents[1] / "plugins" / "voice" / "tests" / "conftest.py"
        spec = importlib.util.spec_from_file_location("voice_test_engines", source)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules["voice_test_engines"]


def figures(db: Path, run_id: str) -> dict[str, float | None]:
    report = CliRunner().invoke(cli, ["report", run_id, "--db", str(db), "--format", "json"])
    document = json.loads(report.output[report.output.index("{") :])
    return {
        row[0]: row[1] for section in document["sections"] if section["plugin"] == "mmtap" for table in section["tables"] for row in table["rows"]
    }


def test_a_noisy_paired_run_gets_every_figure_and_a_composite(tmp_path: Path) -> None:
    engines = voice_test_engines()
    models = {"tts": ModelConfig(backend="byte-tts", model="bytes"), "asr": ModelConfig(backend="byte-asr", model="bytes")}
    plugins = get_plugin_manager(["telecom", "voice", "mmtap"], extra=[("bytes", engines.BytePlugin())])
    config = RunConfig(
        domain="telecom",
        agent="listening-oracle",
        channel="voice",
        models=models,
        baseline=False,
        num_tasks=4,
        paired=True,
        channel_options={"snr_db": 3},
    )
    summary = run(config, tmp_path / "r.db", plugins=plugins)
    found = figures(tmp_path / "r.db", summary.run_id)
    assert found["MRS"] is not None and found["TO"] is not None and found["pass^1"] is not None
    assert found["CFA (micro)"] is not None and 0.0 <= found["CFA (micro)"] <= 1.0
    assert found["mm-tap"] is not None and 0.0 <= found["mm-tap"] <= 1.5


def test_llm_agent_and_user_over_the_voice_channel_against_a_local_openai_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The LLM roles through the real HTTP path, the user's words through (byte-coded) speech: every role is ledgered."""
    from bench_kernel.testing import FakeOpenAIServer, Reply

    engines = voice_test_engines()

    def world(body: dict) -> Reply:
        if body.get("tools") and any(t["function"]["name"] == "change_plan" for t in body["tools"]):
            done = sum(1 for m in body["messages"] if m["role"] == "tool")
            if done == 0:
                return Reply.tool_call("find_customer_by_email", {"email": "ada.okafor@example.net"})
            if done == 1:
                return Reply.tool_call("change_plan", {"customer_id": "C-1001", "plan_id": "fiber-1000"})
            return Reply.text("Done: you are now on Fiber 1000.")
        spoken = [m for m in body["messages"] if m["role"] == "assistant"]
        return Reply.text("Please move me to Fiber 1000. My email is ada.okafor@example.net." if not spoken else "Thanks. ###STOP###")

    key = "sk-voice-test-0123456789"
    monkeypatch.setenv("FAKE_VOICE_KEY", key)
    with FakeOpenAIServer(world, api_key=key) as server:
        llm = {
            role: ModelConfig(backend="openai", model="fake", base_url=server.base_url, api_key_env="FAKE_VOICE_KEY") for role in ("agent", "user")
        }
        models = {**llm, "tts": ModelConfig(backend="byte-tts", model="bytes"), "asr": ModelConfig(backend="byte-asr", model="bytes")}
        plugins = get_plugin_manager(["mock", "voice", "llm", "openai"], extra=[("bytes", engines.BytePlugin())])
        summary = run(
            RunConfig(domain="mock", agent="llm-fc", user="llm-user", channel="voice", models=models, baseline=False, task_ids=["upgrade_by_email"]),
            tmp_path / "r.db",
            plugins=plugins,
        )
    from bench_kernel import Store

    store = Store(tmp_path / "r.db")
    try:
        [row] = store.conversations(summary.run_id)
        roles = {r["role"] for r in store.db.query("select role from llm_calls where run_id = ?", [summary.run_id])}
        turns = [e for e in store.conversation_events(row["id"]) if e["kind"] == "voice.turn"]
    finally:
        store.close()
    assert row["reward"] == 1.0 and row["termination_reason"] == "user_stop"
    assert {"agent", "user", "tts", "asr"} <= roles
    assert turns and json.loads(turns[0]["data_json"])["heard"].startswith("Please move me to Fiber 1000.")


def test_a_sweep_gets_its_mm_tap_figures_per_noise_level(tmp_path: Path) -> None:
    engines = voice_test_engines()
    models = {"tts": ModelConfig(backend="byte-tts", model="bytes"), "asr": ModelConfig(backend="byte-asr", model="bytes")}
    plugins = get_plugin_manager(["telecom", "voice", "mmtap"], extra=[("bytes", engines.BytePlugin())])
    config = RunConfig(
        domain="telecom",
        agent="listening-oracle",
        channel="voice",
        models=models,
        baseline=False,
        num_tasks=3,
        paired=True,
        sweep={"snr_db": [60, -10]},
    )
    summary = run(config, tmp_path / "r.db", plugins=plugins)
    found = figures(tmp_path / "r.db", summary.run_id)
    assert found["MRS"] == 1.0 and found["MRS [snr_db=-10]"] < 1.0
    assert found["mm-tap"] > found["mm-tap [snr_db=-10]"]


def _labelling_judge(agrees: bool) -> Any:
    """A judge server's responder: labels every numbered message, saying `agrees` as told (so two judges split on it)."""
    import re

    from bench_kernel.testing import Reply

    def answer(body: dict) -> Reply:
        labels = []
        for index, speaker in re.findall(r"^\[(\d+)\] (agent|customer):", body["messages"][-1]["content"], re.M):
            if speaker == "agent":
                labels.append({"index": int(index), "asks_repeat": False, "asks_confirmation": False, "redundant": False})
            else:
                labels.append({"index": int(index), "restates": False, "agrees": agrees})
        return Reply.text(json.dumps({"labels": labels}))

    return answer


def test_two_judges_label_the_messages_and_the_report_says_how_they_agree(tmp_path: Path) -> None:
    from bench_kernel import Store
    from bench_kernel.testing import FakeOpenAIServer

    engines = voice_test_engines()
    with FakeOpenAIServer(_labelling_judge(True)) as first, FakeOpenAIServer(_labelling_judge(False)) as second:
        models = {
            "tts": ModelConfig(backend="byte-tts", model="bytes"),
            "asr": ModelConfig(backend="byte-asr", model="bytes"),
            "mmtap-judge": ModelConfig(backend="openai", model="judge-a", base_url=first.base_url),
            "mmtap-judge-2": ModelConfig(backend="openai", model="judge-b", base_url=second.base_url),
        }
        plugins = get_plugin_manager(["telecom", "voice", "mmtap", "openai"], extra=[("bytes", engines.BytePlugin())])
        summary = run(
            RunConfig(domain="telecom", agent="listening-oracle", channel="voice", models=models, baseline=False, num_tasks=2),
            tmp_path / "r.db",
            plugins=plugins,
        )
        asked = len(first.completions), len(second.completions)
    found = figures(tmp_path / "r.db", summary.run_id)
    assert asked == (2, 2)  # one labelling request per conversation and judge
    assert found["judge agreement: conversations (mmtap-judge vs mmtap-judge-2)"] == 2
    assert found["judge agreement: asks_repeat (observed)"] == 1.0
    assert found["judge agreement: agrees (observed)"] == 0.0
    assert found["judge agreement: conversations with a split verdict"] == 2
    store = Store(tmp_path / "r.db")
    try:
        roles = {r["role"] for r in store.db.query("select role from llm_calls where run_id = ?", [summary.run_id])}
    finally:
        store.close()
    assert {"mmtap-judge", "mmtap-judge-2"} <= roles


def test_a_judge_that_answers_garbage_is_a_recorded_metric_error_and_the_run_goes_on(tmp_path: Path) -> None:
    from bench_kernel import Store
    from bench_kernel.testing import FakeOpenAIServer, Reply

    engines = voice_test_engines()
    with FakeOpenAIServer(lambda body: Reply.text("All of them look fine to me.")) as judge:
        models = {
            "tts": ModelConfig(backend="byte-tts", model="bytes"),
            "asr": ModelConfig(backend="byte-asr", model="bytes"),
            "mmtap-judge": ModelConfig(backend="openai", model="judge", base_url=judge.base_url),
        }
        plugins = get_plugin_manager(["telecom", "voice", "mmtap", "openai"], extra=[("bytes", engines.BytePlugin())])
        summary = run(
            RunConfig(domain="telecom", agent="listening-oracle", channel="voice", models=models, baseline=False, num_tasks=1),
            tmp_path / "r.db",
            plugins=plugins,
        )
    store = Store(tmp_path / "r.db")
    try:
        [row] = store.conversations(summary.run_id)
        errors = [r for r in store.db.query("select * from metric_values where run_id = ? and plugin = 'mmtap'", [summary.run_id]) if r.get("error")]
    finally:
        store.close()
    assert row["reward"] == 1.0
    assert errors and "labels" in errors[0]["error"]
