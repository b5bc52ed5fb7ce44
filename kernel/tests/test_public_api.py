"""The public surface: plugins import `bench_kernel` (and `bench_kernel.testing` in tests), never a kernel submodule."""

from __future__ import annotations

import ast
from pathlib import Path

import bench_kernel
import bench_kernel.testing

REPO = Path(__file__).resolve().parents[2]
PLUGIN_ROOTS = ("plugins", "contrib_domains", "contrib_metrics", "contrib_judges", "tests")
ALLOWED = {"bench_kernel", "bench_kernel.testing"}


def _kernel_imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("bench_kernel"):
            found.append((node.lineno, node.module or ""))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("bench_kernel")]
    return found


def test_plugins_import_only_the_public_api() -> None:
    offending = []
    for root in PLUGIN_ROOTS:
        for path in sorted((REPO / root).rglob("*.py")):
            if ".venv" in path.parts or "build" in path.parts:
                continue
            offending += [f"{path.relative_to(REPO)}:{line} imports {module}"
                          for line, module in _kernel_imports(path) if module not in ALLOWED]
    assert not offending, "\n".join(offending)


def test_every_public_name_resolves() -> None:
    for module in (bench_kernel, bench_kernel.testing):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert not missing, f"{module.__name__}.__all__ names what it does not export: {missing}"
        assert sorted(module.__all__) == sorted(set(module.__all__))
