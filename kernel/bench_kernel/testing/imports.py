"""Import circles in a package, read from its source: every import counts, under TYPE_CHECKING and inside functions too."""

from __future__ import annotations

import ast
import gc
from pathlib import Path


def module_name(package_dir: Path, path: Path) -> str:
    """The dotted name of a source file of the package at `package_dir`."""
    parts = path.relative_to(package_dir.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(package_dir: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package it imports, wherever the import statement stands."""
    files = {module_name(package_dir, p): p for p in sorted(package_dir.rglob("*.py")) if "tests" not in p.relative_to(package_dir).parts}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        edges: set[str] = set()
        for node in ast.walk(parse(path)):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = ".".join([*package[: len(package) - node.level + 1], node.module or ""]).rstrip(".") if node.level else node.module or ""
                named = {f"{base}.{alias.name}" for alias in node.names}
                edges.update(named)
                if named - set(files):  # a name defined in `base` itself, not only its submodules: `base` is used
                    edges.add(base)
        graph[name] = {_owner(edge, files) for edge in edges} - {name, ""}
    return graph


def parse(path: Path) -> ast.Module:
    """A source file's syntax tree, parsed with the garbage collector paused.

    CPython 3.11 can fail a parse with "SystemError: AST constructor recursion depth mismatch" (gh-106905 and kin)
    when a collection runs finalizers while the tree is converted to Python objects; a long test session leaves such
    garbage (closed event loops, coroutines, connections). Seen once in the whole suite: pausing the collector for the
    few milliseconds of a parse takes the collection, and its finalizers, out of the conversion.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(path.read_text(), str(path))
    finally:
        if enabled:
            gc.enable()


def _owner(name: str, files: dict[str, Path]) -> str:
    """The package module a dotted name lives in ("" when it is not one of the package's)."""
    while name not in files and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in files else ""


def import_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """A shortest cycle through each group of modules that import each other (Tarjan's components, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        work = [(root, iter(sorted(graph[root])))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = set(stack[stack.index(node) :])
                    del stack[stack.index(node) :]
                    if len(component) > 1:
                        components.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(sorted(graph.get(child, ())))))
            elif child in stack:
                low[node] = min(low[node], index[child])
    return [_shortest_cycle(graph, component) for component in components]


def _shortest_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest cycle inside a group of modules that import each other, from its first module back to it."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & component):
                if nxt == start:
                    return [*paths[node], start]
                if nxt not in paths:
                    paths[nxt] = [*paths[node], nxt]
                    following.append(nxt)
        frontier = following
    raise AssertionError("modules that import each other always hold a cycle")


def check_no_import_cycles(package_dir: Path, ignore: frozenset[str] = frozenset()) -> None:
    """Fail, naming each circle, when modules of the package import each other (`ignore`: modules left out, e.g. a facade)."""
    graph = {m: targets - ignore for m, targets in import_graph(package_dir).items() if m not in ignore}
    found = [" -> ".join(cycle) for cycle in import_cycles(graph)]
    assert not found, (
        f"import circles in {package_dir.name} (move what both sides need into a module below them; "
        "imports under TYPE_CHECKING or inside functions count too):\n" + "\n".join(found)
    )
