"""Report sections: what a plugin adds to `bench report`, computed from the store.

A plugin registers `ReportSection` objects (`register_report_sections`); `build(view)` returns a
`Section` (tables and/or markdown text) from a read-only `RunView` of the stored run. A section
that raises is shown as an error line naming its plugin; the rest of the report still renders.
Metrics may also define `summarize(view)`: their run-level figures (rates, medians, worst cases,
per-persona values) appear in the report under the metric's plugin.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel.store.store import RunRecord, Store


@attrs.frozen(kw_only=True)
class SectionTable:
    """A table in a section: headers and rows of plain values."""

    headers: list[str]
    rows: list[list[Any]]
    title: str = ""


@attrs.frozen(kw_only=True)
class Section:
    """What a section shows: a title, tables and/or markdown text, and notes."""

    title: str
    tables: list[SectionTable] = attrs.field(factory=list)
    text: str = ""
    notes: list[str] = attrs.field(factory=list)


@attrs.frozen
class RunView:
    """A read-only view of one stored run, for report sections and metrics' `summarize`."""

    store: Store
    run: RunRecord

    @property
    def config(self) -> dict[str, Any]:
        """The run's stored configuration."""
        return self.run.config

    def conversations(self, arm: str | None = "agent", *, scored_only: bool = True) -> list[dict[str, Any]]:
        """Stored conversations (agent arm by default; infrastructure errors left out unless asked)."""
        rows = self.store.conversations(self.run.id)
        if arm is not None:
            rows = [r for r in rows if r["arm"] == arm]
        return [r for r in rows if r["termination_reason"] != "infrastructure_error"] if scored_only else rows

    def values(self, metric: str | None = None, *, plugin: str | None = None) -> list[dict[str, Any]]:
        """Stored metric values, optionally of one metric name and/or one plugin."""
        return [v for v in self.store.metric_values(self.run.id)
                if (metric is None or v["metric"] == metric) and (plugin is None or v["plugin"] == plugin)]

    def events(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Stored conversation events of the run, optionally of one kind."""
        sql = "select * from conversation_events where run_id = ?" + (" and kind = ?" if kind else "") + \
              " order by conversation_id, idx"
        return list(self.store.db.query(sql, [self.run.id, kind] if kind else [self.run.id]))

    def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        """Rows of any query (a plugin's own tables)."""
        return list(self.store.db.query(sql, list(params)))


@attrs.define(kw_only=True)
class ReportSection:
    """Base class of registered report sections: `build(view)` computes the section from the store."""

    name: str
    title: str = ""
    description: str = ""

    def build(self, view: RunView) -> Section:
        """The section's content for one run."""
        raise NotImplementedError
