"""The report as markdown (the table format's text in markdown's style), as CSV (one table of figures, or a section's) and as
HTML (html.py, with the charts of plots.py: both imported when a page is rendered, not when a run registers formats)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from typing import Any

import attrs

from bench_kernel import ConfigError, PluginError, Report, ReportContext

from .text import TextStyle, cell, gold_verdict, headline_rows

SUMMARY_COLUMNS = ["metric", "value", "low", "high", "n", "errors", "n_of", "error"]


@attrs.frozen(kw_only=True)
class MarkdownStyle(TextStyle):
    """Markdown's headings, list items and pipe tables."""

    heading: str = "## "
    item: str = "- "

    def table(self, headers: list[str], rows: list[list[Any]]) -> list[str]:
        """A pipe table's lines."""
        return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers), *("| " + " | ".join(cell(c) for c in row) + " |" for row in rows)]


def render_page(charts: Callable[[Report, ReportContext], Any], report: Report, context: ReportContext) -> str:
    """The html format's page (`charts`: its plots); without matplotlib, a note where the charts would be."""
    from .html import render_html

    try:
        plots, note = charts(report, context), ""
    except ConfigError as exc:
        plots, note = None, f"Plots left out: {exc}"
    return render_html(report, plots, note)


def render_csv(report: Report, context: ReportContext) -> str:
    """The csv format: the summary rows, or the tables of `context.section`."""
    if context.section is not None:
        return section_csv(report.section(context.section))
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=SUMMARY_COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(summary_rows(report))
    return out.getvalue()


def summary_rows(report: Report) -> list[dict[str, Any]]:
    """The headline figures, the plugins' cards (bench-trust's `noise.mdd`, ...), the figures by task attribute
    (`name[attribute=value]`), then failed sections (`section:NAME`) and tasks whose gold replay fails
    (`gold_replay_failed[task=ID]`), as rows of SUMMARY_COLUMNS.

    n counts what n_of names (conversations, tasks or calls); errors counts values that could not be computed and
    error says why (each distinct message, with the conversations it ended when there are several).
    """
    return [*headline_rows(report), *(row for card in report.cards for row in card["rows"]), *_breakdown_rows(report), *_problem_rows(report)]


def _problem_rows(report: Report) -> list[dict[str, Any]]:
    empty = {"value": None, "low": None, "high": None}
    rows = [
        {"metric": f"section:{s['name']}", **empty, "n": 1, "errors": 1, "n_of": f"section of plugin {s['plugin']}", "error": s["error"]}
        for s in report.sections
        if s["error"]
    ]
    rows += [
        {
            "metric": f"gold_replay_failed[task={f['task_id']}]",
            **empty,
            "n": len(f["problems"]),
            "errors": 0,
            "n_of": "gold problems",
            "error": f"{'; '.join(f['problems'])} ({gold_verdict(f)})",
        }
        for f in report.gold_failures
    ]
    return rows


def _breakdown_rows(report: Report) -> list[dict[str, Any]]:
    rows = []
    for b in report.breakdowns:
        for g in b["groups"]:
            for name, figure in g["figures"].items():
                n, n_of = (g["tasks"], "tasks") if name == "pass^1" else (g["conversations"], "conversations")
                rows.append(
                    {
                        "metric": f"{name}[{b['attribute']}={g['value']}]",
                        "value": figure,
                        "low": None,
                        "high": None,
                        "n": n,
                        "errors": g["errors"].get(name, 0),
                        "n_of": n_of,
                    }
                )
    return rows


def section_csv(section: dict[str, Any]) -> str:
    """A section's tables as CSV, one after another; a failed section or one without tables is an error."""
    if section["error"]:
        raise PluginError(section["plugin"], f"report section {section['name']!r} failed: {section['error']}")
    if not section["tables"]:
        raise ConfigError(f"report section {section['name']!r} has no tables to print as CSV (try --format markdown)")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    for table in section["tables"]:
        writer.writerow(table["headers"])
        writer.writerows(table["rows"])
    return out.getvalue()
