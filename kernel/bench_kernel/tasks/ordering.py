"""The order people read task ids in: numbers as numbers ("2" before "10", "task_9" before "task_10")."""

from __future__ import annotations

import re

_RUNS = re.compile(r"(\d+)")


def task_id_key(task_id: str) -> tuple[tuple[int, int, str], ...]:
    """A natural sort key for a task id: digit runs compare as numbers (before text), the rest as text."""
    # The text breaks ties between "01" and "1", so the order is total and stable across runs.
    return tuple((0, int(part), part) if _RUNS.fullmatch(part) else (1, 0, part) for part in _RUNS.split(str(task_id)) if part)
