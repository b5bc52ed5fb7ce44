"""No import circles among the kernel's modules.

The graph is read from the source with ast: the imports a module runs when it is imported (module level, class
bodies, module-level if/try blocks), never those under `if TYPE_CHECKING:` (never run: the hookspecs name every seam's
type, so annotations alone may go round). An edge goes to the module named, and to the submodule when a `from` import
names one. A second test adds the imports inside functions: deferring an import is how a circle hides, and a function
that must import lazily to start fast never needs to import back into its caller's module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import bench_kernel

PACKAGE = Path(bench_kernel.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def import_time_imports(body: list[ast.stmt], deferred: bool = False) -> list[ast.Import | ast.ImportFrom]:
    """The import statements a module runs at import time in these statements (and, if deferred, in their functions)."""
    found: list[ast.Import | ast.ImportFrom] = []
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If) and is_type_checking(node.test):
            found += import_time_imports(node.orelse, deferred)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found += import_time_imports(node.body, deferred) if deferred else []
        else:  # if/try/with/for/while/match blocks and class bodies run with the module
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(node, field, []):
                    found += import_time_imports(child.body if isinstance(child, ast.ExceptHandler | ast.match_case) else [child], deferred)
    return found


def import_graph(deferred: bool = False) -> dict[str, set[str]]:
    """Kernel module -> the kernel modules it imports when imported (and, if deferred, when its functions run)."""
    files = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        is_package = path.name == "__init__.py"
        edges: set[str] = set()
        for node in import_time_imports(ast.parse(path.read_text(), str(path)).body, deferred):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names)
                continue
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            edges.add(target)
            edges.update(f"{target}.{alias.name}" for alias in node.names)
        graph[name] = {edge for edge in edges if edge in files and edge != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle through each strongly connected component of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return [shortest_cycle(graph, set(component)) for component in components]


def shortest_cycle(graph: dict[str, set[str]], component: set[str]) -> list[str]:
    """A shortest cycle inside a strongly connected component, from its first module back to it."""
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
    raise AssertionError("a strongly connected component always holds a cycle")


def test_the_kernel_has_no_import_cycles() -> None:
    found = [" -> ".join(cycle) for cycle in cycles(import_graph())]
    assert not found, "import cycles among kernel modules (move the shared code where it belongs):\n" + "\n".join(found)


def test_no_import_inside_a_function_closes_a_cycle_either() -> None:
    found = [" -> ".join(cycle) for cycle in cycles(import_graph(deferred=True))]
    assert not found, "import cycles through imports inside functions (move the shared code where it belongs):\n" + "\n".join(found)


def test_the_cycle_finder_finds_a_cycle_and_ignores_lazy_and_type_checking_imports() -> None:
    source = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import b\ndef f():\n    import c\nimport d\n"
    assert [n.names[0].name for n in import_time_imports(ast.parse(source).body)] == ["TYPE_CHECKING", "d"]
    assert [n.names[0].name for n in import_time_imports(ast.parse(source).body, deferred=True)] == ["TYPE_CHECKING", "c", "d"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": set()}) == []
