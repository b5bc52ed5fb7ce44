"""The ray executor against one process: a local Ray cluster (2 CPUs) stores the same rows as a local run."""

from __future__ import annotations

import re
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import click
import pytest
from bench_mock.scripted_models import upgrade_world
from bench_ray import RayExecutor, register_commands
from click.testing import CliRunner

from bench_kernel import ConfigError, ModelConfig, RunConfig, get_plugin_manager, installed_entry_points, run
from bench_kernel.testing import FakeOpenAIServer, stored_rows

INSTALL = "pip install 'bench-ray[ray]'"
TASK = "upgrade_by_email"


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A local Ray cluster with 2 CPUs for this module's tests."""
    ray = pytest.importorskip("ray", reason=f"the Ray executor's tests need Ray: {INSTALL}")
    ray.init(num_cpus=2, include_dashboard=False, logging_level="warning", log_to_driver=False)
    yield ray
    ray.shutdown()


rows = stored_rows


def test_a_ray_run_stores_what_a_local_run_stores(cluster: Any, tmp_path: Path) -> None:
    config = RunConfig(domain="mock", plugins=["mock", "ray"], trials=3)
    local = run(config, tmp_path / "local.db")
    on_ray = run(RunConfig(domain="mock", plugins=["mock", "ray"], trials=3, executor="ray"), tmp_path / "ray.db")
    assert local.status == on_ray.status == "complete" and on_ray.finished == local.finished > 10
    local_rows = rows(tmp_path / "local.db")
    assert len({r[8] for r in local_rows["conversations"]}) > 1  # rewards differ between tasks
    assert rows(tmp_path / "ray.db") == local_rows


world = upgrade_world


def test_a_ray_run_with_models_stores_what_a_local_run_stores(cluster: Any, tmp_path: Path) -> None:
    if not {"llm", "openai"} <= set(installed_entry_points()):
        pytest.skip("needs bench-llm and bench-openai installed (bash scripts/dev.sh installs every plugin)")
    with FakeOpenAIServer(world, latency_s=0.01) as server:
        models = {role: ModelConfig(backend="openai", model="fake-model", base_url=server.base_url) for role in ("agent", "user")}
        base = {
            "domain": "mock",
            "plugins": ["mock", "ray", "llm", "openai"],
            "agent": "llm-fc",
            "user": "llm-user",
            "task_ids": [TASK],
            "trials": 10,
            "baseline": False,
            "models": models,
            "concurrency": 4,
        }
        run(RunConfig(**base), tmp_path / "local.db")
        on_ray = run(RunConfig(**base, executor="ray"), tmp_path / "ray.db")
    assert on_ray.status == "complete" and on_ray.finished == 10
    local_rows = rows(tmp_path / "local.db")
    assert sum(r[3] for r in local_rows["llm_calls"]) == 50  # every call ledgered, by the driver
    assert rows(tmp_path / "ray.db") == local_rows


class _DriverStopped(Exception):
    """Stands in for the driver dying after a few stored conversations."""


def test_a_ray_run_stopped_midway_resumes_to_the_rows_of_an_uninterrupted_run(cluster: Any, tmp_path: Path) -> None:
    config = RunConfig(domain="mock", plugins=["mock", "ray"], trials=3, executor="ray", concurrency=2)
    stored = 0

    def stop_after_five(result: Any) -> None:
        nonlocal stored
        stored += 1
        if stored == 5:
            raise _DriverStopped

    with pytest.raises(_DriverStopped):
        run(config, tmp_path / "r.db", on_finished=stop_after_five)
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("select status, (select count(*) from conversations) from runs").fetchall() == [("interrupted", 5)]
    resumed = run(config, tmp_path / "r.db")
    assert resumed.resumed and resumed.skipped == 5 and resumed.status == "complete"
    run(attrs.evolve(config, executor="local"), tmp_path / "clean.db")
    assert rows(tmp_path / "r.db") == rows(tmp_path / "clean.db")


def test_missing_ray_is_a_clear_error_naming_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # importing it now raises ImportError
    with pytest.raises(ConfigError, match=r"needs Ray, which is not installed: pip install 'bench-ray\[ray\]'"):
        RayExecutor().check(RunConfig(executor="ray"))


def test_unknown_options_are_refused_before_the_run_begins() -> None:
    with pytest.raises(ConfigError, match=r"executor 'ray' has no option 'adress' \(its options: address\)"):
        RayExecutor().check(RunConfig(executor="ray", executor_options={"adress": "auto"}))


def test_ray_address_is_an_option_of_bench_run() -> None:
    @click.group()
    def root() -> None:
        """Stands in for `bench`."""

    @root.command(name="run")
    @click.pass_context
    def run_command(ctx: click.Context) -> None:
        click.echo(repr(ctx.meta.get("bench.executor_options")))

    register_commands(root)
    register_commands(root)  # twice adds it once
    assert [p.opts for p in run_command.params] == [["--ray-address"]]
    result = CliRunner().invoke(root, ["run", "--ray-address", "ray://head:10001"])
    assert result.output == "{'address': 'ray://head:10001'}\n"


def test_ray_address_reaches_a_run_from_the_command_line(tmp_path: Path) -> None:
    """The console entry adds plugins' options to `bench run` (it once never did: --ray-address was "No such option")."""
    bench = [sys.executable, "-m", "bench_kernel", "run"]
    shown = subprocess.run([*bench, "--help"], capture_output=True, text=True, timeout=120, check=True)
    assert "--ray-address" in shown.stdout
    db = str(tmp_path / "r.db")
    args = ["--plugin", "mock", "--plugin", "ray", "--db", db, "--ray-address", "auto"]
    given = subprocess.run([*bench, *args], capture_output=True, text=True, timeout=120)
    # The local executor (or bench-workers' in its place) takes no options: the refusal shows the value reached the run.
    assert given.returncode != 0 and re.search(r"executor 'local'( \(played by 'workers'\))? has no option 'address'", given.stderr), given.stderr
    assert "No such option" not in given.stderr


def test_the_plugin_registers_the_executor() -> None:
    from bench_kernel import collect

    registry = collect(get_plugin_manager(["ray"]))
    assert isinstance(registry.get("executor", "ray"), RayExecutor)
    assert registry.origin("executor", "ray") == "ray"
