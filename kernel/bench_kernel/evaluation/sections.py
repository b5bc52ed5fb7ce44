"""The report's data and what plugins register for it: sections computed from the store, cards, formats, the builder (docs/plugins.md)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel.errors import ConfigError
from bench_kernel.store.store import Store
from bench_kernel.store.view import RunView

GOLD_FAILURES_EVENT = "run.gold_failures"
"""The run event `bench run` stores listing the tasks whose gold replay fails: the report's `gold_failures`."""


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
    """A few lines among a report's own figures: `figures` in JSON, `lines` in text formats, `rows` in the CSV."""

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


@attrs.frozen(kw_only=True)
class Report:
    """Everything `bench report` shows, as plain data."""

    run_id: str
    status: str
    config: dict[str, Any]
    conversations: int
    infrastructure_errors: int
    average_reward: dict[str, Any]
    pass_hat_k: dict[str, dict[str, Any]]
    pass_at_k: dict[str, dict[str, Any]]
    components: dict[str, dict[str, Any]]
    metrics: dict[str, dict[str, Any]]
    terminations: dict[str, int]
    flips: dict[str, Any]
    baseline: dict[str, Any] | None
    tasks: list[dict[str, Any]]
    costs: list[dict[str, Any]] = attrs.field(factory=list)
    """Model calls per arm, role and model: calls, tokens, cost (None when a price is unknown)."""
    header: dict[str, Any] = attrs.field(factory=dict)
    """What was measured: domain, data source, agent, user, judge, models, mode, channel, tasks, trials, seed, plugin versions."""
    counts: str = ""
    """Every count of the run, each saying what it counts."""
    sections: list[dict[str, Any]] = attrs.field(factory=list)
    """Plugin sections and metric summaries: {name, plugin, title, tables, text, notes, error}."""
    breakdowns: list[dict[str, Any]] = attrs.field(factory=list)
    """Figures by task attribute (`--by persona`): {attribute, groups: [{value, conversations, tasks, figures, errors}]}."""
    gold_failures: list[dict[str, Any]] = attrs.field(factory=list)
    """Tasks whose gold replay failed when the run began: {task_id, problems, scored_as_reference}."""
    cards: list[dict[str, Any]] = attrs.field(factory=list)
    """The plugins' cards among the report's own figures ({name, plugin, title, heading, figures, lines, rows})."""

    def card(self, name: str) -> Any:
        """A card's figures (its JSON under its name), or None when no loaded plugin gave one of that name."""
        return next((c["figures"] for c in self.cards if c["name"] == name), None)

    def section(self, name: str) -> dict[str, Any]:
        """The plugin section of that name (`--section NAME`), or an error listing the run's sections."""
        found = next((s for s in self.sections if s["name"] == name), None)
        if found is None:
            known = ", ".join(s["name"] for s in self.sections) or "none"
            raise ConfigError(f"no report section {name!r} in run {self.run_id} (sections: {known})")
        return found


@attrs.frozen(kw_only=True)
class ReportContext:
    """What a format is asked for besides the report: one section alone, and the results database for its charts."""

    section: str | None = None
    """Only this plugin section (`--section NAME`); None: the whole report."""
    store: Store | None = None
    """The results database the report was read from (None: a report built elsewhere, drawn without charts)."""
    plot_with: tuple[str, ...] = ()
    """Other runs of the store to draw beside the report's own on the charts (`--plot-with`)."""


@attrs.define(kw_only=True)
class ReportFormat:
    """Base class of registered report formats: `bench report --format NAME` (and `bench run`'s) print `render`."""

    name: str
    description: str = ""

    def render(self, report: Report, context: ReportContext) -> str:
        """The report, or only `context.section` (an error when this format cannot show it alone), as text."""
        raise NotImplementedError

    def charts(self, report: Report, context: ReportContext) -> dict[str, bytes]:
        """PNG charts of the report by name: `bench report --plots DIR` writes every format's (default: none)."""
        return {}


@attrs.define(kw_only=True)
class ReportBuilder:
    """Base class of the registered report builder (bench-report's, the one `bench_kernel.build_report` calls)."""

    name: str
    description: str = ""

    def build(self, store: Store, run_id: str, registry: Any = None, by: Sequence[str] = ()) -> Report:
        """A stored run's report, with the sections and cards of `registry` and figures broken down by `by`."""
        raise NotImplementedError
