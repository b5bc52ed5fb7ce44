"""Throwaway plugin distributions for tests: written under a temporary directory, installed there, run as `bench`.

A distribution is installed into a private target directory (never the venv), either by pip or,
when pip cannot build it offline (setuptools without `wheel`), by writing its `dist-info` by hand.
Both leave what `importlib.metadata` reads for an installed distribution: the module beside a
`<name>-<version>.dist-info` directory holding `METADATA` and `entry_points.txt`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Sequence
from pathlib import Path

import attrs
import pytest

KERNEL_TESTS = Path(__file__).resolve().parent
BENCH = Path(sys.executable).parent / "bench"


@attrs.frozen(kw_only=True)
class PluginPackage:
    """One single-module plugin distribution: `bench-<x>`, module `bench_<x>`, entry point `<entry>` (None: no entry point)."""

    dist: str
    module: str
    entry: str | None
    source: str
    version: str = "0.1.0"

    def write_project(self, root: Path) -> Path:
        """Write a setuptools project (pyproject.toml and the module) under root; return its directory."""
        project = root / self.dist
        project.mkdir(parents=True)
        entry_points = f'[project.entry-points.bench]\n{self.entry} = "{self.module}"\n' if self.entry else ""
        (project / "pyproject.toml").write_text(
            textwrap.dedent(f"""\
            [build-system]
            requires = ["setuptools>=61"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "{self.dist}"
            version = "{self.version}"
            requires-python = ">=3.11"

            [tool.setuptools]
            py-modules = ["{self.module}"]
            """)
            + entry_points
        )
        (project / f"{self.module}.py").write_text(textwrap.dedent(self.source))
        return project

    def install_by_hand(self, site: Path) -> None:
        """Install into site by writing the module and a minimal dist-info directory."""
        site.mkdir(parents=True, exist_ok=True)
        (site / f"{self.module}.py").write_text(textwrap.dedent(self.source))
        info = site / f"{self.dist.replace('-', '_')}-{self.version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {self.dist}\nVersion: {self.version}\n")
        if self.entry:
            (info / "entry_points.txt").write_text(f"[bench]\n{self.entry} = {self.module}\n")
        (info / "top_level.txt").write_text(f"{self.module}\n")
        (info / "RECORD").write_text("")


def install(packages: Sequence[PluginPackage], root: Path) -> tuple[Path, str]:
    """Install packages into root/site with pip if it can build them offline, else by hand; return (site, method)."""
    site = root / "site"
    projects = [p.write_project(root / "src") for p in packages]
    command = [
        sys.executable,
        "-m",
        "pip",
        "install",
        "--no-deps",
        "--no-build-isolation",
        "--no-index",
        "--disable-pip-version-check",
        "--quiet",
        "--target",
        str(site),
        *map(str, projects),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, env=_pip_env())
    if done.returncode == 0:
        return site, "pip"
    # Without the `wheel` package an old setuptools cannot build (no bdist_wheel); a hand-made
    # dist-info is exactly what an installed distribution is to importlib.metadata.
    shutil.rmtree(site, ignore_errors=True)
    for package in packages:
        package.install_by_hand(site)
    return site, "by hand"


def _pip_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PIP_NO_INPUT"] = "1"
    return env


def bench_env(pythonpath: Iterable[Path], **extra: str) -> dict[str, str]:
    """The environment for a `bench` subprocess: extra import paths first, no inherited bench settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    env["PYTHONPATH"] = os.pathsep.join(str(p) for p in pythonpath)
    env.update(extra)
    return env


def run_bench(args: Sequence[str], env: dict[str, str], cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run the installed `bench` console script to completion."""
    return subprocess.run([str(BENCH), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def forget_modules(*names: str) -> None:
    """Drop imported plugin modules so a later test imports its own copy."""
    for name in names:
        sys.modules.pop(name, None)


def no_installed_plugins() -> list[str]:
    """A `selected` list that blocks every installed entry point, so a test sees only its own plugins."""
    from bench_kernel.plugins import installed_entry_points

    return [f"no:{name}" for name in installed_entry_points()]


def needs_installed(*names: str) -> pytest.MarkDecorator:
    """Skip a test that runs first-party plugins when they are not installed (the kernel's wheel tested alone).

    The kernel cannot declare them in its test extra (each of them depends on the kernel); the workspace's
    test command installs every plugin, so these tests always run there.
    """
    from bench_kernel.plugins import installed_entry_points

    missing = [name for name in names if name not in installed_entry_points()]
    return pytest.mark.skipif(bool(missing), reason=f"needs the plugin(s) {', '.join(missing)} installed (bash scripts/dev.sh setup)")


def needs_report() -> pytest.MarkDecorator:
    """Skip a test of the full report's figures when bench-report, which builds them, is not installed (the kernel's
    wheel tested alone, where `bench report` prints the kernel's summary); the workspace's test command runs it."""
    return needs_installed("report")
