"""Each distribution published alone: build every wheel, then test each distribution in a clean venv of its own.

A distribution's venv holds the kernel's wheel, its own wheel and the wheels of the bench distributions it declares
(its `dependencies` and its `test` extra, and their `dependencies` in turn), nothing else of the monorepo; third-party
packages come from a local wheelhouse filled once from PyPI (offline when it already holds them). Its tests/ folder is
copied out of the repository and run there, so an import of an undeclared distribution, a data file missing from the
wheel, or a path into the monorepo fails here. Run by `bash scripts/dev.sh wheels [NAME...]`.

    python scripts/wheels.py [NAME...]   # NAME: bench-mock, mock or contrib_domains/mock; none means all

Work files go to $BENCH_WHEELS_DIR (default $TMPDIR/bench-wheels): dist/ (our wheels, rebuilt every time), wheelhouse/
(third-party wheels, kept: delete it to take newer releases), envs/ and tests/ (one per distribution, made afresh).
Tests read the shared reference data from $BENCH_REFERENCE, set to ../shared/reference when that folder exists.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORK = Path(os.environ.get("BENCH_WHEELS_DIR") or Path(os.environ.get("TMPDIR", "/tmp")) / "bench-wheels")
GROUPS = ("kernel", "plugins/*", "contrib_domains/*", "contrib_metrics/*", "contrib_judges/*")
BUILD_TOOLS = ("setuptools>=68", "wheel")


@dataclass
class Distribution:
    """One pyproject.toml of the monorepo."""

    path: Path
    name: str
    version: str
    requires: list[str]  # bench distributions named in `dependencies`
    test_requires: list[str]  # bench distributions named in the `test` extra

    @property
    def wheel_stem(self) -> str:
        return f"{self.name.replace('-', '_')}-{self.version}"


def bench_names(requirements: list[str]) -> list[str]:
    """The bench-* distribution names among PEP 508 requirement strings."""
    names = (re.match(r"[A-Za-z0-9._-]+", r.strip()) for r in requirements)
    return [m.group(0).lower() for m in names if m and m.group(0).lower().startswith("bench-")]


def discover() -> dict[str, Distribution]:
    """Every distribution of the monorepo, by name."""
    found: dict[str, Distribution] = {}
    for pattern in GROUPS:
        for pyproject in sorted(REPO.glob(f"{pattern}/pyproject.toml")):
            project = tomllib.loads(pyproject.read_text())["project"]
            extras = project.get("optional-dependencies", {})
            found[project["name"]] = Distribution(
                path=pyproject.parent,
                name=project["name"],
                version=project["version"],
                requires=bench_names(project.get("dependencies", [])),
                test_requires=bench_names(extras.get("test", [])),
            )
    return found


def closure(dist: Distribution, every: dict[str, Distribution]) -> list[str]:
    """The bench distributions a test venv of `dist` holds: the kernel, its declared ones and theirs (not their tests')."""
    wanted, todo = {"bench-kernel", dist.name}, [*dist.requires, *dist.test_requires]
    while todo:
        name = todo.pop()
        if name in wanted:
            continue
        if name not in every:
            raise SystemExit(f"{dist.name} declares {name}, which is not a distribution of this repository")
        wanted.add(name)
        todo.extend(every[name].requires)
    wanted.discard(dist.name)
    return sorted(wanted)


def run(cmd: list[str | Path], quiet: bool = False) -> subprocess.CompletedProcess[str]:
    """Run a command, its output captured; raise when it fails, after printing that output unless quiet."""
    done = subprocess.run([str(c) for c in cmd], text=True, capture_output=True)
    if done.returncode != 0:
        if not quiet:
            sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise subprocess.CalledProcessError(done.returncode, cmd)
    return done


def pip(*args: str | Path, python: Path | None = None, quiet: bool = False) -> None:
    """The tools venv's pip, optionally installing into another interpreter's environment."""
    target: list[str | Path] = ["--python", python] if python else []
    run([WORK / "tools/bin/python", "-m", "pip", *target, *args, "--quiet", "--disable-pip-version-check"], quiet=quiet)


def build_wheels(dists: list[Distribution]) -> None:
    """Every wheel, once, in one pip call with the tools venv's setuptools (no isolated build env per wheel)."""
    if not (WORK / "tools/bin/python").exists():
        run([sys.executable, "-m", "venv", WORK / "tools"])
    pip("install", *BUILD_TOOLS)
    shutil.rmtree(WORK / "dist", ignore_errors=True)
    for dist in dists:  # setuptools builds in-tree: a stale build/lib would ship deleted modules
        shutil.rmtree(dist.path / "build", ignore_errors=True)
    pip("wheel", "--no-deps", "--no-build-isolation", "-w", WORK / "dist", *(d.path for d in dists))
    for dist in dists:
        shutil.rmtree(dist.path / "build", ignore_errors=True)


def wheel(dist: Distribution) -> Path:
    return WORK / "dist" / f"{dist.wheel_stem}-py3-none-any.whl"


def fill_wheelhouse(dists: list[Distribution]) -> None:
    """Third-party wheels for every distribution and its test extra: offline from what is there, else from PyPI."""
    wanted: list[str | Path] = ["pip", *(f"{wheel(d)}[test]" for d in dists)]
    local: list[str | Path] = ["--find-links", WORK / "dist", "--find-links", WORK / "wheelhouse", "-w", WORK / "wheelhouse"]
    try:
        pip("wheel", "--no-index", *local, *wanted, quiet=True)
    except subprocess.CalledProcessError:
        print("wheelhouse: fetching what it lacks from PyPI", flush=True)
        pip("wheel", *local, *wanted)


def run_alone(dist: Distribution, every: dict[str, Distribution], reference: Path | None) -> tuple[float, float, str, bool]:
    """Install `dist` with only what it declares into a fresh venv and run its tests there: (install s, test s, summary, ok)."""
    start = time.monotonic()
    env_dir, test_dir = WORK / "envs" / dist.name, WORK / "tests" / dist.name
    shutil.rmtree(env_dir, ignore_errors=True)
    shutil.rmtree(test_dir, ignore_errors=True)
    run([sys.executable, "-m", "venv", "--without-pip", env_dir])
    others = [wheel(every[name]) for name in closure(dist, every)]
    python = env_dir / "bin/python"
    # pip as in any venv (tests may install throwaway plugins), from the wheelhouse: faster than venv's ensurepip
    pip("install", "--no-index", "--find-links", WORK / "wheelhouse", "pip", f"{wheel(dist)}[test]", *others, python=python)
    pip("check", python=python)
    installed = time.monotonic()
    if not (dist.path / "tests").is_dir():
        return installed - start, 0.0, "no tests/ folder", False
    shutil.copytree(dist.path / "tests", test_dir / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = f"{env_dir / 'bin'}{os.pathsep}{env['PATH']}"
    if reference:
        env["BENCH_REFERENCE"] = str(reference)
    cmd = [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib", "-ra", "tests"]
    done = subprocess.run([str(c) for c in cmd], cwd=test_dir, env=env, text=True, capture_output=True)
    lines = done.stdout.strip().splitlines()
    summary = lines[-1].strip("= ") if lines else "no output"
    if done.returncode != 0:
        sys.stdout.write(done.stdout[-12000:] + done.stderr[-4000:])
    return installed - start, time.monotonic() - installed, summary, done.returncode == 0


def select(every: dict[str, Distribution], names: list[str]) -> list[Distribution]:
    """The distributions named on the command line (by distribution name, short name or folder), or all."""
    if not names:
        return list(every.values())
    by_key = {}
    for dist in every.values():
        for key in (dist.name, dist.name.removeprefix("bench-"), str(dist.path.relative_to(REPO))):
            by_key[key] = dist
    unknown = [n for n in names if n.rstrip("/") not in by_key]
    if unknown:
        raise SystemExit(f"unknown distribution(s): {', '.join(unknown)}; known: {', '.join(every)}")
    return [by_key[n.rstrip("/")] for n in names]


def main(argv: list[str]) -> int:
    every = discover()
    chosen = select(every, argv)
    WORK.mkdir(parents=True, exist_ok=True)
    reference = Path(os.environ.get("BENCH_REFERENCE") or REPO.parent / "shared" / "reference").resolve()
    reference_or_none = reference if reference.is_dir() else None
    t0 = time.monotonic()
    build_wheels(list(every.values()))
    built = time.monotonic()
    print(f"built {len(every)} wheels in {built - t0:.0f}s ({WORK / 'dist'})", flush=True)
    fill_wheelhouse(list(every.values()))
    print(f"wheelhouse ready in {time.monotonic() - built:.0f}s", flush=True)
    rows, failed = [], []
    for dist in chosen:
        try:
            install_s, test_s, summary, ok = run_alone(dist, every, reference_or_none)
        except subprocess.CalledProcessError as error:
            install_s, test_s, summary, ok = 0.0, 0.0, f"install failed: {error}", False
        rows.append((dist.name, install_s, test_s, summary))
        print(f"{dist.name:20} install {install_s:5.1f}s  tests {test_s:6.1f}s  {summary}", flush=True)
        if not ok:
            failed.append(dist.name)
    print(f"\nwheel step: {time.monotonic() - t0:.0f}s in all for {len(rows)} distribution(s)")
    if failed:
        print(f"FAILED alone: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
