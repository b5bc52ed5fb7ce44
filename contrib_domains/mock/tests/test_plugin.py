"""The plugin as bench sees it: installed, registered through its entry point, loading its data."""

from __future__ import annotations

import builtins
import json
import pathlib
import shutil
from importlib.resources import files

import bench_mock
import pytest
from bench_mock import MockDomain

from bench_kernel import ConfigError, DomainOptions


def test_registration_does_no_io(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("registration touched a file")

    monkeypatch.setattr(builtins, "open", refuse)
    monkeypatch.setattr(pathlib.Path, "open", refuse)
    monkeypatch.setattr(pathlib.Path, "read_text", refuse)
    found: list[object] = []
    bench_mock.register_domains(found.append)
    assert [d.name for d in found] == ["mock"]  # type: ignore[attr-defined]


def test_package_data_is_installed() -> None:
    names = {p.name for p in files("bench_mock").joinpath("data").iterdir()}
    assert {"db.json", "user_db.json", "tasks.json", "split_tasks.json", "policy.md", "policy_solo.md"} <= names


def test_load_returns_dual_control_data(data) -> None:
    assert data.name == "mock"
    assert data.user_toolkit is not None and data.user_state is not None
    assert data.sync is not None
    assert data.policy != data.solo_policy
    assert "###STOP###" in data.solo_policy


def test_splits_partition_the_tasks(data) -> None:
    splits = json.loads(files("bench_mock").joinpath("data/split_tasks.json").read_text())
    ids = [t.id for t in data.tasks]
    assert splits["base"] == ids
    assert sorted(splits["train"] + splits["test"]) == sorted(ids)
    assert not set(splits["train"]) & set(splits["test"])


def test_load_honours_the_split() -> None:
    tasks = MockDomain(name="mock").load(DomainOptions(split="test")).tasks
    assert [t.id for t in tasks] == ["close_fixed_ticket", "reactivate_and_restart", "history_plan_upgrade", "billing_dispute_ticket"]
    with pytest.raises(ConfigError, match="unknown split"):
        MockDomain(name="mock").load(DomainOptions(split="nope"))


def test_load_honours_a_tasks_file(tmp_path: pathlib.Path) -> None:
    packaged = json.loads(files("bench_mock").joinpath("data/tasks.json").read_text())
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(packaged[:2]))
    tasks = MockDomain(name="mock").load(DomainOptions(tasks_file=path)).tasks
    assert [t.id for t in tasks] == [packaged[0]["id"], packaged[1]["id"]]


def test_load_honours_a_data_dir(tmp_path: pathlib.Path) -> None:
    data_dir = tmp_path / "data"
    shutil.copytree(pathlib.Path(str(files("bench_mock").joinpath("data"))), data_dir)
    (data_dir / "policy.md").write_text("Be kind.")
    loaded = MockDomain(name="mock").load(DomainOptions(data_dir=data_dir))
    assert loaded.policy == "Be kind."
    assert loaded.source == str(data_dir)
