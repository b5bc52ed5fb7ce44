"""The public surface: plugins import `bench_kernel` (and `bench_kernel.testing` in tests), never a kernel submodule."""

from __future__ import annotations

import ast
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import attrs
import pytest

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
            offending += [f"{path.relative_to(REPO)}:{line} imports {module}" for line, module in _kernel_imports(path) if module not in ALLOWED]
    assert not offending, "\n".join(offending)


def test_every_public_name_resolves() -> None:
    for module in (bench_kernel, bench_kernel.testing):
        missing = [name for name in module.__all__ if not hasattr(module, name)]
        assert not missing, f"{module.__name__}.__all__ names what it does not export: {missing}"
        assert sorted(module.__all__) == sorted(set(module.__all__))


def test_every_name_in_all_resolves_in_a_fresh_interpreter_to_what_its_module_defines() -> None:
    # hasattr above may be helped by modules earlier tests imported; a fresh process resolves each lazy export itself
    script = (
        "import importlib, bench_kernel as b\n"
        "bad = [n for n in b.__all__ if getattr(importlib.import_module(b._MODULE_OF[n]), n) is not getattr(b, n)]\n"
        "assert sorted(b._MODULE_OF) == sorted(b.__all__), set(b._MODULE_OF) ^ set(b.__all__)\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def _kernel_types(annotation: Any) -> set[type]:
    """The bench_kernel classes an annotation names, through unions, generics and Literal-free aliases."""
    found: set[type] = set()
    if isinstance(annotation, type) and annotation.__module__.startswith("bench_kernel"):
        found.add(annotation)
    for arg in typing.get_args(annotation):
        found |= _kernel_types(arg)
    return found


# Types reachable from exported ones that plugins never build nor read (the kernel's own bookkeeping).
NOT_FOR_PLUGINS = {
    "ToolSpec": "what Toolkit.specs() caches; plugins mark tools with @tool and never read specs",
    "RecordWatch": "how GoldChecker watches shared records; plugins read the faults it finds (ToolFault), never the watch",
}


def test_every_kernel_type_an_exported_record_holds_is_exported() -> None:
    exported = {id(getattr(bench_kernel, n)) for n in bench_kernel.__all__}
    names = {n: getattr(bench_kernel, n) for n in bench_kernel.__all__}  # for annotations imported only when type checking
    missing: dict[str, str] = {}
    for name in bench_kernel.__all__:
        cls = getattr(bench_kernel, name)
        if not (isinstance(cls, type) and attrs.has(cls)):
            continue
        for field, hint in typing.get_type_hints(cls, localns=names).items():
            if field.startswith("_"):
                continue
            for found in (t for t in _kernel_types(hint) if id(t) not in exported):
                if found.__name__ not in NOT_FOR_PLUGINS:
                    missing[found.__name__] = f"{name}.{field}"
    assert not missing, f"exported records hold types bench_kernel does not export: {missing}"


def test_a_run_record_reads_by_attribute_and_by_key() -> None:
    run = bench_kernel.RunRecord(
        id="r",
        created_utc="t0",
        updated_utc="t1",
        status="complete",
        config={"agent": "oracle"},
        config_hash="h",
        plugins=[],
        task_sets={"toy": "x"},
        seed=300,
    )
    assert run["id"] == run.id == "r" and run["status"] == "complete" and run["config"]["agent"] == "oracle"
    assert dict(run)["task_sets"] == {"toy": "x"}
    with pytest.raises(KeyError, match="'name': a run record has id, created_utc"):
        run["name"]


def test_the_type_checking_imports_name_exactly_the_exports() -> None:
    """The runtime reads its exports off the imports under TYPE_CHECKING by a pattern; the parsed imports agree with it."""
    tree = ast.parse(Path(bench_kernel.__file__).read_text())
    [block] = [n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING"]
    static = {(node.module, alias.asname or alias.name) for node in block.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    assert static == {(module, name) for name, module in bench_kernel._MODULE_OF.items()}
