"""Fuzzing the kernel's input boundaries: task files, TOML run files, command-line options and tool arguments.

Whatever comes in, the outcome is a value or one bench error naming the file and the JSON/TOML path;
never a traceback. The default profile is small (a few seconds in the default test command);
BENCH_FUZZ=long runs many more examples (`bash scripts/dev.sh test-extras` sets it).
"""

from __future__ import annotations

import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any

import attrs
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from toy_domain import TASKS, ToyDomain

from bench_kernel.cli import cli
from bench_kernel.errors import BenchError, ConfigError, TaskFileError
from bench_kernel.run.runconfig import build_run_config, read_run_file, run_config_problems
from bench_kernel.run.runner import RunConfig
from bench_kernel.schema.messages import ToolCall, ToolMessage
from bench_kernel.serialization import canonical_json, unstructure
from bench_kernel.tasks.domain import DomainOptions, build_environment
from bench_kernel.tasks.loading import load_tasks

LONG = os.environ.get("BENCH_FUZZ") == "long"
FUZZ = settings(
    max_examples=3000 if LONG else 30,
    deadline=None,
    derandomize=not LONG,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FILE_LEVEL = re.compile(r"not valid JSON|not UTF-8 text|nested too deeply|is not a JSON number|is a directory|file not found")
"""Problems that concern the whole file (their message says where: line, column or offset)."""
TOML_LEVEL = re.compile(r"not valid TOML: .*\(at (line \d+, column \d+|end of document)\)|not UTF-8 text|nested too deeply")

# --------------------------------------------------------------------------- strategies

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["", "\ud800", "DB", "assistant", "user", "false", "None", "x" * 5000]),
)
json_values = st.recursive(
    scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=20
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*prefix, i))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    head, rest = path[0], path[1:]
    if isinstance(value, dict):
        return {**value, head: _replace(value[head], rest, new)}
    return [_replace(v, rest, new) if i == head else v for i, v in enumerate(value)]


@st.composite
def mutated_tasks(draw: st.DrawFn) -> Any:
    """A valid task file with one value somewhere replaced by arbitrary JSON (a key may be added too)."""
    tasks = json.loads(json.dumps(TASKS[:2]))
    path = draw(st.sampled_from(_paths(tasks)))
    tasks = _replace(tasks, path, draw(json_values))
    if draw(st.booleans()) and isinstance(tasks, list) and tasks and isinstance(tasks[0], dict):
        tasks[0][draw(st.sampled_from(["id", "ticket", "attributes", "extra_field", "user_scenario"]))] = draw(json_values)
    return tasks


def _encode(data: Any, style: int) -> bytes:
    text = json.dumps(data)  # ensure_ascii: lone surrogates travel as \ud800 escapes, as they would in a file
    return [text.encode(), text.encode()[:-1], text.encode() + b"\xff", ("[" * 3000 + "]" * 3000).encode()][style]


def _assert_clean(error: BenchError, path: Path) -> None:
    assert isinstance(error, TaskFileError), error
    assert str(error).startswith(str(path))
    assert 1 <= len(error.problems) <= 21
    for problem in error.problems:
        assert " @ $" in problem or FILE_LEVEL.search(problem), problem


def _storable(obj: Any) -> None:
    canonical_json(unstructure(obj)).encode("utf-8")  # what the store writes must be valid UTF-8 JSON


# --------------------------------------------------------------------------- task files


@FUZZ
@given(data=st.one_of(mutated_tasks(), json_values), style=st.sampled_from([0, 0, 0, 1, 2, 3]))
def test_any_task_file_loads_or_is_one_clean_error(data: Any, style: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tasks.json"
        path.write_bytes(_encode(data, style))
        try:
            tasks = load_tasks(path)
        except BenchError as exc:
            _assert_clean(exc, path)
            return
    assert tasks and all(isinstance(t.id, str) for t in tasks)
    for task in tasks:
        _storable(task)


@FUZZ
@given(raw=st.binary(max_size=200))
def test_any_bytes_as_a_task_file_are_one_clean_error(raw: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "tasks.json"
        path.write_bytes(raw)
        try:
            load_tasks(path)
        except BenchError as exc:
            _assert_clean(exc, path)


# --------------------------------------------------------------------------- run files

RUN_KEYS = [f.name for f in attrs.fields(RunConfig) if f.name not in ("models", "prices")]
MODEL_KEYS = ["backend", "model", "base_url", "api_key_env", "sampling", "timeout_s", "max_concurrency", "max_retries", "options"]
toml_scalars = st.one_of(
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(),
    st.text(max_size=20),
    st.sampled_from(["http://127.0.0.1:99999/v1", "ftp://x", "/tmp", "mock"]),
)
toml_values = st.recursive(
    toml_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)), max_leaves=8
)


def _toml(value: Any) -> str:
    """TOML text of a value (inline forms only)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k)} = {_toml(v)}" for k, v in value.items()) + "}"


@st.composite
def run_files(draw: st.DrawFn) -> str:
    run = draw(st.dictionaries(st.sampled_from([*RUN_KEYS, "bogus"]), toml_values, max_size=4))
    lines = ["[run]", *(f"{k} = {_toml(v)}" for k, v in run.items())]
    for role in draw(st.lists(st.sampled_from(["agent", "user", "Bad Role"]), max_size=2, unique=True)):
        model = draw(st.dictionaries(st.sampled_from(MODEL_KEYS), toml_values, max_size=4))
        lines += [f"[models.{json.dumps(role)}]", *(f"{k} = {_toml(v)}" for k, v in model.items())]
    if draw(st.booleans()):
        lines += ["[prices]", f"m = {_toml(draw(toml_values))}"]
    if draw(st.integers(0, 9)) == 0:
        lines += [draw(st.sampled_from(["[runs]", "[[run]]", "models = 1", "[models]\nagent = 'x'"]))]
    return "\n".join(lines) + "\n"


@FUZZ
@given(text=st.one_of(run_files(), st.text(max_size=80)), tail=st.sampled_from([b"", b"\xff", b"\n[run"]))
def test_any_run_file_gives_a_valid_configuration_or_one_clean_error(text: str, tail: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.toml"
        path.write_bytes(text.encode("utf-8", "backslashreplace") + tail)
        try:
            config = build_run_config(read_run_file(path), {}, source=str(path))
        except ConfigError as exc:
            assert str(path) in str(exc)
            assert " @ $" in str(exc) or TOML_LEVEL.search(str(exc)), str(exc)
            return
    assert run_config_problems(config) == []
    assert -(2**63) <= config.seed < 2**63
    _storable(config.identity())


# --------------------------------------------------------------------------- command-line options

OPTION_VALUES = st.one_of(
    st.text(max_size=12),
    st.integers(min_value=-(2**65), max_value=2**65).map(str),
    st.sampled_from(["nan", "inf", "-1", "0", "1e309", "\udcff", "{}", "[]", "a=b", "x" * 3000]),
)


@FUZZ
@given(
    options=st.lists(
        st.tuples(
            st.sampled_from(
                [
                    "--trials",
                    "--seed",
                    "--timeout",
                    "--run-timeout",
                    "--concurrency",
                    "--max-cost",
                    "--task-id",
                    "--num-tasks",
                    "--max-steps",
                    "--split",
                    "--agent-option",
                    "--channel-option",
                    "--price",
                    "--agent-sampling",
                    "--model-option",
                    "--mode",
                    "--persona",
                ]
            ),
            OPTION_VALUES,
        ),
        max_size=3,
    )
)
def test_any_command_line_options_run_or_give_a_clean_error(options: list[tuple[str, str]]) -> None:
    args = [part for pair in options for part in pair]
    with tempfile.TemporaryDirectory() as folder:
        result = CliRunner().invoke(
            cli, ["run", "-p", "mock", "--no-baseline", "--num-tasks", "1", "--db", str(Path(folder) / "b.db"), "--format", "none", *args]
        )
    assert result.exit_code in (0, 1, 2), result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)


# --------------------------------------------------------------------------- tool arguments from agents

TOY = ToyDomain(tasks=list(TASKS)).load(DomainOptions())


@FUZZ
@given(
    name=st.sampled_from([*sorted(TOY.agent_toolkit.specs()), "missing", "__init__", "state", ""]),
    arguments=st.dictionaries(st.text(max_size=10), json_values, max_size=4),
    requestor=st.sampled_from(["assistant", "user"]),
)
def test_any_tool_arguments_give_a_tool_message_never_an_exception(name: str, arguments: dict[str, Any], requestor: str) -> None:
    env = build_environment(TOY, None)
    message = env.execute(ToolCall(id="c", name=name, arguments=arguments, requestor=requestor))  # type: ignore[arg-type]
    assert isinstance(message, ToolMessage) and isinstance(message.content, str)
    _storable(message)
