"""A run's report as one self-contained HTML file: every table of `bench report`, the plots inline as PNG data."""

from __future__ import annotations

import base64
from html import escape
from typing import Any

from bench_kernel import Report

from .plots import PLOTS, TITLES
from .text import PROBLEMS_TITLE, header_lines, headline_rows, problem_lines

SECTIONS = ("summary", "figures", "problems", "terminations", "flips", "costs", "breakdowns", "tasks", "plugin-sections", "plots")
"""The report's own sections; the plugins' cards (bench-trust's noise, validity, attribution) come after flips, by name."""
STYLE = """body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}
table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:.25em .6em;text-align:left}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}.error{color:#b00020}
img{max-width:100%;border:1px solid #eee;margin:.5em 0}"""


def _cell(value: Any) -> str:
    if value is None:
        return "<td>-</td>"
    if isinstance(value, float):
        return f'<td class="num">{value:.3f}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td class="num">{value}</td>'
    return f"<td>{escape(str(value))}</td>"


def table(headers: list[str], rows: list[list[Any]], title: str = "") -> str:
    """An HTML table of plain values (floats to three places)."""
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in rows)
    caption = f"<caption>{escape(title)}</caption>" if title else ""
    return f"<table>{caption}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _lines(lines: list[str]) -> str:
    return "".join(f"<p>{escape(line)}</p>" for line in lines)


def _section(key: str, title: str, body: str) -> str:
    return f'<section id="{key}"><h2>{escape(title)}</h2>{body}</section>'


def render_html(report: Report, plots: dict[str, bytes] | None = None, plots_note: str = "") -> str:
    """The report as HTML with a section per part (ids in SECTIONS, and each card's name); plots are embedded when given."""
    parts = [
        _section(
            "summary",
            f"Run {report.run_id} ({report.status})",
            f"<p>{escape(report.counts)}</p>" + "".join(f"<p>{escape(line)}</p>" for line in header_lines(report.header)),
        ),
        _section(
            "figures",
            "Figures (95% bootstrap intervals)",
            table(
                ["metric", "value", "95% low", "95% high", "n", "errors"],
                [[r["metric"], r["value"], r["low"], r["high"], f"{r['n']} {r['n_of']}", r["errors"]] for r in headline_rows(report)],
            ),
        ),
        _section(
            "problems",
            PROBLEMS_TITLE,
            "".join(f'<p class="error">{escape(line)}</p>' for line in problem_lines(report))
            or "<p>None: every metric and section computed, every task's gold replay ran.</p>",
        ),
        _section(
            "terminations",
            "Terminations of agent conversations",
            table(["reason", "conversations"], [[k, v] for k, v in report.terminations.items()]),
        ),
        _section("flips", "Flips across trials", table(["figure", "value"], [[k, v] for k, v in report.flips.items()])),
        *(_section(card["name"], card["heading"] or card["title"], _lines(card["lines"])) for card in report.cards),
        _section("costs", "Model calls and cost per arm, role and model", _costs(report)),
        _section("breakdowns", "Figures by task attribute", _breakdowns(report)),
        _section(
            "tasks",
            "Tasks",
            table(
                ["task", "trials", "successes", "mean reward", "flips", "P(flip)", "baseline passes"],
                [
                    [t["task_id"], t["trials"], t["successes"], t["mean_reward"], t["flips"], t.get("flip_probability"), t["baseline_passes"]]
                    for t in report.tasks
                ],
            ),
        ),
        _section(
            "plugin-sections", "Plugin sections", "".join(_plugin_section(s) for s in report.sections) or "<p>No plugin sections in this run.</p>"
        ),
        _section("plots", "Plots", _plots(plots, plots_note)),
    ]
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>bench report {escape(report.run_id)}</title>'
        f"<style>{STYLE}</style></head><body><h1>bench report</h1>{''.join(parts)}</body></html>\n"
    )


def _costs(report: Report) -> str:
    if not report.costs:
        return "<p>No model calls in this run.</p>"
    return table(
        ["arm", "role", "model", "calls", "cached", "errors", "prompt tokens", "completion tokens", "cost USD"],
        [
            [
                c["arm"],
                c["role"],
                c["model"],
                c["calls"],
                c["cached"],
                c["errors"],
                c["prompt_tokens"],
                c["completion_tokens"],
                "unknown" if c["cost"] is None else c["cost"],
            ]
            for c in report.costs
        ],
    )


def _breakdowns(report: Report) -> str:
    if not report.breakdowns:
        return "<p>No breakdown asked for (<code>--by persona</code>, <code>--by domain</code>, ...).</p>"
    out = []
    for b in report.breakdowns:
        names = sorted({n for g in b["groups"] for n in g["figures"]}, key=lambda n: (n not in ("average_reward", "pass^1"), n))
        rows = [[g["value"], g["conversations"], g["tasks"], *(g["figures"].get(n) for n in names)] for g in b["groups"]]
        out.append(table([b["attribute"], "conversations", "tasks", *names], rows, title=f"By {b['attribute']}"))
    return "".join(out)


def _plugin_section(section: dict[str, Any]) -> str:
    out = [f"<h3>{escape(section['title'])} ({escape(section['plugin'])})</h3>"]
    if section["error"]:
        out.append(f'<p class="error">section {escape(section["name"])} failed: {escape(section["error"])}</p>')
    if section["text"]:
        out.append(f"<pre>{escape(section['text'])}</pre>")
    out += [table(t["headers"], t["rows"], t["title"]) for t in section["tables"]]
    out += [f"<p>note: {escape(n)}</p>" for n in section["notes"]]
    return "".join(out)


def _plots(plots: dict[str, bytes] | None, note: str) -> str:
    if not plots:
        return f"<p>{escape(note or 'No plots.')}</p>"
    return "".join(
        f'<figure id="plot-{name}"><img alt="{escape(TITLES[name])}" src="data:image/png;base64,'
        f'{base64.b64encode(plots[name]).decode()}"><figcaption>{escape(TITLES[name])}</figcaption></figure>'
        for name in PLOTS
        if name in plots
    )
