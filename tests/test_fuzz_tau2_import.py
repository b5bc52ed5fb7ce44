"""Fuzzing `bench import tau2-results` through its public command: a broken results file is a clean error, never a traceback."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from bench_kernel.testing import bench_cli

LONG = os.environ.get("BENCH_FUZZ") == "long"
FUZZ = settings(
    max_examples=500 if LONG else 5,
    deadline=None,
    derandomize=not LONG,
    database=None,
    phases=list(Phase) if LONG else [Phase.explicit, Phase.generate],  # shrinking imports costs seconds each
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
COMMANDS = bench_cli(["mock", "tau2"])
values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=10)),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=6), inner, max_size=3)),
    max_leaves=10,
)


@pytest.fixture(scope="module")
def exported() -> Any:
    """A real results file: a mock run exported in tau2's format."""
    with tempfile.TemporaryDirectory() as folder:
        db, out = Path(folder) / "b.db", Path(folder) / "r.json"
        runner = CliRunner()
        assert runner.invoke(COMMANDS, ["run", "-p", "mock", "--num-tasks", "2", "--no-baseline", "--db", str(db), "--format", "none"]).exit_code == 0
        run_id = json.loads(runner.invoke(COMMANDS, ["runs", "--db", str(db), "--format", "json"]).output)[0]["id"]
        assert runner.invoke(COMMANDS, ["export", "tau2-results", run_id, "--db", str(db), "-o", str(out)]).exit_code == 0
        return json.loads(out.read_text())


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else []
    for key, item in children:
        found += _paths(item, (*prefix, key))
    return found


def _replace(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    if isinstance(value, dict):
        return {**value, path[0]: _replace(value[path[0]], path[1:], new)}
    return [_replace(v, path[1:], new) if i == path[0] else v for i, v in enumerate(value)]


@FUZZ
@given(data=st.data())
def test_a_mutated_results_file_imports_or_is_one_clean_error(exported: Any, data: st.DataObject) -> None:
    path = data.draw(st.sampled_from([p for p in _paths(exported) if len(p) <= 4]))
    mutated = _replace(exported, path, data.draw(values))
    with tempfile.TemporaryDirectory() as folder:
        results = Path(folder) / "results.json"
        results.write_text(json.dumps(mutated))
        result = CliRunner().invoke(
            COMMANDS, ["import", "tau2-results", str(results), "-p", "mock", "-p", "tau2", "--db", str(Path(folder) / "i.db")]
        )
    assert result.exception is None or isinstance(result.exception, SystemExit), (path, repr(result.exception))
    assert result.exit_code in (0, 1), result.output


def test_every_top_level_field_and_info_field_of_another_type_is_one_clean_error_or_imports(exported: Any) -> None:
    # Found by the long fuzz: `"info": true` crashed the import (AttributeError) instead of a clean answer.
    paths = [p for p in _paths(exported) if 1 <= len(p) <= 2 and (len(p) == 1 or p[0] == "info")]
    assert ("info",) in paths and len(paths) > 5
    for path in paths:
        for value in (True, 7, "x", []):
            with tempfile.TemporaryDirectory() as folder:
                results = Path(folder) / "results.json"
                results.write_text(json.dumps(_replace(exported, path, value)))
                result = CliRunner().invoke(
                    COMMANDS, ["import", "tau2-results", str(results), "-p", "mock", "-p", "tau2", "--db", str(Path(folder) / "i.db")]
                )
            assert result.exception is None or isinstance(result.exception, SystemExit), (path, value, repr(result.exception))
            assert result.exit_code in (0, 1), result.output
