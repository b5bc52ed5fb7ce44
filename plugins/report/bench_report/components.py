"""The report builder, formats and section bench-report registers, light to import: each imports its work when used.

Every run registers them; a run with `--format none` (or whose report is built elsewhere) never imports the report's
modules, and a table report imports the builder and the text format only.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from bench_kernel import Registry, Report, ReportBuilder, ReportContext, ReportFormat, ReportSection, RunView, Section, Store


@attrs.define(kw_only=True)
class StoredReport(ReportBuilder):
    """The report of a stored run, every figure computed from the store: what `bench_kernel.build_report` returns."""

    name: str = "report"
    description: str = "a stored run's figures, plugin sections and cards"

    def build(self, store: Store, run_id: str, registry: Registry | None = None, by: Sequence[str] = ()) -> Report:
        """The run's report (with the registry's plugin sections, and figures by the `by` attributes)."""
        from .build import build_report

        return build_report(store, run_id, registry, by)


@attrs.define(kw_only=True)
class TableFormat(ReportFormat):
    """The report as plain-text tables, for a terminal (the default)."""

    name: str = "table"
    description: str = "plain-text tables, for a terminal"

    def render(self, report: Report, context: ReportContext) -> str:
        """The report, or one section alone, as plain text."""
        from .text import TextStyle, render_text

        return render_text(report, TextStyle(), context.section)


@attrs.define(kw_only=True)
class JsonFormat(ReportFormat):
    """The report as one JSON document: every figure, each card under its name."""

    name: str = "json"
    description: str = "one JSON document: every figure, each card under its name"

    def render(self, report: Report, context: ReportContext) -> str:
        """The report's JSON, or one section's."""
        from .build import render_json

        return render_json(report, context)


@attrs.define(kw_only=True)
class MarkdownFormat(ReportFormat):
    """The report as markdown: the table format's text with headings, list items and pipe tables."""

    name: str = "markdown"
    description: str = "markdown: headings, lists and pipe tables"

    def render(self, report: Report, context: ReportContext) -> str:
        """The report, or one section alone, as markdown."""
        from .formats import MarkdownStyle
        from .text import render_text

        return render_text(report, MarkdownStyle(), context.section)


@attrs.define(kw_only=True)
class HtmlFormat(ReportFormat):
    """The report as one self-contained HTML page, its charts inline (a whole page even with --section)."""

    name: str = "html"
    description: str = "one self-contained HTML page with every table and the charts inline"

    def render(self, report: Report, context: ReportContext) -> str:
        """The page; without matplotlib, a note where the charts would be."""
        from .formats import render_page

        return render_page(self.charts, report, context)

    def charts(self, report: Report, context: ReportContext) -> dict[str, bytes]:
        """Every chart of the run (and of the --plot-with runs on the pass^k and cost charts), by name; none without a store."""
        from .plots import render_plots

        return render_plots(context.store, [report.run_id, *context.plot_with]) if context.store is not None else {}


@attrs.define(kw_only=True)
class CsvFormat(ReportFormat):
    """The report's figures as one CSV table (SUMMARY_COLUMNS), or one section's tables."""

    name: str = "csv"
    description: str = "one CSV table of every figure (a section's tables with --section)"

    def render(self, report: Report, context: ReportContext) -> str:
        """The summary rows, or the tables of `context.section`."""
        from .formats import render_csv

        return render_csv(report, context)


@attrs.define(kw_only=True)
class FailedChecks(ReportSection):
    """Every failed check of the run's failed conversations (in the reward basis or not), with what was expected and found."""

    name: str = "failed-checks"
    title: str = "Failed checks"
    description: str = "Why each failed conversation failed: its failed checks, expected against found."

    def build(self, view: RunView) -> Section | None:
        """The section (None when no failed conversation has a failed check)."""
        from .failures import failed_checks

        return failed_checks(view, self.title)
