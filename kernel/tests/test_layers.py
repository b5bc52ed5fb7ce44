"""The kernel's layers (docs/decisions.md, "Kernel layering"): no module imports from a layer above its own, no import circle."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import bench_kernel
from bench_kernel.testing.imports import check_no_import_cycles, import_cycles, import_graph

PACKAGE = Path(bench_kernel.__file__).parent
LAYERS: list[tuple[str, ...]] = [
    ("errors", "markers", "afterimport", "redact", "logs", "serialization"),
    ("schema",),
    ("tools", "store"),
    ("modelhub", "profiles"),
    ("tasks",),
    ("conversation",),
    ("evaluation",),
    ("registry", "hookspecs", "loadchecks", "plugins", "run"),
    ("report", "builtin", "scaffold"),
    ("cli", "__main__", "testing"),
]
"""Bottom to top: each unit (a subpackage or a top-level module) may import its own layer and the layers below."""
LAYER_OF = {unit: rank for rank, units in enumerate(LAYERS) for unit in units}
FACADE = "bench_kernel"
"""The package's __init__: it names every export (lazily), so it alone sees every layer."""
GRAPH = import_graph(PACKAGE)


def unit_of(module: str) -> str:
    """The layer unit of a kernel module: its subpackage, or itself when it is a top-level module."""
    return module.split(".")[1]


def test_every_unit_has_a_layer() -> None:
    missing = sorted({unit_of(m) for m in GRAPH if m != FACADE} - set(LAYER_OF))
    assert not missing, f"place these kernel units in LAYERS ({__file__}) and in docs/decisions.md: {missing}"


def test_no_module_imports_a_layer_above_its_own() -> None:
    upward = [
        f"{module} -> {target}"
        for module, targets in sorted(GRAPH.items())
        if module != FACADE
        for target in sorted(targets - {FACADE})
        if LAYER_OF[unit_of(target)] > LAYER_OF[unit_of(module)]
    ]
    assert not upward, "imports from a higher layer (move the shared code down, or the importer up):\n" + "\n".join(upward)


def test_no_kernel_module_reaches_the_facade() -> None:
    """Kernel modules import their siblings, never `bench_kernel` itself (the testing kit excepted: it is a plugin's view)."""
    reaching = sorted(m for m, targets in GRAPH.items() if FACADE in targets and unit_of(m) not in ("testing", "__main__") and m != FACADE)
    assert not reaching, reaching


def test_no_import_circle_even_through_annotations_or_functions() -> None:
    check_no_import_cycles(PACKAGE, ignore=frozenset({FACADE}))


def test_the_cycle_finder_counts_every_import_and_names_a_shortest_cycle(tmp_path: Path) -> None:
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import b\n")
    (package / "b.py").write_text("def f():\n    from .c import x\n")
    (package / "c.py").write_text("from pkg.a import y\n")
    (package / "d.py").write_text("import pkg.a\n")
    assert import_graph(package)["pkg.b"] == {"pkg.c"}
    assert import_cycles(import_graph(package)) == [["pkg.a", "pkg.b", "pkg.c", "pkg.a"]]
    with pytest.raises(AssertionError, match=re.escape("pkg.a -> pkg.b -> pkg.c -> pkg.a")):
        check_no_import_cycles(package)
    (package / "c.py").write_text("x = 1\n")
    check_no_import_cycles(package)
