"""Report sections: what a plugin adds to `bench report`, computed from the store.

A plugin registers `ReportSection` objects (`register_report_sections`); `build(view)` returns a
`Section` (tables and/or markdown text) from a read-only `RunView` of the stored run (view.py). A section
that raises is shown as an error line naming its plugin; the rest of the report still renders.
Metrics may also define `summarize(view)`: their run-level figures (rates, medians, worst cases,
per-persona values) appear in the report under the metric's plugin. A section's `cards(view)` are shown among the
report's own figures (bench-trust's noise, validity and attribution cards), its `compare_cards(comparison)` under
`bench compare`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from bench_kernel.store.view import RunView


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


@attrs.frozen(kw_only=True)
class Card:
    """A few lines among a report's own figures: JSON `figures` under the card's name, `lines` in text, markdown and
    HTML (under `heading`, the title when empty), `rows` (of the CSV's columns) in the CSV."""

    name: str
    title: str
    figures: Any
    lines: list[str] = attrs.field(factory=list)
    rows: list[dict[str, Any]] = attrs.field(factory=list)
    heading: str = ""


@attrs.define(kw_only=True)
class ReportSection:
    """Base class of registered report sections: `build(view)` computes the section from the store."""

    name: str
    title: str = ""
    description: str = ""

    def build(self, view: RunView) -> Section | None:
        """The section's content for one run (None: nothing to show for this run)."""
        raise NotImplementedError

    def plots(self, view: RunView) -> dict[str, bytes]:
        """The section's charts for one run, PNG bytes by name (`bench report --plots` and the HTML report add them)."""
        return {}

    def cards(self, view: RunView) -> list[Card]:
        """Cards shown among the run's own figures, after its flips (default: none)."""
        return []

    def compare_cards(self, comparison: Mapping[str, Any]) -> list[Card]:
        """Cards `bench compare` shows under its figures, from the comparison as its JSON holds it (default: none)."""
        return []
