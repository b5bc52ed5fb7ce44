"""Run-level ATOD figures: pooled over goals, queries or turns (micro) and averaged per conversation, overall and by complexity.

ATOD reports dGCR and NTC pooled over the goals of a complexity class, and MRA, PE and the quality
scores as means over dialogues (dialogues without a query or a proactive turn left out). Both
averagings are given for every figure, so either reading can be compared. The `atod` report
section shows them as one table (a column per complexity class) beside ATOD's published values.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import ReportSection, RunView, Section, SectionTable

ALL = "all"
CLASSES = ("medium", "complex")
Row = tuple[float | None, dict[str, Any]]
"""A conversation's value and its details."""
Pool = Callable[[Sequence[Row]], float | None]


def _ratio(top: float, bottom: float) -> float | None:
    return top / bottom if bottom else None


def _mean(values: Sequence[float | None]) -> float | None:
    kept = [v for v in values if v is not None]
    return statistics.fmean(kept) if kept else None


def _counts_ratio(top: str, bottom: str) -> Pool:
    def pooled(rows: Sequence[Row]) -> float | None:
        counts = [r[1].get("counts", {}) for r in rows]
        return _ratio(sum(c.get(top, 0) for c in counts), sum(c.get(bottom, 0) for c in counts))

    return pooled


def _items_ratio(top: str, bottom: str) -> Pool:
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


@attrs.frozen(kw_only=True)
class Figure:
    """One reported figure: the stored value it averages, where its pooled value comes from, ATOD's published values."""

    label: str
    metric: str
    stored: str
    pool: Pool | None = None
    pool_from: str | None = None
    """The stored value whose details the pooled figure reads (default: `stored`)."""
    published: tuple[float, float] | None = None
    """ATOD's Table 4 (medium, complex)."""


FIGURES = (
    Figure(label="dGCR", metric="dgcr", stored="dgcr", pool=_pooled_dgcr, published=(0.967, 0.930)),
    Figure(label="dGCR annotated", metric="dgcr", stored="dgcr.annotated", pool=_pooled_dgcr),
    Figure(label="NTC", metric="ntc", stored="ntc", pool=_counts_ratio("ntc_turns", "ntc_goals"), published=(7.04, 10.50)),
    Figure(
        label="NTC completed only",
        metric="ntc",
        stored="ntc.completed_only",
        pool_from="ntc",
        pool=_counts_ratio("ntc_completed_turns", "ntc_completed_goals"),
    ),
    Figure(label="NTC annotated", metric="ntc", stored="ntc.annotated", pool=_counts_ratio("ntc_turns", "ntc_goals")),
    Figure(label="MRA", metric="mra", stored="mra", pool=_items_ratio("matched", "queries"), published=(0.913, 0.743)),
    Figure(label="PE", metric="pe", stored="pe", pool=_items_ratio("effective", "turns"), published=(0.619, 0.586)),
    Figure(label="turn-level quality", metric="turn_quality", stored="turn_quality", pool=_pooled_turns, published=(0.752, 0.766)),
    Figure(label="dialogue-level quality", metric="dialogue_quality", stored="dialogue_quality", published=(4.40, 4.45)),
)


BASELINE = "baseline"
"""The column of the run's do-nothing baseline conversations (all classes)."""


def classes(view: RunView, arm: str = "agent") -> dict[str, str]:
    """Each scored conversation's complexity class ('unknown' when its task has none), of one arm."""
    return {c["id"]: str((c.get("attributes") or {}).get("complexity", "unknown")) for c in view.conversations(arm=arm)}


def rows_by_class(view: RunView, stored: str, by_class: Mapping[str, str], arm: str = "agent") -> dict[str, list[Row]]:
    """A stored value's (value, details) rows, under 'all' and under each conversation's complexity class."""
    grouped: dict[str, list[Row]] = defaultdict(list)
    for v in view.values(stored, plugin=view.plugin, arm=arm):
        if v["conversation_id"] not in by_class:
            continue
        row = (v["value"], json.loads(v["details_json"] or "{}"))
        grouped[ALL].append(row)
        grouped[by_class[v["conversation_id"]]].append(row)
    return grouped


@attrs.frozen(kw_only=True)
class Computed:
    """One figure for one group of conversations."""

    micro: float | None
    per_conversation: float | None
    conversations: int
    """Conversations with a value (those without one are left out, as ATOD leaves them out)."""


def compute(view: RunView, figure: Figure, by_class: Mapping[str, str], arm: str = "agent") -> dict[str, Computed]:
    """A figure for every group (all, and each complexity class present) of one arm."""
    grouped = rows_by_class(view, figure.stored, by_class, arm)
    pooled_rows = rows_by_class(view, figure.pool_from, by_class, arm) if figure.pool_from else grouped
    out = {}
    for group in sorted(set(grouped) | {ALL}, key=lambda g: (g != ALL, g)):
        rows = grouped.get(group, [])
        micro = figure.pool(pooled_rows.get(group, [])) if figure.pool is not None else None
        out[group] = Computed(micro=micro, per_conversation=_mean([r[0] for r in rows]), conversations=sum(r[0] is not None for r in rows))
    return out


def imported(view: RunView) -> bool:
    """Whether the run holds imported dialogues (whose annotations are their gold lifecycle)."""
    return (view.config or {}).get("format") == "atod-dialogues"


def _cell(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


@attrs.define(kw_only=True)
class ComplexitySection(ReportSection):
    """Every ATOD figure in one table: a column per complexity class, micro and per-conversation rows, ATOD's values beside."""

    name: str = "atod"
    title: str = "ATOD figures by complexity class"
    description: str = "dGCR, NTC, MRA, PE and quality, pooled and per conversation, for all conversations and per class."

    def build(self, view: RunView) -> Section:
        """The figures table and the published values."""
        by_class, baseline = classes(view), classes(view, BASELINE)
        groups = [ALL, *CLASSES, *sorted(set(by_class.values()) - set(CLASSES))]
        columns = [*groups, BASELINE] if baseline else groups
        rows: list[list[Any]] = []
        empty = Computed(micro=None, per_conversation=None, conversations=0)
        for figure in FIGURES:
            found = compute(view, figure, by_class)
            if baseline:
                found[BASELINE] = compute(view, figure, baseline, BASELINE)[ALL]
            if figure.label.endswith("annotated") and (found[ALL].conversations == 0 or not imported(view)):
                continue  # annotations describe imported dialogues; a generated task's `status` is only what its plan expects
            if figure.pool is not None:
                rows.append([figure.label, "micro", *(_cell(found.get(g, empty).micro) for g in columns)])
            rows.append([figure.label, "per conversation", *(_cell(found.get(g, empty).per_conversation) for g in columns)])
            rows.append([figure.label, "conversations", *(found.get(g, empty).conversations for g in columns)])
        published = [[f.label, *f.published] for f in FIGURES if f.published is not None]
        return Section(
            title=self.title,
            tables=[
                SectionTable(headers=["figure", "averaging", *columns], rows=rows),
                SectionTable(
                    title="ATOD's published averages (Table 4; Claude-3.7 judge, its own dialogues)",
                    headers=["figure", "medium", "complex"],
                    rows=published,
                ),
            ],
            notes=[
                "micro: pooled over goals (dGCR, NTC), queries (MRA), proactive turns (PE) or agent turns (turn quality); "
                "per conversation: the mean of each conversation's value, conversations without one left out (ATOD's way for "
                "MRA, PE and quality); ATOD reports dGCR and NTC micro.",
                "NTC counts utterances (both speakers) from a goal's first mention to its completion or failure; "
                "tool steps share the turn of the agent reply after them.",
                "baseline: the run's do-nothing conversations (every class), scored the same way.",
            ],
        )
