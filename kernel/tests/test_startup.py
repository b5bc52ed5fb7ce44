"""Start-up: `bench_kernel` exports lazily, the CLI loads a command's modules when the command runs, structlog on first use."""

from __future__ import annotations

import gc
import importlib
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from plugin_factory import needs_installed

import bench_kernel
from bench_kernel.cli import cli

HEAVY = ("structlog", "rich", "sqlite_utils", "cattrs", "aiohttp", "httpx", "bench_kernel.report", "bench_kernel.run.runner", "bench_kernel.store")


def _loaded_after(code: str, *, cwd: Path | None = None) -> list[str]:
    """The modules loaded in a fresh interpreter after `code` (which prints nothing)."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=cwd, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def _heavy(modules: list[str], heavy: tuple[str, ...] = HEAVY) -> list[str]:
    return [m for m in modules if m.startswith(heavy) and (m in heavy or m.startswith(tuple(f"{h}." for h in heavy)))]


def test_every_exported_name_is_in_the_lazy_map_and_is_the_defining_modules_object() -> None:
    assert set(bench_kernel.__all__) == set(bench_kernel._MODULE_OF)
    for name in bench_kernel.__all__:
        defined = getattr(importlib.import_module(bench_kernel._MODULE_OF[name]), name)
        assert getattr(bench_kernel, name) is defined, name
    assert set(bench_kernel.__all__) <= set(dir(bench_kernel))


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'NoSuchName'"):
        bench_kernel.NoSuchName  # noqa: B018
    with pytest.raises(ImportError):
        exec("from bench_kernel import NoSuchName")


def test_run_stays_the_function_whatever_kernel_module_is_imported() -> None:
    """The subpackage bench_kernel.run must not replace the exported function when its modules load."""
    for info in pkgutil.walk_packages(bench_kernel.__path__, "bench_kernel."):
        if info.name not in {"bench_kernel.__main__", "bench_kernel.testing.pytest_plugin"}:
            importlib.import_module(info.name)
    from bench_kernel.run.runner import run

    assert bench_kernel.run is run
    loaded = _loaded_after(
        "import bench_kernel.run.executors, bench_kernel.run.runner\n"
        "from bench_kernel import run\nassert callable(run) and run.__module__ == 'bench_kernel.run.runner'"
    )
    assert "bench_kernel.run.runner" in loaded


def test_importing_the_package_loads_no_submodule_work() -> None:
    loaded = _loaded_after("import bench_kernel")
    assert _heavy(loaded) == []
    # The accelerator bench-codecache, where installed, is imported too (before any attrs class), with the hook it uses.
    accelerated = "bench_codecache" in loaded
    assert [m for m in loaded if m.startswith("bench_kernel.")] == ["bench_kernel.afterimport"] * accelerated + ["bench_kernel.run"]


def test_a_missing_or_broken_accelerator_only_means_compiling_as_before(tmp_path: Path) -> None:
    code = "import attrs, bench_kernel\n@attrs.frozen\nclass P:\n    x: int\nassert P(1) == P(1) and hash(P(1)) == hash(P(1))"
    for module in ("raise RuntimeError('broken')", "import no_such_module_anywhere"):
        (tmp_path / "bench_codecache.py").write_text(module)  # found before an installed one: the script's folder is first
        loaded = _loaded_after(code, cwd=tmp_path)
        assert "bench_kernel.run" in loaded and "bench_codecache.cache" not in loaded


def test_one_name_imports_its_module_only() -> None:
    loaded = _loaded_after("from bench_kernel import ConfigError, hookimpl")
    assert {"bench_kernel.errors", "bench_kernel.markers"} <= set(loaded)
    assert _heavy(loaded) == []
    assert "bench_kernel.schema.tasks" not in loaded and "attrs" not in loaded


def test_the_cli_module_loads_no_report_runner_or_structlog() -> None:
    loaded = _loaded_after("import bench_kernel.cli")
    assert _heavy(loaded, ("structlog", "rich", "bench_kernel.report", "bench_kernel.run.runner", "bench_kernel.run.checks")) == []


@needs_installed("mock")
def test_a_run_that_logs_nothing_loads_neither_structlog_nor_the_report(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom bench_kernel.cli import main\n"
        "sys.argv = ['bench', 'run', '--plugin', 'mock', '--db', 'r.db', '--format', 'none', '--progress', 'none']\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code, exc.code"
    )
    loaded = _loaded_after(code, cwd=tmp_path)
    assert "bench_kernel.run.runner" in loaded  # the run did happen
    assert (tmp_path / "r.db").exists()
    assert _heavy(loaded, ("structlog", "rich", "bench_report.html", "bench_report.plots", "bench_report.compare")) == []


def test_a_run_turns_the_collector_back_on_when_it_begins(tmp_path: Path) -> None:
    """bench-codecache sets `bench run` up without the collector; the run's start turns it on, whoever turned it off."""
    gc.disable()
    try:
        args = ["run", "--plugin", "practice", "--db", str(tmp_path / "r.db"), "--format", "none", "--progress", "none"]
        done = CliRunner().invoke(cli, args)
        assert done.exit_code == 0, done.output
        assert gc.isenabled()
    finally:
        gc.enable()
