"""Lazy tasks: a run builds only the tasks it plays; listings and checks see every task; the set's hash is kept on disk."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs
import pytest
from toy_domain import TASKS, ToyDomain, ToyPlugin

import bench_kernel
from bench_kernel import DomainData, DomainOptions, LazyTasks, RunConfig, Task, inputs_key, run
from bench_kernel.plugins import collect, get_plugin_manager
from bench_kernel.run.checks import task_summaries
from bench_kernel.run.planning import load_domain, select_tasks


@attrs.define(kw_only=True)
class LazyToy(ToyDomain):
    """The toy domain with its tasks built on first use, counting every build; `inputs` decides the tasks."""

    inputs: Path
    built: list[str] = attrs.field(factory=list)

    def load(self, options: DomainOptions) -> DomainData:
        """The toy's data, its tasks lazy."""
        data = super().load(options)
        by_id = {t.id: t for t in data.tasks}

        def build(ids: Sequence[str]) -> list[Task]:
            self.built.extend(ids)
            return [by_id[i] for i in ids]

        return attrs.evolve(data, tasks=LazyTasks(list(by_id), build, inputs_key=inputs_key([self.inputs])))


@pytest.fixture
def lazy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LazyToy:
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path / "cache"))
    inputs = tmp_path / "inputs.txt"
    inputs.write_text("one")
    return LazyToy(inputs=inputs)


def registry(domain: ToyDomain) -> bench_kernel.Registry:
    return collect(get_plugin_manager([], extra=[("toy", ToyPlugin(domain))]))


def test_a_run_with_task_ids_builds_only_those_tasks_and_hashes_the_whole_set_as_an_eager_domain(lazy: LazyToy, tmp_path: Path) -> None:
    summary = run(
        RunConfig(domain="toy", task_ids=["read-b"], baseline=False),
        tmp_path / "runs.db",
        plugins=get_plugin_manager([], extra=[("toy", ToyPlugin(lazy))]),
    )
    assert summary.finished == 1
    assert set(lazy.built) == {"read-b", "inc-a", "lamp"}  # the whole set once, for its hash (kept on disk from now on)
    lazy.built.clear()
    again = run(
        RunConfig(domain="toy", task_ids=["lamp"], baseline=False),
        tmp_path / "runs.db",
        plugins=get_plugin_manager([], extra=[("toy", ToyPlugin(lazy))]),
    )
    assert again.finished == 1 and lazy.built == ["lamp"]
    eager = load_domain(registry(ToyDomain()), RunConfig(domain="toy"))
    assert load_domain(registry(lazy), RunConfig(domain="toy", task_ids=["lamp"])).content_hash() == eager.content_hash()


def test_num_tasks_narrows_a_run_and_listings_see_every_task(lazy: LazyToy) -> None:
    data = load_domain(registry(lazy), RunConfig(domain="toy", num_tasks=2))
    assert [t.id for t in select_tasks(data, RunConfig(domain="toy", num_tasks=2))] == ["inc-a", "read-b"]
    assert lazy.built == ["inc-a", "read-b"]
    listed = load_domain(registry(lazy), RunConfig(domain="toy", num_tasks=2), every_task=True)
    assert [row["task_id"] for row in task_summaries(listed)] == sorted(t["id"] for t in TASKS)
    assert listed.task("lamp").id == "lamp"


def test_unknown_task_ids_are_refused_without_building(lazy: LazyToy) -> None:
    data = load_domain(registry(lazy), RunConfig(domain="toy", task_ids=["nope"]))
    with pytest.raises(bench_kernel.ConfigError, match="unknown task ids in domain 'toy': nope"):
        select_tasks(data, RunConfig(domain="toy", task_ids=["nope"]))
    assert lazy.built == []


def test_the_hash_is_kept_on_disk_and_computed_again_when_the_inputs_change(lazy: LazyToy, tmp_path: Path) -> None:
    first = lazy.load(DomainOptions()).content_hash()
    assert len(lazy.built) == 3 and len(list((tmp_path / "cache" / "task-sets").iterdir())) == 1
    lazy.built.clear()
    assert lazy.load(DomainOptions()).content_hash() == first and lazy.built == []
    lazy.inputs.write_text("two")
    assert lazy.load(DomainOptions()).content_hash() == first  # the same tasks: the same hash, computed again
    assert len(lazy.built) == 3 and len(list((tmp_path / "cache" / "task-sets").iterdir())) == 2
    changed = attrs.evolve(lazy.load(DomainOptions()), policy="Another policy.")
    assert changed.content_hash() != first
