"""The plugin as bench sees it: installed, registered through its entry point, loading its data."""

from __future__ import annotations

import builtins
import pathlib
from importlib.resources import files

import bench_airline
import click
import pytest
from bench_airline import AirlineDomain
from click.testing import CliRunner

from bench_kernel import DATA_DIR_VARIABLE, ConfigError, DomainOptions


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
