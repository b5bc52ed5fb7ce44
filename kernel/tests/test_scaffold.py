"""`bench new KIND NAME [DIR]`: the names it takes, the directory it refuses, and the plugins it writes.

The install tests generate each kind under a name of their own (unique per test run), pip-install it into a
folder of their own (`--target`, put on PYTHONPATH for the subprocesses only), then run its generated tests and
the commands its README names: nothing is installed into the test's environment, so parallel runs cannot collide
and nothing is left to uninstall. The end-to-end test (BENCH_SCAFFOLD_E2E=1) does what a plugin author does, in a
clean virtual environment holding only the kernel's wheel.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import time
import uuid
import venv
from pathlib import Path

import pytest
from click.testing import CliRunner
from plugin_factory import needs_installed

from bench_kernel.cli import cli
from bench_kernel.errors import ConfigError
from bench_kernel.scaffold import KINDS
from bench_kernel.scaffold.new import class_prefix, new_plugin

KERNEL = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
ON_PRACTICE = {"metric": [], "channel": ["--channel"], "agent": ["--agent"], "user": ["--user"], "executor": ["--executor"], "section": []}
"""Kinds run together with the kernel's practice domain (`--plugin practice`), and the option that selects the component."""


@pytest.mark.parametrize("name", ["lib-x", "9lives", "with space", "", "bench.x", "class", "kernel", "oracle"])
def test_names_that_cannot_be_a_module_and_an_entry_point_are_refused(name: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="plugin name"):
        new_plugin("domain", name, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_the_cli_refuses_a_non_empty_directory_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "notes.txt").write_text("mine")
    result = CliRunner().invoke(cli, ["new", "domain", "library", str(tmp_path / "taken")])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"Error: {tmp_path / 'taken'} exists and is not an empty directory: choose another DIR"]
    assert sorted(p.name for p in (tmp_path / "taken").iterdir()) == ["notes.txt"]


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_long_name_keeps_the_generated_code_within_the_line_length(kind: str, tmp_path: Path) -> None:
    """The generated code passes ruff's line length (150) with a 32-character name, not only with short ones."""
    target = new_plugin(kind, "pharmacy_inventory_and_refills_x", tmp_path / kind)
    long = [f"{p.relative_to(target)}:{i}" for p in target.rglob("*.py") for i, line in enumerate(p.read_text().splitlines(), 1) if len(line) > 150]
    assert not long, long


def test_the_help_lists_every_kind_on_a_line_of_its_own() -> None:
    result = CliRunner().invoke(cli, ["new", "--help"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    for kind, what in KINDS.items():
        assert f"    {kind:<9} {what}" in lines, (kind, result.output)


def test_no_template_points_at_the_repository_or_at_plugins_a_pypi_author_lacks(tmp_path: Path) -> None:
    for kind in KINDS:
        target = new_plugin(kind, "clean", tmp_path / kind)
        for path in (p for p in target.rglob("*") if p.is_file()):
            text = path.read_text(encoding="utf-8")
            for leak in ("contrib_domains", "kernel/tests", "seam_plugins", "--plugin mock", "bench-mock", "conftest"):
                assert leak not in text, (kind, path.relative_to(target), leak)


def test_the_kit_is_a_test_extra_not_a_runtime_dependency(tmp_path: Path) -> None:
    import tomllib

    project = tomllib.loads((new_plugin("metric", "kit", tmp_path / "kit") / "pyproject.toml").read_text())["project"]
    assert project["dependencies"] == ["bench-kernel>=0.1"]
    assert any(req.startswith("bench-kernel[kit]") for req in project["optional-dependencies"]["test"])
    judge = tomllib.loads((new_plugin("judge", "verdicts", tmp_path / "verdicts") / "pyproject.toml").read_text())["project"]
    assert judge["dependencies"] == ["bench-kernel>=0.1", "bench-judging>=0.1"]  # its verdicts are asked for by bench-judging


def test_the_cli_writes_into_NAME_by_default_and_says_what_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(cli, ["new", "metric", "turns"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "turns" / "bench_turns" / "metric.py").is_file()
    assert "pip install -e 'turns[test]'" in result.output
    assert CliRunner().invoke(cli, ["new", "agent", "bot", "empty"]).exit_code == 0  # an empty directory is fine


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_kind_renders_completely(kind: str, tmp_path: Path) -> None:
    target = new_plugin(kind, "my_thing", tmp_path / "out")
    files = {p.relative_to(target).as_posix(): p.read_text(encoding="utf-8") for p in target.rglob("*") if p.is_file()}
    assert {"pyproject.toml", "README.md", "CHANGELOG.md", "bench_my_thing/__init__.py"} <= set(files)
    assert any(path.startswith("tests/test_") for path in files)
    leftovers = {path for path, text in files.items() if "{{" in text or "package" in path.split("/")[0]}
    assert not leftovers
    assert 'my_thing = "bench_my_thing"' in files["pyproject.toml"]
    assert 'name = "bench-my_thing"' in files["pyproject.toml"]
    assert "## What it is" in files["README.md"]
    assert "README.about.md" not in files
    for path, text in files.items():
        if path.endswith(".py"):
            compile(text, path, "exec")


def test_class_prefix() -> None:
    assert class_prefix("my_library") == "MyLibrary"
    assert class_prefix("x2") == "X2"


# --------------------------------------------------------------------------- installed and run


def run_checked(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a command; fail the test with its output when it fails."""
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


def rewards(report_json: str, db: Path) -> dict[str, float]:
    """Task id -> mean reward of the agent's conversations of the run `bench run --format json` printed (bench-report's
    report or, with the kernel alone, its summary: both name the run), read from the results database."""
    sql = "select task_id, avg(reward) from conversations where run_id = ? and arm = 'agent' and superseded_by is null group by task_id"
    with contextlib.closing(sqlite3.connect(db)) as conn:
        return dict(conn.execute(sql, [json.loads(report_json)["run_id"]]).fetchall())


# A judge's test runs the practice task with an NL assertion, which bench-judging (its dependency) scores.
@pytest.mark.parametrize("kind", [pytest.param(k, marks=needs_installed("judging")) if k == "judge" else k for k in KINDS])
def test_a_generated_plugin_installs_passes_its_tests_and_runs(kind: str, tmp_path: Path) -> None:
    name = f"s_{kind}_{uuid.uuid4().hex[:8]}"  # unique: a parallel run generates its own
    target = new_plugin(kind, name, tmp_path / name)
    site = tmp_path / "site"
    env = {**os.environ, "PYTHONPATH": str(site), "BENCH_DB": str(tmp_path / "bench.db")}
    run_checked([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(target)], tmp_path, env)
    # Run from tmp_path: the module is then imported from the installed copy (its data files must be in the wheel).
    run_checked([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(target)], tmp_path, env)
    if (BIN / "ruff").exists():  # `bash scripts/dev.sh lint` installs it: the generated code is clean under its own settings
        run_checked([str(BIN / "ruff"), "check", "--no-cache", "."], target, env)
    bench = str(BIN / "bench")
    if kind == "domain":
        run_checked([bench, "check", "--plugin", name], tmp_path, env)
        done = run_checked([bench, "run", "--plugin", name, "--format", "json", "--progress", "none"], tmp_path, env)
        assert set(rewards(done.stdout, tmp_path / "bench.db").values()) == {1.0}
    elif kind in ON_PRACTICE:
        chosen = [*ON_PRACTICE[kind], name] if ON_PRACTICE[kind] else []
        tasks = ["--task-id", "which_items", "--task-id", "take_kettle"] if kind == "user" else []  # it acts on no device
        done = run_checked(
            [bench, "run", "--plugin", "practice", "--plugin", name, *chosen, *tasks, "--format", "json", "--progress", "none"], tmp_path, env
        )
        report = json.loads(done.stdout)
        assert report["status"] == "complete"
        assert not report["infrastructure_errors"], report["infrastructure_errors"]
        if kind == "metric" and "sections" in report:  # bench-report's full report (the kernel alone prints a summary)
            assert {s["name"] for s in report["sections"]} == {name, f"{name}:{name}"}
        if kind in ("channel", "user", "executor", "section"):  # the oracle plays: every task solved
            assert set(rewards(done.stdout, tmp_path / "bench.db").values()) == {1.0}
        if kind == "agent":
            assert rewards(done.stdout, tmp_path / "bench.db") == {"which_items": 1.0, "take_kettle": 0.0, "unlock_door": 0.0}
    else:  # the judge: the practice task with NL assertions
        done = run_checked(
            [bench, "run", "--plugin", "practice", "--plugin", name, "--judge", name, "--split", "judged", "--format", "json", "--progress", "none"],
            tmp_path,
            env,
        )
        assert rewards(done.stdout, tmp_path / "bench.db") == {"judged_kettle": 1.0}


@pytest.mark.skipif(os.environ.get("BENCH_SCAFFOLD_E2E") != "1", reason="opt-in: BENCH_SCAFFOLD_E2E=1 (builds a wheel, a venv)")
def test_end_to_end_in_a_clean_environment_with_only_the_kernel_wheel(tmp_path: Path) -> None:
    started = time.perf_counter()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "BENCH_DB")}
    run_checked([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path / "dist"), str(KERNEL)], tmp_path, env)
    [wheel] = (tmp_path / "dist").glob("bench_kernel-*.whl")
    venv.create(tmp_path / "venv", with_pip=True)
    bin_dir = tmp_path / "venv" / "bin"
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    work = tmp_path / "work"
    work.mkdir()
    for command in (
        ["pip", "install", "--quiet", str(wheel)],
        ["bench", "new", "domain", "library"],
        ["pip", "install", "--quiet", "./library[test]"],
        ["pytest", "-q", "library"],
        ["bench", "check", "--plugin", "library"],
        ["bench", "run", "--plugin", "library", "--format", "json", "--progress", "none"],
    ):
        done = run_checked([str(bin_dir / command[0]), *command[1:]], work, env, timeout=900)
    assert set(rewards(done.stdout, work / "bench.db").values()) == {1.0}
    for kind, chosen in (("metric", []), ("agent", ["--agent", "helper"]), ("channel", ["--channel", "heard"])):
        name = chosen[-1] if chosen else "counts"
        for command in (
            ["bench", "new", kind, name],
            ["pip", "install", "--quiet", f"./{name}[test]"],
            ["pytest", "-q", name],
            ["bench", "run", "--plugin", "practice", "--plugin", name, *chosen, "--progress", "none"],
        ):
            run_checked([str(bin_dir / command[0]), *command[1:]], work, env, timeout=900)
    installed = run_checked([str(bin_dir / "pip"), "list", "--format", "json"], work, env).stdout
    assert {"bench-kernel", "bench-library", "bench-counts", "bench-helper", "bench-heard"} <= {p["name"] for p in json.loads(installed)}
    print(f"end to end in {time.perf_counter() - started:.1f} s")
