"""The kernel's size, as issue 33 counts it, with the part each subpackage holds.

    python benchmarks/kernel_size.py [--target 12000]

Lines of Python in kernel/bench_kernel outside its testing kit, three ways: physical lines (`wc -l`, the measure
issue 33's budget uses), non-blank lines, and code lines (neither blank, comment-only nor docstring). The workspace is
`ruff format`ted, so physical lines are the formatter's. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from pathlib import Path

KERNEL = Path(__file__).resolve().parents[1] / "kernel" / "bench_kernel"


def docstring_lines(tree: ast.Module) -> set[int]:
    """The line numbers of the module's, classes' and functions' docstrings."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                found.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return found


def measure(path: Path) -> tuple[int, int, int]:
    """Physical, non-blank and code lines of one source file."""
    text = path.read_text()
    lines = text.splitlines()
    docs = docstring_lines(ast.parse(text))
    nonblank = [i for i, line in enumerate(lines, 1) if line.strip()]
    code = [i for i in nonblank if not lines[i - 1].strip().startswith("#") and i not in docs]
    return len(lines), len(nonblank), len(code)


def unit(path: Path) -> str:
    """The layer unit a file belongs to: its subpackage, or itself for a top-level module."""
    parts = path.relative_to(KERNEL).parts
    return parts[0] if len(parts) > 1 else parts[0].removesuffix(".py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", type=int, default=12_000, help="the budget in physical lines (issue 33: 12,000)")
    args = parser.parse_args()
    totals: Counter[str] = Counter()
    by_unit: dict[str, Counter[str]] = {}
    for path in sorted(KERNEL.rglob("*.py")):
        if "testing" in path.relative_to(KERNEL).parts:
            continue
        physical, nonblank, code = measure(path)
        counts = by_unit.setdefault(unit(path), Counter())
        for key, value in (("physical", physical), ("nonblank", nonblank), ("code", code)):
            counts[key] += value
            totals[key] += value
    print(f"{'unit':<16}{'physical':>10}{'non-blank':>11}{'code':>8}")
    for name, counts in sorted(by_unit.items(), key=lambda item: -item[1]["physical"]):
        print(f"{name:<16}{counts['physical']:>10,}{counts['nonblank']:>11,}{counts['code']:>8,}")
    print(f"{'kernel':<16}{totals['physical']:>10,}{totals['nonblank']:>11,}{totals['code']:>8,}")
    over = totals["physical"] - args.target
    verdict = f"{over:,} over" if over > 0 else f"{-over:,} under"
    print(f"budget {args.target:,} physical lines outside the testing kit: {verdict}")


if __name__ == "__main__":
    main()
