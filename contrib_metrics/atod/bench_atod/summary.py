"""Run-level ATOD figures: pooled over goals, queries or turns (micro) and averaged per conversation, overall and by complexity.

ATOD reports dGCR and NTC pooled over the goals of a complexity class, and MRA, PE and the quality
scores as means over dialogues (dialogues without a query or a proactive turn left out). Both
averagings are given for every figure, so either reading can be compared.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bench_kernel import RunView

ALL = "all"
Row = tuple[float | None, dict[str, Any]]
"""A conversation's value and its details."""


def _ratio(top: float, bottom: float) -> float | None:
    return top / bottom if bottom else None


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.fmean(kept) if kept else None


def _counts_ratio(top: str, bottom: str) -> Callable[[Sequence[Row]], float | None]:
    def pooled(rows: Sequence[Row]) -> float | None:
        counts = [r[1].get("counts", {}) for r in rows]
        return _ratio(sum(c.get(top, 0) for c in counts), sum(c.get(bottom, 0) for c in counts))
    return pooled


def _items_ratio(top: str, bottom: str) -> Callable[[Sequence[Row]], float | None]:
    def pooled(rows: Sequence[Row]) -> float | None:
        return _ratio(sum(r[1].get(top, 0) for r in rows), sum(r[1].get(bottom, 0) for r in rows))
    return pooled


def _pooled_turns(rows: Sequence[Row]) -> float | None:
    scores = [s for _, d in rows for s in d.get("scores", [])]
    return _ratio(sum(scores) / 5, len(scores))


def _pooled_dgcr(rows: Sequence[Row]) -> float | None:
    counts = [r[1].get("counts", {}) for r in rows]
    completed = sum(c.get("completed", 0) for c in counts)
    return _ratio(completed, completed + sum(c.get("failed", 0) for c in counts))


# For each metric: (stored value name, figure label, pooled figure from the rows or None when not poolable).
FIGURES: Mapping[str, list[tuple[str, str, Callable[[Sequence[Row]], float | None] | None]]] = {
    "dgcr": [("dgcr", "dGCR", _pooled_dgcr),
             ("dgcr.annotated", "dGCR annotated", _pooled_dgcr)],
    "ntc": [("ntc", "NTC", _counts_ratio("ntc_turns", "ntc_goals")),
            ("ntc.completed_only", "NTC completed only", None),
            ("ntc.annotated", "NTC annotated", _counts_ratio("ntc_turns", "ntc_goals"))],
    "mra": [("mra", "MRA", _items_ratio("matched", "queries"))],
    "pe": [("pe", "PE", _items_ratio("effective", "turns"))],
    "quality": [("quality.turn", "turn-level quality", _pooled_turns), ("quality.dialogue", "dialogue-level quality", None)],
}
POOLED_FROM = {"ntc.completed_only": ("ntc", _counts_ratio("ntc_completed_turns", "ntc_completed_goals"))}
"""Figures whose pooled value is computed from another stored value's details."""


def classes(view: RunView) -> dict[str, str]:
    """Each conversation's complexity class ('unknown' when its task has none)."""
    return {c["id"]: str((c.get("attributes") or {}).get("complexity", "unknown")) for c in view.conversations()}


def rows_by_class(view: RunView, metric: str, by_class: Mapping[str, str]) -> dict[str, list[Row]]:
    """A stored value's (value, details) rows, under 'all' and under each conversation's complexity class."""
    grouped: dict[str, list[Row]] = defaultdict(list)
    for v in view.values(metric, plugin=view.plugin):
        if v["conversation_id"] not in by_class:
            continue
        row = (v["value"], json.loads(v["details_json"] or "{}"))
        grouped[ALL].append(row)
        grouped[by_class[v["conversation_id"]]].append(row)
    return grouped


def summarize_metric(name: str, view: RunView) -> dict[str, float | None]:
    """Every figure of one ATOD metric, pooled and per conversation, overall and per complexity class."""
    by_class = classes(view)
    out: dict[str, float | None] = {}
    for stored, label, pooled in FIGURES.get(name, []):
        grouped = rows_by_class(view, stored, by_class)
        source = POOLED_FROM.get(stored)
        pooled_rows = rows_by_class(view, source[0], by_class) if source else grouped
        pool = source[1] if source else pooled
        for group in sorted(grouped, key=lambda g: (g != ALL, g)):
            suffix = "" if group == ALL else f" [complexity={group}]"
            rows = grouped[group]
            if pool is not None:
                out[f"{label} (micro){suffix}"] = pool(pooled_rows.get(group, []))
            out[f"{label} (per conversation){suffix}"] = _mean([r[0] for r in rows])
            out[f"{label} conversations{suffix}"] = float(sum(r[0] is not None for r in rows))
    return out
