"""The listening oracle: it passes on a clean channel, fails on a noisy one for a reason the store names, and a plain
oracle (which never listens) is unaffected by noise."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from bench_voice.fields import fields_in, heard_values

from bench_kernel import ModelConfig, RunConfig, Store, get_plugin_manager, run


def telecom_voice(tmp_path: Path, models: dict[str, ModelConfig], plugin: object, agent: str, **options: Any) -> list[dict[str, Any]]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    plugins = get_plugin_manager(["telecom", "voice"], extra=[("bytes", plugin)])
    config = RunConfig(domain="telecom", agent=agent, channel="voice", models=models, baseline=False, num_tasks=4, channel_options=options or None)
    summary = run(config, tmp_path / "r.db", plugins=plugins)
    store = Store(tmp_path / "r.db")
    try:
        rows = store.conversations(summary.run_id)
        cfa = {
            r["conversation_id"]: r
            for r in store.db.query("select conversation_id, value, details_json from metric_values where plugin = 'voice' and metric = 'voice.cfa'")
        }
        return [{**r, "cfa": cfa[r["id"]]} for r in rows]
    finally:
        store.close()


def test_clean_speech_passes_and_noise_fails_with_the_misheard_field(tmp_path: Path, byte_models: dict, byte_plugin: object) -> None:
    clean = telecom_voice(tmp_path / "clean", byte_models, byte_plugin, "listening-oracle")
    assert [r["reward"] for r in clean] == [1.0] * 4 and all(r["cfa"]["value"] == 1.0 for r in clean)
    noisy = telecom_voice(tmp_path / "noisy", byte_models, byte_plugin, "listening-oracle", snr_db=-10)
    assert sum(r["reward"] for r in noisy) < 4
    failed = [r for r in noisy if r["reward"] == 0.0]
    assert failed and all(json.loads(r["cfa"]["details_json"])["misheard"][0]["kind"] == "phone" for r in failed)


def test_the_plain_oracle_never_listens_so_noise_costs_it_nothing(tmp_path: Path, byte_models: dict, byte_plugin: object) -> None:
    noisy = telecom_voice(tmp_path, byte_models, byte_plugin, "oracle", snr_db=-10)
    assert [r["reward"] for r in noisy] == [1.0] * 4


@pytest.mark.parametrize(
    ("said", "heard", "kind", "found"),
    [
        ("my phone is 612-555-0142", "my phone is six one two, five five five, oh one four two", "phone", "6125550142"),
        ("email chen.tanaka627@example.org", "email Chen.tanaka627 at example dot org", "email", "chen.tanaka627@example.org"),
        ("cancel order #R5893512", "cancel order number are 5 8 9 3 5 1 2", "order_id", "#R5893512"),
        ("cancel order #R5893512", "cancel order number R, 5, 8, 9, 3, 5, 1, 2, because", "order_id", "#R5893512"),
        ("email kofi.varga742@example.org", "email kofi.varga 742 at example.org.", "email", "kofi.varga742@example.org"),
    ],
)
def test_spoken_forms_of_fields_are_read_back(said: str, heard: str, kind: str, found: str) -> None:
    [field] = fields_in(said)
    assert field.kind == kind and field.canonical == found
    assert heard_values(kind, heard) == [found]


def test_order_ids_are_read_character_by_character_with_pauses() -> None:
    from bench_voice.fields import for_speech

    assert for_speech("Cancel #W2378156 today.") == "Cancel number W, 2, 3, 7, 8, 1, 5, 6, today."


def test_a_paired_run_reports_modality_robustness_and_turn_overhead(tmp_path: Path, byte_models: dict, byte_plugin: object) -> None:
    from click.testing import CliRunner

    from bench_kernel.testing import cli

    plugins = get_plugin_manager(["telecom", "voice"], extra=[("bytes", byte_plugin)])
    config = RunConfig(
        domain="telecom",
        agent="listening-oracle",
        channel="voice",
        models=byte_models,
        baseline=False,
        num_tasks=4,
        paired=True,
        channel_options={"snr_db": -10},
    )
    summary = run(config, tmp_path / "r.db", plugins=plugins)
    store = Store(tmp_path / "r.db")
    try:
        arms = {r["arm"] for r in store.conversations(summary.run_id)}
    finally:
        store.close()
    assert arms == {"agent", "text"}
    report = CliRunner().invoke(cli, ["report", summary.run_id, "--db", str(tmp_path / "r.db"), "--format", "json"])
    assert report.exit_code == 0, report.output
    document = json.loads(report.output[report.output.index("{") :])  # after a note that the test's engine plugin is not installed
    figures = {
        row[0]: row[1] for section in document["sections"] if section["plugin"] == "voice" for table in section["tables"] for row in table["rows"]
    }
    assert figures["pass^1 text"] == 1.0 and figures["MRS (pass^1 voice / text)"] < 1.0  # noise costs the listening agent
    assert figures["TO (agent turns voice / text - 1)"] > 0  # it asked callers to repeat


def test_a_noise_sweep_in_one_run_reports_each_level(tmp_path: Path, byte_models: dict, byte_plugin: object) -> None:
    from click.testing import CliRunner

    from bench_kernel.testing import cli

    plugins = get_plugin_manager(["telecom", "voice"], extra=[("bytes", byte_plugin)])
    config = RunConfig(
        domain="telecom", agent="listening-oracle", channel="voice", models=byte_models, baseline=False, num_tasks=3, sweep={"snr_db": [60, -10]}
    )
    summary = run(config, tmp_path / "r.db", plugins=plugins)
    store = Store(tmp_path / "r.db")
    try:
        arms = sorted({r["arm"] for r in store.conversations(summary.run_id)})
    finally:
        store.close()
    assert arms == ["agent", "snr_db=-10"]
    report = CliRunner().invoke(cli, ["report", summary.run_id, "--db", str(tmp_path / "r.db"), "--format", "json"])
    document = json.loads(report.output[report.output.index("{") :])
    figures = {
        row[0]: row[1] for section in document["sections"] if section["plugin"] == "voice" for table in section["tables"] for row in table["rows"]
    }
    assert figures["pass^1 at 60 dB"] == 1.0 and figures["pass^1 at -10 dB"] < 1.0
    assert figures["cfa at 60 dB"] > figures["cfa at -10 dB"]


def test_a_task_declares_critical_values_beyond_the_detected_ones() -> None:
    from bench_voice.fields import accuracy

    said = fields_in("You are Chen Tanaka and the refund is 56.20 dollars.", ["Chen Tanaka", "56.20"])
    assert [(f.kind, f.value) for f in said] == [("declared", "Chen Tanaka"), ("declared", "56.20")]
    assert accuracy(said, "you are chen tanaka and the refund is 56.20 dollars")[:2] == (2, 2)
    right, total, misses = accuracy(said, "you are chin tanaka and the refund is 56 stars")
    assert (right, total) == (0, 2) and [m["meant"] for m in misses] == ["Chen Tanaka", "56.20"]
