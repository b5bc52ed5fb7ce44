"""Broken and hostile input: each case seen in issue 13 is one clean error naming the file and the path."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from plugin_factory import needs_installed

from bench_kernel.cli import cli
from bench_kernel.errors import ConfigError, TaskFileError
from bench_kernel.run.runconfig import build_run_config, read_run_file
from bench_kernel.serialization import MAX_PROBLEMS, check_plain_data, read_json
from bench_kernel.tasks.domain import DomainOptions, read_tasks
from bench_kernel.tasks.loading import load_tasks


def task(**fields: Any) -> dict[str, Any]:
    return {"id": "t1", "user_scenario": {"instructions": "Say hello."}, **fields}


def write(tmp_path: Path, content: bytes | str, name: str = "tasks.json") -> Path:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


# --------------------------------------------------------------------------- task files

TASK_FILE_CASES = [
    pytest.param('["x"]', "expected an object, got a string 'x' @ $[0]", id="string-task"),
    pytest.param("[[]]", "expected an object, got a list @ $[0]", id="list-task"),
    pytest.param(b'[{"id": "\xff"}]', "not UTF-8 text: byte 0xff at line 1", id="invalid-utf8"),
    pytest.param("[" * 5000 + "]" * 5000, "nested too deeply", id="5000-deep"),
    pytest.param(json.dumps([task(annotations=json.loads("[" * 150 + "]" * 150))]), "nested more than 100 levels", id="150-deep"),
    pytest.param(json.dumps([task(id="\ud800")]), "lone surrogate (invalid Unicode) in a string @ $[0].id", id="lone-surrogate"),
    pytest.param("[]", "no tasks: the list is empty @ $", id="empty-list"),
    pytest.param('{"tasks": []}', "no tasks: the list is empty @ $.tasks", id="empty-tasks"),
    pytest.param(json.dumps([task(id=None)]), "expected a string, got null @ $[0].id", id="null-id"),
    pytest.param(
        json.dumps([task(evaluation_criteria={"communicate_info": "abc"})]),
        "expected a list, got a string 'abc' @ $[0].evaluation_criteria.communicate_info",
        id="string-as-list",
    ),
    pytest.param(
        json.dumps([task(evaluation_criteria={"env_assertions": [{"env_type": "assistant", "func_name": "f", "assert_value": "false"}]})]),
        "expected true or false, got a string 'false' @ $[0].evaluation_criteria.env_assertions[0].assert_value",
        id="string-as-bool",
    ),
    pytest.param(
        json.dumps([task(evaluation_criteria={"actions": [{"action_id": 1, "name": "f"}]})]),
        "expected a string, got an integer 1 @ $[0].evaluation_criteria.actions[0].action_id",
        id="int-as-string",
    ),
    pytest.param(json.dumps([task(attributes=["a"])]), "expected an object, got a list @ $[0].attributes", id="list-as-dict"),
    pytest.param('[{"id": "t", "x": NaN}]', "NaN is not a JSON number", id="nan"),
]


@pytest.mark.parametrize(("content", "message"), TASK_FILE_CASES)
def test_broken_task_files_are_one_clean_error_naming_file_and_path(tmp_path: Path, content: bytes | str, message: str) -> None:
    path = write(tmp_path, content)
    with pytest.raises(TaskFileError) as caught:
        load_tasks(path)
    assert message in str(caught.value)
    assert str(caught.value).startswith(str(path))


def test_a_split_file_whose_ids_are_a_string_is_refused_not_split_into_characters(tmp_path: Path) -> None:
    tasks = write(tmp_path, json.dumps([task(id="a"), task(id="b")]))
    write(tmp_path, json.dumps({"train": "ab"}), "split_tasks.json")
    with pytest.raises(TaskFileError, match=r"split_tasks.json: expected a list, got a string 'ab' @ \$\['train'\]"):
        read_tasks(tasks, DomainOptions(split="train"))


def test_a_directory_as_task_file_is_a_clean_error(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="is a directory, not a file"):
        load_tasks(tmp_path)


def test_a_huge_wrong_list_costs_bounded_errors_and_memory(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps([task(evaluation_criteria={"actions": [1] * 100_000})]))
    tracemalloc.start()
    try:
        with pytest.raises(TaskFileError) as caught:
            load_tasks(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(caught.value.problems) <= MAX_PROBLEMS + 1
    assert "stopped after 20 problems (99980 more items not checked)" in str(caught.value)
    assert peak < 50_000_000  # was one error per item (hundreds of MB for a few MB of input)


def test_many_broken_tasks_stop_after_a_bounded_number_of_problems(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps([{"id": None, "user_scenario": {"instructions": "x"}}] * 10_000))
    with pytest.raises(TaskFileError) as caught:
        load_tasks(path)
    assert len(caught.value.problems) == MAX_PROBLEMS + 1
    assert "9980 more tasks not checked" in caught.value.problems[-1]


@needs_installed("mock")
def test_bench_tasks_refuses_an_empty_task_file(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["tasks", "-p", "mock", "--tasks-file", str(write(tmp_path, "[]"))])
    assert result.exit_code == 1, result.output
    assert "no tasks: the list is empty" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


@needs_installed("mock")
def test_a_lone_surrogate_is_refused_by_bench_tasks_before_bench_run_meets_it(tmp_path: Path) -> None:
    path = write(tmp_path, json.dumps([task(id="\udcff")]))
    result = CliRunner().invoke(cli, ["tasks", "-p", "mock", "--tasks-file", str(path)])
    assert result.exit_code == 1 and "lone surrogate" in result.output, result.output


# --------------------------------------------------------------------------- run files and options

RUN_FILE_CASES = [
    pytest.param("[run]\ntrials = -1\n", "trials must be at least 1, not -1 @ $.run.trials", id="negative-trials"),
    pytest.param("[run]\ntrials = 100000000000\n", "trials must be at most 10000", id="huge-trials"),
    pytest.param("[run]\nmax_cost = -5.0\n", "max_cost must be a finite number of USD, 0 or more, not -5.0 @ $.run.max_cost", id="negative-cost"),
    pytest.param("[run]\nconversation_timeout_s = nan\n", "@ $.run.conversation_timeout_s", id="nan-timeout"),
    pytest.param("[run]\nrun_timeout_s = -inf\n", "@ $.run.run_timeout_s", id="negative-infinite-timeout"),
    pytest.param("[run]\nseed = 9223372036854775808\n", "seed must be a 64-bit signed integer", id="seed-2^63"),
    pytest.param("[run]\nconcurrency = 1000000000\n", "concurrency must be at most 4096", id="huge-concurrency"),
    pytest.param("[run]\nbaseline = 'false'\n", "expected true or false, got a string 'false' @ $.run.baseline", id="string-bool"),
    pytest.param("[run]\ntask_ids = 'abc'\n", "expected a list, got a string 'abc' @ $.run.task_ids", id="string-list"),
    pytest.param("run = 3\n", "[run] must be a table @ $.run", id="run-not-a-table"),
    pytest.param("[models]\nagent = 3\n", "[models.agent] must be a table @ $.models.agent", id="model-not-a-table"),
    pytest.param(
        "[models.agent]\nmodel = 'm'\nbase_url = 'http://127.0.0.1:99999/v1'\n",
        "Port out of range 0-65535): 'http://127.0.0.1:99999/v1' @ $.models.agent.base_url",
        id="port-99999",
    ),
    pytest.param("[models.agent]\nmodel = 'm'\nbase_url = 'localhost:8000'\n", "expected an http(s):// or ws(s):// URL", id="url-without-scheme"),
    pytest.param(
        "[models.agent]\nmodel = 'm'\nmax_concurrency = 1000000000\n",
        "max_concurrency must be between 1 and 4096, not 1000000000 @ $.models.agent.max_concurrency",
        id="huge-pool",
    ),
    pytest.param("[models.agent]\nmodel = 'm'\ntimeout_s = nan\n", "@ $.models.agent.timeout_s", id="nan-model-timeout"),
    pytest.param("[models.agent]\nmodel = 'm'\nmax_retries = -1\n", "@ $.models.agent.max_retries", id="negative-retries"),
    pytest.param(
        "[models.agent]\nmodel = 'm'\ntimeout_s = 'x'\n", "expected a number, got a string 'x' @ $.models.agent.timeout_s", id="string-number"
    ),
    pytest.param("[prices]\nm = [1.0, nan]\n", "@ $.prices.m", id="nan-price"),
    pytest.param("[prices]\nm = ['1', 2]\n", "@ $.prices.m", id="string-price"),
    pytest.param(b"[run]\n\xff = 1\n", "not UTF-8 text: byte 0xff at line 2", id="invalid-utf8"),
    pytest.param('[run]\nsplit = "\\udcff"\n', "not valid TOML", id="surrogate-escape"),
    pytest.param("a = " + "[" * 5000 + "]" * 5000 + "\n", "", id="5000-deep"),
]


@pytest.mark.parametrize(("text", "message"), RUN_FILE_CASES)
def test_broken_run_files_are_one_clean_error_naming_file_and_path(tmp_path: Path, text: str | bytes, message: str) -> None:
    path = write(tmp_path, text, "run.toml")
    with pytest.raises(ConfigError) as caught:
        build_run_config(read_run_file(path), {}, source=str(path))
    assert message in str(caught.value)
    assert str(path) in str(caught.value)


def test_a_directory_as_tasks_file_in_a_run_file_names_the_setting(tmp_path: Path) -> None:
    path = write(tmp_path, f"[run]\ntasks_file = {json.dumps(str(tmp_path))}\n", "run.toml")
    with pytest.raises(ConfigError, match=r"is a directory, not a file @ \$\.run\.tasks_file"):
        build_run_config(read_run_file(path), {}, source=str(path))


def test_a_directory_as_run_file_is_a_clean_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="is a directory"):
        read_run_file(tmp_path)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--seed", str(2**63)], "seed must be a 64-bit signed integer"),
        (["--seed", str(-(2**63) - 1)], "seed must be a 64-bit signed integer"),
        (["--timeout", "nan"], "conversation_timeout_s must be a positive, finite number of seconds"),
        (["--run-timeout", "inf"], "run_timeout_s must be a positive, finite number of seconds"),
        (["--max-cost", "nan"], "max_cost"),
        (["--task-id", "\udcff"], "lone surrogate (invalid Unicode) in a string @ $.run.task_ids[0]"),
        (["--agent-base-url", "http://127.0.0.1:99999/v1", "--agent-model", "m"], "Port out of range"),
    ],
)
def test_command_line_options_get_the_run_file_rules(tmp_path: Path, args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["run", "-p", "mock", "--db", str(tmp_path / "b.db"), "--format", "none", *args])
    assert result.exit_code != 0
    assert message in result.output, result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)
    assert not (tmp_path / "b.db").exists()  # refused before anything is stored


# --------------------------------------------------------------------------- read_json's fast path

READ_JSON_CASES = [
    pytest.param('{"a": [1e999]}', id="overflow-to-inf"),
    pytest.param('{"a": -1e999, "b": 1.5}', id="overflow-to-minus-inf"),
    pytest.param('{"\\ud800": 1}', id="lone-surrogate-key"),
    pytest.param('["ok", "\\uDFFF"]', id="lone-surrogate-upper-case"),
    pytest.param("[" * 101 + "]" * 101, id="101-deep"),
    pytest.param('{"a": ' + "[" * 100 + "]" * 100 + "}", id="101-deep-in-object"),
]


@pytest.mark.parametrize("content", READ_JSON_CASES)
def test_read_json_finds_what_the_full_check_finds(tmp_path: Path, content: str) -> None:
    # read_json walks the whole data only when the text could hold a problem: the problems are the full check's.
    path = write(tmp_path, content, "data.json")
    expected = check_plain_data(json.loads(content))
    assert expected
    with pytest.raises(TaskFileError) as caught:
        read_json(path)
    assert all(problem in str(caught.value) for problem in expected)


@pytest.mark.parametrize("content", ['{"emoji": "\\ud83d\\ude00", "x": 1e300}', "[" * 100 + "]" * 100, '{"a": 1.5e-300}'])
def test_read_json_takes_plain_data_with_escapes_and_large_numbers(tmp_path: Path, content: str) -> None:
    assert read_json(write(tmp_path, content, "data.json")) == json.loads(content)
