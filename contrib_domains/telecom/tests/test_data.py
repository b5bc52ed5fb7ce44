"""Bad data files get errors that name the file and the path inside it."""

from __future__ import annotations

import shutil
from importlib.resources import files
from pathlib import Path

import pytest
from bench_telecom import TelecomDomain

from bench_kernel import ConfigError, DomainOptions

TAU2_NAMES = ("db.toml", "user_db.toml", "main_policy.md", "main_policy_solo.md", "tech_support_manual.md")


def tau2_like_dir(tmp_path: Path) -> Path:
    """Our own files laid out as tau2's data directory (no tasks_small.json: our wording is used)."""
    packaged = Path(str(files("bench_telecom").joinpath("data")))
    for name in TAU2_NAMES:
        shutil.copy(packaged / name, tmp_path / name)
    return tmp_path


@pytest.mark.parametrize(
    ("file", "old", "new", "where"),
    [
        ("db.toml", 'status = "Suspended"', 'status = "Frozen"', "$.lines[8].status"),
        ("db.toml", 'imei = "351111111111118"', 'imei = "351111111111118"\ncolour = "red"', "$.devices[0]"),
        ("db.toml", 'activation_date = "2024-11-02T09:15:00"', 'activation_date = "yesterday"', "$.devices[0].activation_date"),
        ("user_db.toml", "battery_level = 64", "battery_level = 64\nbattery_level_2 = 1", "$.device"),
        ("user_db.toml", "[device]", "[devices]", "$.devices"),
    ],
)
def test_a_malformed_file_names_the_file_and_the_path(tmp_path: Path, file: str, old: str, new: str, where: str) -> None:
    data_dir = tau2_like_dir(tmp_path)
    text = (data_dir / file).read_text()
    assert old in text
    (data_dir / file).write_text(text.replace(old, new, 1))
    with pytest.raises(ConfigError) as raised:
        TelecomDomain().load(DomainOptions(data_dir=data_dir, split="small"))
    assert str(data_dir / file) in str(raised.value) and where in str(raised.value)


def test_files_in_tau2s_layout_without_examples_use_our_wording(tmp_path: Path) -> None:
    data = TelecomDomain().load(DomainOptions(data_dir=tau2_like_dir(tmp_path)))
    assert len(data.tasks) == 3405  # no split file: every composition
    assert "Right now you are" in str(data.tasks[0].user_scenario.instructions)


def test_toml_that_does_not_parse(tmp_path: Path) -> None:
    data_dir = tau2_like_dir(tmp_path)
    (data_dir / "db.toml").write_bytes(b"[[plans]\nplan_id = 1")
    with pytest.raises(ConfigError, match="not valid TOML"):
        TelecomDomain().load(DomainOptions(data_dir=data_dir))


def test_a_run_builds_only_the_tasks_it_plays_and_a_listing_every_task(tmp_path: Path) -> None:
    from bench_kernel import LazyTasks, RunConfig, collect, get_plugin_manager, load_domain, run

    summary = run(RunConfig(domain="telecom", plugins=["telecom"], agent="oracle", split="full", num_tasks=2, baseline=False), tmp_path / "r.db")
    assert summary.finished == 2
    data = TelecomDomain().load(DomainOptions(split="full"))
    assert isinstance(data.tasks, LazyTasks) and len(data.tasks) == 3405 and data.tasks.built == 0
    first = data.tasks.narrowed(data.tasks.ids[:2])
    assert [t.id for t in first] == data.tasks.ids[:2] and data.tasks.built == 2
    assert data.content_hash() == summary_hash(tmp_path / "r.db", summary.run_id)  # the run's hash: every task's, from the cache
    assert data.tasks.built == 2
    registry = collect(get_plugin_manager(["telecom"]))
    listed = load_domain(registry, RunConfig(domain="telecom", split="small", num_tasks=1), every_task=True)
    assert len([t.id for t in listed.tasks]) == 21


def summary_hash(db: Path, run_id: str) -> str:
    """The task-set hash a run stored."""
    from bench_kernel import Store

    store = Store(db)
    try:
        return store.run(run_id).task_sets["telecom"]
    finally:
        store.close()
