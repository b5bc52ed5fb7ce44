"""Time and peak memory of refusing huge or deep task files: each case prints its figures and the error's first words.

.venv/bin/python benchmarks/hostile_input.py
"""

from __future__ import annotations

import json
import tempfile
import time
import tracemalloc
from pathlib import Path

from bench_kernel import TaskFileError, load_tasks


def task(**fields: object) -> dict[str, object]:
    return {"id": "t", "user_scenario": {"instructions": "Say hello."}, **fields}


CASES: dict[str, str] = {
    "5 MB string where a list of actions is expected": json.dumps([task(evaluation_criteria={"actions": "x" * 5_000_000})]),
    "1,000,000 bad items in a list of actions": json.dumps([task(evaluation_criteria={"actions": [1] * 1_000_000})]),
    "100,000 tasks with a null id": json.dumps([{"id": None, "user_scenario": {"instructions": "x"}}] * 100_000),
    "nesting 5,000 deep": "[" * 5000 + "]" * 5000,
    "nesting 200 deep inside a task": json.dumps([task(annotations=json.loads("[" * 200 + "]" * 200))]),
    "20,000 valid tasks (the cost of the checks on good data)": json.dumps([task(id=f"t{i}") for i in range(20_000)]),
}


def measure(name: str, text: str, folder: Path) -> None:
    path = folder / "tasks.json"
    path.write_text(text)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        outcome = f"loaded {len(load_tasks(path))} tasks"
    except TaskFileError as exc:
        outcome = f"{len(exc.problems)} problems: {exc.problems[0][:60]}"
    seconds = time.perf_counter() - started
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{name:58s} {len(text) / 1e6:7.1f} MB in  {seconds:6.2f} s  peak {peak / 1e6:7.1f} MB  {outcome}")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        for name, text in CASES.items():
            measure(name, text, Path(folder))


if __name__ == "__main__":
    main()
