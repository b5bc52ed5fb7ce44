"""The plugin as bench sees it: installed, registered through its entry point, loading its data."""

from __future__ import annotations

import builtins
import pathlib
import re
import subprocess
import sys
from importlib.resources import files

import bench_airline
import click
import pytest
from bench_airline import AirlineDomain
from click.testing import CliRunner

from bench_kernel import DATA_DIR_VARIABLE, ConfigError, DeferredDataError, DomainOptions, TaskFileError


def test_registration_does_no_io(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("registration touched a file")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(pathlib.Path, "open", refuse)
    monkeypatch.setattr(pathlib.Path, "read_text", refuse)
    found: list[object] = []
    bench_airline.register_domains(found.append)
    assert [d.name for d in found] == ["airline"]  # type: ignore[attr-defined]


def test_registers_the_generate_command(tmp_path: pathlib.Path) -> None:
    cli = click.Group()
    bench_airline.register_commands(cli)
    result = CliRunner().invoke(cli, ["airline", "generate", "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert {p.name for p in tmp_path.iterdir()} == {"db.json", "tasks.json", "split_tasks.json", "policy.md"}


def test_package_data_is_installed() -> None:
    names = {p.name for p in files("bench_airline").joinpath("data").iterdir()}
    assert {"db.json", "tasks.json", "split_tasks.json", "policy.md"} <= names


def test_packaged_suite_is_hash_exact_and_skips_sync(data) -> None:
    assert data.name == "airline" and data.sync_gold_actions is False
    assert data.reference_hash is not None and data.user_toolkit is None
    assert "2024-05-15 15:00 EST" in data.policy


def test_load_honours_the_split(data) -> None:
    test = AirlineDomain(name="airline").load(DomainOptions(split="test")).tasks
    assert 0 < len(test) < len(data.tasks)
    with pytest.raises(ConfigError, match="unknown split"):
        AirlineDomain(name="airline").load(DomainOptions(split="nope"))


def test_data_dir_may_name_the_domain_or_its_parent(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    packaged = pathlib.Path(str(files("bench_airline").joinpath("data")))
    domain_dir = tmp_path / "airline"
    domain_dir.mkdir()
    for name in ("db.json", "tasks.json", "split_tasks.json"):
        (domain_dir / name).write_bytes((packaged / name).read_bytes())
    (domain_dir / "policy.md").write_text("Be kind.")
    assert AirlineDomain(name="airline").load(DomainOptions(data_dir=domain_dir)).policy == "Be kind."
    monkeypatch.setenv(DATA_DIR_VARIABLE, str(tmp_path))
    assert AirlineDomain(name="airline").load(DomainOptions()).source == str(domain_dir)
    monkeypatch.setenv(DATA_DIR_VARIABLE, str(tmp_path / "empty"))
    with pytest.raises(ConfigError, match=r"no airline data in .*empty"):
        AirlineDomain(name="airline").load(DomainOptions())


def _data_dir_with_db(tmp_path: pathlib.Path, db: bytes | None) -> pathlib.Path:
    packaged = pathlib.Path(str(files("bench_airline").joinpath("data")))
    domain_dir = tmp_path / "airline"
    domain_dir.mkdir()
    for name in ("tasks.json", "policy.md"):
        (domain_dir / name).write_bytes((packaged / name).read_bytes())
    if db is not None:
        (domain_dir / "db.json").write_bytes(db)
    return domain_dir


def _run_cli(data_dir: pathlib.Path, db_path: pathlib.Path) -> subprocess.CompletedProcess[str]:
    bench = pathlib.Path(sys.executable).with_name("bench")
    return subprocess.run(
        [
            str(bench),
            "run",
            "--plugin",
            "airline",
            "--data-dir",
            str(data_dir),
            "--db",
            str(db_path),
            "--num-tasks",
            "3",
            "--format",
            "none",
            "--progress",
            "none",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _stored_conversations(db_path: pathlib.Path) -> int:
    import sqlite3

    with sqlite3.connect(db_path) as db:
        return db.execute("select count(*) from conversations").fetchone()[0]


@pytest.mark.parametrize(
    ("mangle", "says"),
    [
        (lambda text: text[: len(text) // 2], r"db\.json: not valid JSON: .* at line \d+ column \d+"),
        (lambda text: text.replace('"flights"', '"flightz"', 1), r"airline db: unknown tables \['flightz'\], missing tables \['flights'\]"),
    ],
)
def test_a_broken_database_stops_the_run_with_its_file_and_place_and_stores_nothing(tmp_path: pathlib.Path, mangle, says) -> None:
    packaged = pathlib.Path(str(files("bench_airline").joinpath("data")))
    data_dir = _data_dir_with_db(tmp_path, mangle(packaged.joinpath("db.json").read_text()).encode())
    result = _run_cli(data_dir, tmp_path / "runs.db")
    assert result.returncode == 1, result.stderr
    assert re.search(says, result.stderr), result.stderr
    assert "Traceback" not in result.stderr
    assert _stored_conversations(tmp_path / "runs.db") == 0
    # The database is read when first needed, yet a problem in it is named whatever asks first (here: a tool).
    data = AirlineDomain(name="airline").load(DomainOptions(data_dir=data_dir))
    with pytest.raises(DeferredDataError, match=says):
        data.agent_state.fork().flights.get("HAT001")


def test_a_missing_database_is_refused_before_the_run_begins(tmp_path: pathlib.Path) -> None:
    data_dir = _data_dir_with_db(tmp_path, None)
    with pytest.raises(ConfigError, match=r"no airline data in .*expected db\.json"):
        AirlineDomain(name="airline").load(DomainOptions(data_dir=data_dir))
    result = _run_cli(data_dir, tmp_path / "runs.db")
    assert result.returncode == 1 and "expected db.json" in result.stderr, result.stderr
    assert not (tmp_path / "runs.db").exists()  # refused before the store was opened
    from bench_airline.records import deferred_state

    with pytest.raises(TaskFileError, match=r"db\.json: file not found"):  # the packaged suite's own check
        deferred_state(data_dir / "db.json")
