"""The executor seam: `--executor NAME` dispatches to a registered executor (or the loaded one replacing it); options,
worker shares and `--workers N` without bench-workers are checked."""

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
    # An executor playing for another is named as the one the run asked for, then as itself.
    stand_in = Executor(name="pool", replaces="local")
    with pytest.raises(ConfigError, match=r"^executor 'local' \(played by 'pool'\) has no option 'nodes' \(its options: none\)"):
        stand_in.check(RunConfig(domain="toy", executor_options={"nodes": 2}))


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


def test_workers_auto_in_a_run_file_and_on_the_command_line() -> None:
    assert build_run_config({"run": {"domain": "toy", "workers": "auto"}}, {}).workers is None
    assert build_run_config({"run": {"domain": "toy", "workers": 3}}, {"workers": None}).workers is None


@attrs.define(kw_only=True)
class ReplacingExecutor(BackwardsExecutor):
    """A plugin's executor that plays the runs naming `local`, as bench-workers' does."""

    name: str = "replacing"
    replaces: str = "local"


def test_a_loaded_executor_that_replaces_local_plays_the_default_runs(tmp_path: Path) -> None:
    replacing = ReplacingExecutor()
    summary = run(RunConfig(domain="toy", trials=2, executor_options={"note": 1}), tmp_path / "r.db", plugins=plugins(replacing))
    assert summary.status == "complete" and summary.finished == len(replacing.played) > 4
    twice = get_plugin_manager(
        [],
        extra=[
            ("toy", ToyPlugin()),
            ("exec", _ExecutorPlugin(replacing)),
            ("exec2", _ExecutorPlugin(BackwardsExecutor(name="other", replaces="local"))),
        ],
    )
    with pytest.raises(ConfigError, match=r"executors other \(exec2\), replacing \(exec\) each replace 'local'"):
        run(RunConfig(domain="toy"), tmp_path / "twice.db", plugins=twice)


@pytest.mark.parametrize(
    ("selected", "how"),
    [(["no:workers"], r"blocked by this run \(--plugin no:workers\)"), ([], r"(not installed: pip install bench-workers|installed but not loaded)")],
)
def test_workers_without_bench_workers_are_one_clear_error_before_the_run_begins(tmp_path: Path, selected: list[str], how: str) -> None:
    config = RunConfig(domain="toy", workers=2, plugins=selected or None)
    refusal = r"--workers 2 plays in worker processes, which come from the plugin bench-workers \(without it a run plays in this process\); it is "
    with pytest.raises(ConfigError, match=refusal + how):
        run(config, tmp_path / "r.db", plugins=plugins())
    assert not (tmp_path / "r.db").exists()
    assert run(attrs.evolve(config, workers=1), tmp_path / "r.db", plugins=plugins()).status == "complete"  # one process


@needs_installed("mock")
def test_bench_run_without_bench_workers_refuses_workers_2_naming_the_distribution(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from bench_kernel.cli import cli

    args = ["run", "--plugin", "no:workers", "--plugin", "mock", "--db", str(tmp_path / "r.db"), "--format", "none", "--workers", "2"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert "Error: --workers 2 plays in worker processes, which come from the plugin bench-workers" in result.output
    assert "it is blocked by this run (--plugin no:workers)" in result.output
