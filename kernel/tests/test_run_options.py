"""Every run option is declared once, on its RunConfig field: `bench run` offers it and a run file's key sets the same."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs
import click
import pytest
from click.testing import CliRunner

from bench_kernel.cli import cli
from bench_kernel.modelhub.hub import ROLES
from bench_kernel.run.config import IDENTITY, MODEL_OPTIONS, OPTIONS, RUN_OPTIONS, RunConfig
from bench_kernel.run.runconfig import build_run_config, option_overrides, read_run_file

FILE, DIRECTORY = "<file>", "<dir>"
SAMPLES = {
    "plugins": ["-p", "mock"],
    "domain": ["-d", "mock"],
    "split": ["--split", "test"],
    "tasks_file": ["--tasks-file", FILE],
    "data_dir": ["--data-dir", DIRECTORY],
    "retrieval": ["--retrieval", "bm25"],
    "retrieval_options": ["--retrieval-option", "top_k=3"],
    "agent": ["--agent", "llm-fc"],
    "user": ["--user", "llm"],
    "judge": ["--judge", "llm"],
    "judge_panel": ["--judge-panel", "3"],
    "judge_retries": ["--judge-retries", "0"],
    "mode": ["--mode", "no-user"],
    "tick_ms": ["--mode", "full-duplex", "--tick-ms", "100"],
    "max_seconds": ["--mode", "full-duplex", "--max-duration", "60"],
    "speech_complexity": ["--mode", "full-duplex", "--speech-complexity", "regular"],
    "channel": ["--channel", "voice"],
    "paired": ["--paired"],
    "snr_db": ["--snr", "5", "--snr", "-2"],
    "channel_options": ["--channel-option", "snr_db=5"],
    "keep_audio": ["--keep-audio", DIRECTORY],
    "exposure": ["--exposure", "persona"],
    "profile": ["--profile", DIRECTORY],
    "persona": ["--persona", "EASY_1"],
    "persona_file": ["--persona-file", FILE],
    "shifts": ["--shifts", "2"],
    "shift_plan": ["--shift-plan", FILE],
    "turns_per_goal": ["--turns-per-goal", "2"],
    "trials": ["--trials", "3"],
    "task_ids": ["--task-id", "a", "--task-id", "b"],
    "num_tasks": ["--num-tasks", "2"],
    "seed": ["--seed", "7"],
    "max_steps": ["--max-steps", "20"],
    "max_errors": ["--max-errors", "2"],
    "conversation_timeout_s": ["--timeout", "30"],
    "run_timeout_s": ["--run-timeout", "600"],
    "concurrency": ["--concurrency", "4"],
    "workers": ["--workers", "2"],
    "executor": ["--executor", "ray"],
    "executor_options": ["--executor-option", "address=auto"],
    "max_in_flight": ["--max-in-flight", "8"],
    "baseline": ["--no-baseline"],
    "allow_broken_tasks": ["--allow-broken-tasks"],
    "exclude_flagged": ["--exclude-flagged", "a, b", "--exclude-flagged", "c"],
    "run_id": ["--run-id", "mine"],
    "retry_attributed": ["--retry-attributed", "judge"],
    "agent_options": ["--agent-option", "url=http://127.0.0.1:9"],
    "user_options": ["--user-option", 'style={"terse": true}'],
    "models": ["--model-option", "judge-2.model=m", "--model-option", "judge-2.timeout_s=5"],
    "cache": ["--cache"],
    "speech_cache": ["--no-speech-cache"],
    "max_cost": ["--max-cost", "1.5"],
    "prices": ["--price", "m=1,2"],
}
"""A command line for each run option: a new option needs its sample here, so the run-file test covers it."""


def test_every_field_declares_its_options_once() -> None:
    fields = attrs.fields(RunConfig)
    assert [f.name for f in fields if not f.metadata.get(OPTIONS)] == []
    assert {f.metadata[IDENTITY] for f in fields} <= {"always", "when set", "never"}
    flags = [flag for opt in RUN_OPTIONS for flag in opt.flags]
    assert len(flags) == len(set(flags))
    names = [opt.dest for opt in RUN_OPTIONS]
    assert len(names) == len(set(names)) and set(names) == set(SAMPLES)


def test_bench_run_offers_the_declared_options_and_declares_no_other_setting() -> None:
    params = {p.name for p in cli.commands["run"].params if p.expose_value}  # plugins' executor options expose none
    roles = {f"{role}_{key}" for role in ROLES for key in MODEL_OPTIONS}
    assert params == {opt.dest for opt in RUN_OPTIONS} | roles | {"config_file", "db_path", "fmt", "progress_mode"}
    shown = CliRunner().invoke(cli, ["run", "--help"], terminal_width=200).output
    assert [flag for opt in RUN_OPTIONS for flag in opt.flags if f"{flag} " not in shown and f"{flag}," not in shown] == []


def test_the_workers_option_shows_its_values_as_typed() -> None:
    shown = CliRunner().invoke(cli, ["run", "--help"], terminal_width=200).output
    assert "--workers auto|N" in shown and "AUTO|N" not in shown  # click upper-cases a type's name unless told


def toml(value: Any) -> str:
    """A TOML value (the test's own small writer: the standard library reads TOML only)."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml(v) for v in value) + "]"
    return json.dumps(value)


def run_file(overrides: dict[str, Any]) -> str:
    """The run file holding what `overrides` set: [run] keys, [models.ROLE] tables and [prices]."""
    lines = ["[run]", *(f"{key} = {toml(value)}" for key, value in overrides.items() if key not in ("models", "prices"))]
    for role, settings in overrides["models"].items():
        lines += [f'[models."{role}"]', *(f"{key} = {toml(value)}" for key, value in settings.items())]
    lines += ["[prices]", *(f'"{model}" = {toml(attrs.astuple(price))}' for model, price in overrides.get("prices", {}).items())]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_each_option_and_its_run_file_key_set_the_same_configuration(tmp_path: Path, name: str) -> None:
    (tmp_path / "file.json").write_text("{}")
    paths = {FILE: str(tmp_path / "file.json"), DIRECTORY: str(tmp_path)}
    ctx = cli.commands["run"].make_context("run", [paths.get(arg, arg) for arg in SAMPLES[name]])
    given = {k: v for k, v in ctx.params.items() if ctx.get_parameter_source(k) is not click.core.ParameterSource.DEFAULT}
    overrides = option_overrides(given)
    from_options = build_run_config({}, overrides)
    path = tmp_path / "run.toml"
    path.write_text(run_file(overrides))
    assert build_run_config(read_run_file(path), {}, source=str(path)) == from_options
    assert from_options != build_run_config({}, {})  # the option does set something


def test_a_bad_key_value_option_names_the_option() -> None:
    result = CliRunner().invoke(cli, ["run", "--agent-option", "nothing"])
    assert result.exit_code == 2 and "Invalid value for '--agent-option': expected KEY=VALUE, got 'nothing'" in result.output
