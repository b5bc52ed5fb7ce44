"""Task transforms: a plugin changes a run's domain data and selected tasks, its settings part of the run's identity."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import pytest
from toy_domain import ToyDomain, ToyPlugin

import bench_kernel
from bench_kernel import ConfigError, DomainData, Registry, RunConfig, RunSummary, Store, Task, TaskTransform, load_profile, run
from bench_kernel.plugins import get_plugin_manager
from bench_kernel.run.runconfig import build_run_config


@attrs.define(kw_only=True)
class Tagged(TaskTransform):
    """`only_file` (a JSON list of ids) keeps those of the domain's tasks; `tag` becomes every played task's attribute."""

    name: str = "tagged"
    settings: tuple[str, ...] = ("tag", "only_file")
    by_content: tuple[str, ...] = ("only_file",)

    def domain(self, data: DomainData, settings: Mapping[str, Any], registry: Registry) -> DomainData:
        """The tasks the file names."""
        if "only_file" not in settings:
            return data
        wanted = json.loads(Path(settings["only_file"]).read_text())
        return attrs.evolve(data, tasks=[t for t in data.tasks if t.id in wanted])

    def tasks(self, data: DomainData, tasks: list[Task], settings: Mapping[str, Any], registry: Registry) -> list[Task]:
        """The tasks tagged."""
        tag = settings.get("tag")
        return [attrs.evolve(t, attributes={**t.attributes, "tag": tag}) for t in tasks] if tag else tasks


class TaggedPlugin:
    @bench_kernel.hookimpl
    def register_task_transforms(self, register: Callable[[TaskTransform], None]) -> None:
        register(Tagged())


def go(db: Path, *, transform: bool = True, **config: Any) -> RunSummary:
    extra = [("toy", ToyPlugin(ToyDomain())), *([("tagged", TaggedPlugin())] if transform else [])]
    return run(RunConfig(domain="toy", baseline=False, **config), db, plugins=get_plugin_manager([], extra=extra))


def test_a_transforms_settings_change_the_tasks_and_are_stored_and_hashed_as_fields(tmp_path: Path) -> None:
    plain = go(tmp_path / "r.db")
    tagged = go(tmp_path / "r.db", plugin_settings={"tag": "x"})
    store = Store(tmp_path / "r.db")
    try:
        tags = {json.loads(r["attributes_json"]).get("tag") for r in store.conversations(tagged.run_id)}
        untagged = {json.loads(r["attributes_json"]).get("tag") for r in store.conversations(plain.run_id)}
        record = store.run(tagged.run_id)
    finally:
        store.close()
    assert tags == {"x"} and untagged == {None} and tagged.run_id != plain.run_id
    assert record is not None and record.config["tag"] == "x" and "plugin_settings" not in record.config
    assert RunConfig(plugin_settings={"tag": "x"}).identity() == {**RunConfig().identity(), "tag": "x"}
    again = go(tmp_path / "r.db", plugin_settings={"tag": "x"})
    assert (again.run_id, again.skipped, again.finished) == (tagged.run_id, 3, 0)  # the same settings resume the run


def test_a_file_a_transform_reads_into_the_tasks_counts_by_content(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    for path, ids in ((tmp_path / "ids.json", ["inc-a"]), (tmp_path / "a" / "ids.json", ["inc-a"]), (tmp_path / "other.json", ["lamp"])):
        path.write_text(json.dumps(ids))
    first = go(tmp_path / "r.db", plugin_settings={"only_file": str(tmp_path / "ids.json")})
    moved = go(tmp_path / "r.db", plugin_settings={"only_file": str(tmp_path / "a" / "ids.json")})
    other = go(tmp_path / "r.db", plugin_settings={"only_file": str(tmp_path / "other.json")})
    assert first.planned == 1 and moved.run_id == first.run_id and moved.skipped == 1
    assert other.run_id != first.run_id


def test_run_file_keys_no_field_names_are_plugin_settings_and_one_no_transform_owns_is_refused(tmp_path: Path) -> None:
    config = build_run_config({"run": {"domain": "toy", "baseline": False, "tag": "y", "trails": 3}}, {})
    assert config.plugin_settings == {"tag": "y", "trails": 3}
    with pytest.raises(ConfigError, match=r"unknown run setting 'trails' \(did you mean 'trials'\?\) @ \$\.run\.trails"):
        run(config, tmp_path / "r.db", plugins=get_plugin_manager([], extra=[("toy", ToyPlugin()), ("tagged", TaggedPlugin())]))
    with pytest.raises(ConfigError, match=r"run setting 'shifts' \(--shifts\) needs the plugin bench-changebench, which is not loaded"):
        go(tmp_path / "r.db", transform=False, plugin_settings={"shifts": 2})
    with pytest.raises(ConfigError, match=r"\(--shifts\) comes from bench-changebench, which this run blocks \(--plugin no:changebench\)$"):
        go(tmp_path / "r.db", transform=False, plugins=["no:changebench"], plugin_settings={"shifts": 2})
    assert not (tmp_path / "r.db").exists()


def test_first_party_settings_imply_their_plugin_and_a_stored_configuration_gives_its_settings_back() -> None:
    config = RunConfig(domain="toy", plugin_settings={"persona": "Hard", "tag": "x"})
    assert config.implied_plugins() == ["changebench"]
    recorded = config.recorded_identity(load_profile(None), {"version": "1"}, {"metric m": "abc"})
    assert RunConfig.from_stored(recorded) == config
