"""Each distribution publishable alone, checked from its files in a second (the wheel step checks it for real, slowly).

What `bash scripts/dev.sh wheels` found once, kept from coming back: a data file left out of the wheel, a plugin or a
test importing or running a distribution it does not declare, a test importing another distribution's test helpers,
a distribution without its README or a changelog entry for its version.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import subprocess
import sys
import tomllib
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]


def load_wheels_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_wheels_script", REPO / "scripts" / "wheels.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


wheels = load_wheels_script()
DISTRIBUTIONS = wheels.discover()
MODULES = {name.replace("-", "_"): name for name in DISTRIBUTIONS}
ids = pytest.mark.parametrize("dist", DISTRIBUTIONS.values(), ids=list(DISTRIBUTIONS))


def imported_modules(folder: Path) -> set[str]:
    """Top-level module names imported anywhere under folder (any depth, functions included)."""
    names: set[str] = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names.add(node.module.split(".")[0])
    return names


def plugin_names_run(folder: Path) -> set[str]:
    """Plugins the tests name on a command line (`-p NAME`, `--plugin NAME`) or in get_plugin_manager([...])."""
    text = "\n".join(p.read_text(encoding="utf-8") for p in folder.rglob("*.py"))
    named = set(re.findall(r"""["'](?:-p|--plugin)["'],\s*["']([a-z0-9]+)["']""", text))
    named |= set(re.findall(r"""--plugin[ =]([a-z0-9]+)\b""", text))
    for group in re.findall(r"get_plugin_manager\(\[([^\]]*)\]", text):
        named |= set(re.findall(r"""["']([a-z0-9]+)["']""", group))
    return named


def package_files(dist: Any) -> list[PurePosixPath]:
    """The files of the distribution's package folders, as git knows them (every file when git is not there)."""
    root: Path = dist.path
    try:
        listed = subprocess.run(["git", "ls-files", "-z", "--", "bench_*"], cwd=root, capture_output=True, check=True).stdout
        return [PurePosixPath(p) for p in listed.decode().split("\0") if p]
    except (OSError, subprocess.CalledProcessError):
        return [PurePosixPath(p.relative_to(root).as_posix()) for p in root.glob("bench_*/**/*") if p.is_file()]


@ids
def test_it_has_its_readme_and_a_changelog_entry_for_its_version(dist: Any) -> None:
    project = tomllib.loads((dist.path / "pyproject.toml").read_text())["project"]
    assert project.get("readme") == "README.md" and (dist.path / "README.md").is_file()
    changelog = dist.path / "CHANGELOG.md"
    assert changelog.is_file(), f"{dist.name} has no CHANGELOG.md (docs/decisions.md: one per distribution)"
    headings = re.findall(r"^## (\S+)", changelog.read_text(encoding="utf-8"), re.M)
    assert project["version"] in headings, f"{changelog}: no '## {project['version']}' heading (found {headings})"


@ids
def test_it_declares_every_distribution_its_code_and_tests_import(dist: Any) -> None:
    code_uses = {MODULES[m] for m in imported_modules(dist.path / dist.name.replace("-", "_")) if m in MODULES}
    extras = tomllib.loads((dist.path / "pyproject.toml").read_text())["project"].get("optional-dependencies", {})
    # An extra's distributions are imported only where installed (the kernel's bench-codecache, an accelerator).
    optional = {name for extra, requirements in extras.items() if extra != "test" for name in wheels.bench_names(requirements)}
    undeclared = code_uses - {dist.name, "bench-kernel", *dist.requires, *optional}
    assert not undeclared, f"{dist.name} imports {sorted(undeclared)}: add them to its dependencies"
    installed = {dist.name, *wheels.closure(dist, DISTRIBUTIONS)}
    tests = dist.path / "tests"
    test_uses = {MODULES[m] for m in imported_modules(tests) if m in MODULES}
    if dist.name != "bench-kernel":  # the kernel cannot declare plugins (they depend on it): needs_installed skips
        test_uses |= {f"bench-{name}" for name in plugin_names_run(tests) if f"bench-{name}" in DISTRIBUTIONS}
    missing = test_uses - installed
    assert not missing, f"{dist.name}'s tests use {sorted(missing)}: add them to its test extra"


@ids
def test_its_tests_import_no_other_distributions_test_helpers(dist: Any) -> None:
    own = {p.stem for p in (dist.path / "tests").glob("*.py")}
    others = {p.stem: d.name for d in DISTRIBUTIONS.values() if d is not dist for p in (d.path / "tests").glob("*.py")}
    borrowed = {m: others[m] for m in imported_modules(dist.path / "tests") - own if m in others and m != "conftest"}
    assert not borrowed, f"{dist.name}'s tests import test helpers of other distributions: {borrowed}"


def glob_matches(pattern: str, path: str) -> bool:
    """setuptools' package-data glob: `*` and `?` within one folder, `**/` any number of folders."""
    regex = ""
    for segment in pattern.split("/"):
        if segment == "**":
            regex += "(?:[^/]+/)*"
        else:
            regex += "".join("[^/]*" if c == "*" else "[^/]" if c == "?" else re.escape(c) for c in segment) + "/"
    return re.fullmatch(regex.removesuffix("/"), path) is not None


def test_package_data_globs_match_as_setuptools_does() -> None:
    assert glob_matches("data/*", "data/db.json") and not glob_matches("data/*", "data/x/db.json")
    assert glob_matches("templates/**/*", "templates/a/b/c.tmpl") and glob_matches("templates/**/*", "templates/c")
    assert not glob_matches("*.toml", "profiles/x.toml") and glob_matches("p?.md", "p1.md")


@ids
def test_every_data_file_of_its_package_is_in_the_wheel(dist: Any) -> None:
    config = tomllib.loads((dist.path / "pyproject.toml").read_text()).get("tool", {}).get("setuptools", {})
    patterns = config.get("package-data", {})
    missing = []
    for file in package_files(dist):
        if file.suffix in (".py", ".pyc"):  # setuptools ships a package's modules by itself
            continue
        package, rest = file.parts[0], "/".join(file.parts[1:])
        if not any(glob_matches(pattern, rest) for pattern in patterns.get(package, [])):
            missing.append(str(file))
    assert not missing, f"{dist.name}: not in [tool.setuptools.package-data], so not in the wheel: {missing}"


def test_the_test_venv_of_a_distribution_holds_what_it_declares_and_theirs() -> None:
    view = DISTRIBUTIONS["bench-view"]
    assert {"bench-kernel", "bench-mock", "bench-gsrt", "bench-llm"} <= set(wheels.closure(view, DISTRIBUTIONS))
    assert "bench-view" not in wheels.closure(view, DISTRIBUTIONS)
    assert wheels.closure(DISTRIBUTIONS["bench-kernel"], DISTRIBUTIONS) == []
