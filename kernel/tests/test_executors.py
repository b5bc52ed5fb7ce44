"""The executor seam: `--executor NAME` dispatches to a registered executor; options and worker shares are checked."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from plugin_factory import needs_installed
from toy_domain import ToyPlugin

from bench_kernel import ConversationResult, Executor, ModelConfig, RunContext, Unit, hookimpl, run_unit, worker_spec
from bench_kernel.errors import ConfigError, UnknownComponentError
from bench_kernel.plugins import PluginSet, get_plugin_manager
from bench_kernel.run.runconfig import build_run_config
from bench_kernel.run.runner import RunConfig, prepare, run


@attrs.define(kw_only=True)
class BackwardsExecutor(Executor):
    """Plays the units last first, in this process: a third party's executor."""

    name: str = "backwards"
    option_names: tuple[str, ...] = ("note",)
    played: list[str] = attrs.field(factory=list)

    async def execute(self, ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None]) -> int:
        """One unit at a time, from the last."""
        for unit in reversed(units):
            result = await run_unit(ctx, unit)
            self.played.append(f"{unit.task.id}/{unit.trial}")
            on_finished(result)
        return len(units)


class _ExecutorPlugin:
    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    @hookimpl
    def register_executors(self, register: Callable[[Executor], None]) -> None:
        """The test's executor."""
        register(self.executor)


def plugins(executor: Executor | None = None) -> PluginSet:
    extra: list[tuple[str, object]] = [("toy", ToyPlugin())]
    if executor is not None:
        extra.append(("exec", _ExecutorPlugin(executor)))
    return get_plugin_manager([], extra=extra)


def stored(db: Path) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute("select id, reward, num_messages, termination_reason from conversations order by id").fetchall()


def test_a_registered_executor_plays_the_run_and_the_run_stores_what_local_stores(tmp_path: Path) -> None:
    backwards = BackwardsExecutor()
    run(RunConfig(domain="toy", trials=2), tmp_path / "local.db", plugins=plugins())
    summary = run(
        RunConfig(domain="toy", trials=2, executor="backwards", executor_options={"note": 1}), tmp_path / "b.db", plugins=plugins(backwards)
    )
    assert summary.status == "complete" and summary.finished == len(backwards.played) > 4
    assert backwards.played[0].endswith("/0") and backwards.played[-1] != backwards.played[0]
    assert stored(tmp_path / "b.db") == stored(tmp_path / "local.db")


def test_an_unknown_executor_is_refused_before_the_run_begins(tmp_path: Path) -> None:
    with pytest.raises(UnknownComponentError, match=r"no executor named 'rayy' \(registered: local\)"):
        run(RunConfig(domain="toy", executor="rayy"), tmp_path / "r.db", plugins=plugins())
    assert not (tmp_path / "r.db").exists()


def test_an_unknown_executor_option_is_refused_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"executor 'local' has no option 'nodes' \(its options: none\) @ \$.run.executor_options.nodes"):
        run(RunConfig(domain="toy", executor_options={"nodes": 2}), tmp_path / "r.db", plugins=plugins())


@pytest.mark.parametrize(
    ("run_settings", "message"),
    [
        ({"workers": 0}, "workers must be at least 1, not 0 @ $.run.workers"),
        ({"workers": 257}, "workers must be at most 256, not 257 @ $.run.workers"),
        ({"executor": ""}, "executor must name a registered executor"),
        ({"executor_options": "ray"}, "executor_options"),
    ],
)
def test_bad_executor_settings_name_the_problem(run_settings: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("$", r"\$").replace(".", r"\.")):
        build_run_config({"run": run_settings}, {})


def test_executor_settings_stay_out_of_the_hash() -> None:
    plain = build_run_config({"run": {"domain": "toy"}}, {})
    spread = build_run_config({"run": {"domain": "toy", "workers": 4, "executor": "ray", "executor_options": {"address": "auto"}}}, {})
    assert spread.config_hash() == plain.config_hash()
    assert (spread.workers, spread.executor, spread.executor_options) == (4, "ray", {"address": "auto"})


def test_each_worker_gets_its_share_of_the_in_flight_limits(tmp_path: Path) -> None:
    ctx, _, _, _ = asyncio.run(prepare(RunConfig(domain="toy", concurrency=32), tmp_path / "r.db", plugins()))
    try:
        models = {"agent": ModelConfig(model="m", max_concurrency=64), "user": ModelConfig(model="u", max_concurrency=1)}
        ctx = attrs.evolve(ctx, config=attrs.evolve(ctx.config, models=models, max_in_flight=100))
        spec = worker_spec(ctx, str(tmp_path / "r.db"), 3)
    finally:
        ctx.store.set_status(ctx.run_id, "interrupted")
        ctx.store.close()
    assert spec.config.concurrency == 11  # ceil(32 / 3): never fewer in flight than asked, at most 2 more
    assert {r: m.max_concurrency for r, m in spec.config.models.items()} == {"agent": 22, "user": 1}
    assert spec.config.max_in_flight == 34  # --max-in-flight is shared out the same way
    assert spec.run_id == ctx.run_id and Path(spec.store_path).is_absolute() and spec.plugins == ["toy"]


@needs_installed("mock")
def test_a_workers_model_hub_allows_its_share_of_conversations_in_flight(tmp_path: Path) -> None:
    """A worker's endpoints take its share of --concurrency (not 1 request at a time, the hub's bare default)."""
    from bench_kernel import Outbox, get_plugin_manager, worker_context

    ctx, _, _, _ = asyncio.run(prepare(RunConfig(domain="mock", concurrency=32, baseline=False), tmp_path / "r.db", get_plugin_manager(["mock"])))
    try:
        models = {"agent": ModelConfig(model="m", base_url="http://127.0.0.1:9/v1"), "user": ModelConfig(model="m", base_url="http://127.0.0.1:9/v1")}
        ctx = attrs.evolve(ctx, config=attrs.evolve(ctx.config, models=models))
        spec = worker_spec(ctx, str(tmp_path / "r.db"), 2)
    finally:
        ctx.store.set_status(ctx.run_id, "interrupted")
        ctx.store.close()
    worker = worker_context(spec, list(ctx.data.tasks), Outbox(lambda message: None, None, False), ctx.data)
    [limit] = worker.models.in_flight_limits()
    assert limit.limit == 32  # 16 conversations per worker x 2 roles sharing the endpoint


@pytest.mark.parametrize(
    ("in_flight", "cpus", "can_fork", "expected"),
    [
        (1, 8, True, 1),  # C=1
        (32, 8, True, 1),  # the default concurrency: the test suite's runs play in their own process
        (256, 8, True, 1),
        (257, 8, True, 2),
        (1024, 8, True, 4),
        (4096, 8, True, 7),  # one CPU is kept for the run's process, which writes
        (1024, 2, True, 1),  # two CPUs: workers, the writer (and a local model server) would share them
        (1024, 1, True, 1),
        (4096, 16, False, 1),  # no fork: spawned workers would start as slowly as the run itself
    ],
)
def test_auto_workers_follow_the_conversations_in_flight_and_the_cpus(in_flight: int, cpus: int, can_fork: bool, expected: int) -> None:
    from bench_kernel.run.executors import auto_workers

    count, why = auto_workers(in_flight, cpus, can_fork)
    assert count == expected and why.startswith("auto: ")


def test_the_local_executor_counts_workers_by_what_a_run_holds_in_flight(monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_kernel.run import executors

    monkeypatch.setattr(executors.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    monkeypatch.delenv(executors.START_METHOD_ENV, raising=False)
    local = executors.LocalExecutor()
    auto = RunConfig(domain="toy", concurrency=512)
    assert local.workers(auto)[0] == (2 if executors.start_method() == "fork" else 1)
    assert local.workers(auto, units=20)[0] == 1  # a small run: 20 conversations in flight at most
    assert local.plays_in_this_process(auto) == (executors.start_method() != "fork")  # else workers: data built first
    assert local.workers(RunConfig(domain="toy", concurrency=2, workers=4)) == (2, "as configured")  # never more than C
    assert local.workers(RunConfig(domain="toy", concurrency=512, workers=1)) == (1, "as configured")
    monkeypatch.setenv(executors.START_METHOD_ENV, "spawn")
    assert executors.start_method() == "spawn" and local.workers(auto)[0] == 1
    assert local.workers_line(auto, 600) == "  workers: this process, auto: workers would be spawned, a start-up each"


def test_workers_auto_in_a_run_file_and_on_the_command_line() -> None:
    assert build_run_config({"run": {"domain": "toy", "workers": "auto"}}, {}).workers is None
    assert build_run_config({"run": {"domain": "toy", "workers": 3}}, {"workers": None}).workers is None
