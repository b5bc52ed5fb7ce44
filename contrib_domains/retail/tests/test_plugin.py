"""The plugin as bench sees it: installed, registered through its entry point, loading its data."""

from __future__ import annotations

import builtins
import json
import pathlib
import re
import shutil
import sqlite3
import subprocess
import sys
from importlib.resources import files

import bench_retail
import click
import pytest
from bench_retail import RetailDomain

from bench_kernel import DATA_DIR_VARIABLE as DATA_DIR_ENV
from bench_kernel import ConfigError, DeferredDataError, DomainOptions


def test_registration_does_no_io(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("registration touched a file")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(pathlib.Path, "open", refuse)
    monkeypatch.setattr(pathlib.Path, "read_text", refuse)
    found: list[object] = []
    bench_retail.register_domains(found.append)
    assert [d.name for d in found] == ["retail"]  # type: ignore[attr-defined]


def test_registers_the_generate_command() -> None:
    cli = click.Group()
    bench_retail.register_commands(cli)
    assert "generate" in cli.commands["retail"].commands  # type: ignore[attr-defined]


def test_package_data_is_installed() -> None:
    names = {p.name for p in files("bench_retail").joinpath("data").iterdir()}
    assert {"db.json", "tasks.json", "split_tasks.json", "policy.md"} <= names


def test_load_our_suite(data) -> None:
    assert data.name == "retail" and 90 <= len(data.tasks) <= 110
    assert data.sync_gold_actions is False and data.reference_hash is not None
    assert data.user_toolkit is None and data.solo_policy is None
    assert "pending" in data.policy


def test_splits_partition_the_tasks(data) -> None:
    splits = json.loads(files("bench_retail").joinpath("data/split_tasks.json").read_text())
    ids = [t.id for t in data.tasks]
    assert splits["base"] == ids
    assert sorted(splits["train"] + splits["test"]) == sorted(ids) and not set(splits["train"]) & set(splits["test"])
    assert [t.id for t in RetailDomain().load(DomainOptions(split="test")).tasks] == splits["test"]
    with pytest.raises(ConfigError, match="unknown split"):
        RetailDomain().load(DomainOptions(split="nope"))


def test_data_dir_may_be_the_domain_dir_or_its_parent(tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch) -> None:
    domain_dir = tmp_path / "tau2" / "retail"
    shutil.copytree(pathlib.Path(str(files("bench_retail").joinpath("data"))), domain_dir)
    (domain_dir / "policy.md").write_text("Be kind.")
    assert RetailDomain().load(DomainOptions(data_dir=domain_dir)).policy == "Be kind."
    assert RetailDomain().load(DomainOptions(data_dir=domain_dir.parent)).source == str(domain_dir)
    monkeypatch.setenv(DATA_DIR_ENV, str(domain_dir.parent))
    assert RetailDomain().load(DomainOptions()).policy == "Be kind."
    with pytest.raises(ConfigError, match="no retail data"):
        RetailDomain().load(DomainOptions(data_dir=tmp_path))


def test_the_shared_tables_are_parsed_once(data) -> None:
    again = RetailDomain().load(DomainOptions())
    assert again.agent_state["orders"].base is data.agent_state["orders"].base
    assert again.agent_state is not data.agent_state


def test_a_broken_database_stops_the_run_with_its_file_and_place_and_stores_nothing(tmp_path: pathlib.Path) -> None:
    packaged = pathlib.Path(str(files("bench_retail").joinpath("data")))
    data_dir = tmp_path / "retail"
    data_dir.mkdir()
    for name in ("tasks.json", "policy.md"):
        (data_dir / name).write_bytes((packaged / name).read_bytes())
    text = (packaged / "db.json").read_text()
    (data_dir / "db.json").write_text(text[: len(text) // 3])
    db = tmp_path / "runs.db"
    done = subprocess.run(
        [
            str(pathlib.Path(sys.executable).with_name("bench")),
            "run",
            "--plugin",
            "retail",
            "--data-dir",
            str(data_dir),
            "--db",
            str(db),
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
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert re.search(r"db\.json: not valid JSON: .* at line \d+ column \d+", done.stderr), done.stderr
    with sqlite3.connect(db) as store:
        assert store.execute("select count(*) from conversations").fetchone()[0] == 0
    data = RetailDomain(name="retail").load(DomainOptions(data_dir=data_dir))  # read when first needed
    with pytest.raises(DeferredDataError, match=r"db\.json: not valid JSON"):
        data.agent_state.fork().orders.get("#W0000000")
