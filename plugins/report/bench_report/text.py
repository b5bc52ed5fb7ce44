"""The report as text: the default `table` format (plain-text tables, for a terminal), the text the markdown format
shares with it in its own style, and the lines the HTML page shows (header, headline figures, problems)."""

from __future__ import annotations

from typing import Any

import attrs

from bench_kernel import Report

NOT_MEANINGFUL = "rewards not meaningful: run with --allow-broken-tasks"
SCORED_AS_REFERENCE = "scored as the domain's reference implementation scores it: against the state the other gold actions leave"
PROBLEMS_TITLE = "Errors and tasks whose gold replay fails"


def cell(value: Any) -> str:
    """A value as a table shows it: floats to three places, None as a dash."""
    return "-" if value is None else f"{value:.3f}" if isinstance(value, float) else str(value)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


@attrs.frozen(kw_only=True)
class TextStyle:
    """How the text report marks headings and list items and lays out tables: plain here, markdown in formats.py."""

    heading: str = ""
    item: str = "  "

    def table(self, headers: list[str], rows: list[list[Any]]) -> list[str]:
        """A table's lines: each column padded to its widest cell, under a rule."""
        cells = [[cell(c) for c in row] for row in rows]
        widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
        line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False))  # noqa: E731
        return [line(headers), line(["-" * w for w in widths])] + [line(r) for r in cells]


def error_text(messages: dict[str, int]) -> str:
    """Distinct error messages in one cell: each with its count when there are several or it repeats."""
    if len(messages) == 1 and next(iter(messages.values())) == 1:
        return next(iter(messages))
    return " | ".join(f"{message} (x{count})" for message, count in messages.items())


def gold_verdict(failure: dict[str, Any]) -> str:
    """What a task whose gold replay fails is worth: scored as the domain's reference scores it, or not meaningful."""
    return SCORED_AS_REFERENCE if failure.get("scored_as_reference") else NOT_MEANINGFUL


def problem_lines(report: Report) -> list[str]:
    """What the run could not score, one line each: metrics and components that raised (with their messages), then
    tasks whose gold replay fails. Failed sections say so where they would have been."""
    lines = []
    for kind, figures in (("component", report.components), ("metric", report.metrics)):
        for name, figure in figures.items():
            for message, count in figure.get("error_messages", {}).items():
                lines.append(f"{kind} {name} failed on {_plural(count, 'conversation')}: {message}")
    for f in report.gold_failures:
        lines.append(f"task {f['task_id']}: gold replay fails ({gold_verdict(f)}): {'; '.join(f['problems'])}")
    return lines


def headline_rows(report: Report) -> list[dict[str, Any]]:
    """The headline figures (reward, pass^k, pass@k, components, metrics, costs, baseline) as rows: metric, value, low,
    high, n, errors, n_of (what n counts) and error (why values could not be computed)."""
    keys = ("value", "low", "high", "n", "errors")
    convs = {"n_of": "conversations"}
    rows: list[dict[str, Any]] = [{"metric": "average_reward", **report.average_reward, "errors": 0, **convs}]
    rows += [{"metric": f"pass^{k}", **v, "errors": 0, "n_of": "tasks"} for k, v in report.pass_hat_k.items()]
    rows += [{"metric": f"pass@{k}", **v, "errors": 0, "n_of": "tasks"} for k, v in report.pass_at_k.items()]
    rows += [
        {"metric": f"component.{name}", **{k: v[k] for k in keys}, **convs, "error": error_text(v.get("error_messages") or {})}
        for name, v in report.components.items()
    ]
    rows += [
        {"metric": name, **{k: v[k] for k in keys}, **convs, "error": error_text(v.get("error_messages") or {})} for name, v in report.metrics.items()
    ]
    rows += [
        {
            "metric": f"cost_usd.{c['arm']}.{c['role']}.{c['model']}",
            "value": c["cost"],
            "low": None,
            "high": None,
            "n": c["calls"],
            "errors": c["errors"],
            "n_of": "calls",
        }
        for c in report.costs
    ]
    if report.baseline:
        rows.append(
            {
                "metric": "baseline_pass_rate",
                "value": report.baseline["pass_rate"],
                "low": None,
                "high": None,
                "n": report.baseline["conversations"],
                "errors": 0,
                "n_of": "baseline conversations",
            }
        )
    return rows


def render_text(report: Report, style: TextStyle, section: str | None = None) -> str:
    """The report (or the plugin section named `section` alone) as text in a style: the table format's, markdown's."""
    if section is not None:
        return "\n".join(section_lines(report.section(section), style)) + "\n"
    head = style.heading
    out = [f"{head}Run {report.run_id} ({report.status}): {report.counts}", *header_lines(report.header), ""]
    out += style.table(
        ["metric", "value", "95% low", "95% high", "n", "errors"],
        [[r["metric"], r["value"], r["low"], r["high"], f"{r['n']} {r['n_of']}", r["errors"]] for r in headline_rows(report)],
    )
    problems = problem_lines(report)
    if problems:
        out += ["", f"{head}{PROBLEMS_TITLE}", *(f"{style.item}{line}" for line in problems)]
    out += [
        "",
        f"{head}Terminations of agent conversations: " + ", ".join(f"{k}={v}" for k, v in report.terminations.items()),
        f"{head}Flips: {report.flips['mixed_tasks']} of {report.flips['tasks']} tasks mixed across trials "
        f"(mean flip rate {report.flips['mean_flip_rate']:.3f})",
        "",
    ]
    for card in report.cards:
        out += [f"{head}{card['title']}", *(f"{style.item}{line}" for line in card["lines"]), ""]
    if report.costs:
        headers = ["arm", "role", "model", "calls", "cached", "errors", "prompt tokens", "completion tokens", "cost USD"]
        rows = [
            [
                c["arm"],
                c["role"],
                c["model"],
                c["calls"],
                c["cached"],
                c["errors"],
                c["prompt_tokens"],
                c["completion_tokens"],
                "unknown" if c["cost"] is None else f"{c['cost']:.4f}",
            ]
            for c in report.costs
        ]
        out += [*style.table(headers, rows), ""]
    for b in report.breakdowns:
        names = sorted({name for g in b["groups"] for name in g["figures"]}, key=lambda n: (n not in ("average_reward", "pass^1"), n))
        rows = [[g["value"], g["conversations"], g["tasks"], *(g["figures"].get(n) for n in names)] for g in b["groups"]]
        out += [f"{head}By {b['attribute']}", *style.table([b["attribute"], "conversations", "tasks", *names], rows), ""]
    out += style.table(
        ["task", "trials", "successes", "mean reward", "flips", "P(flip)", "baseline passes"],
        [
            [t["task_id"], t["trials"], t["successes"], t["mean_reward"], t["flips"], t.get("flip_probability"), t["baseline_passes"]]
            for t in report.tasks
        ],
    )
    for s in report.sections:
        out += ["", *section_lines(s, style)]
    return "\n".join(out) + "\n"


def section_lines(section: dict[str, Any], style: TextStyle) -> list[str]:
    """A plugin section as text lines: its title, error, text, tables and notes."""
    out = [f"{style.heading}{section['title']} ({section['plugin']})"]
    if section["error"]:
        out.append(f"section {section['name']} of plugin {section['plugin']} failed: {section['error']}")
    out += [section["text"]] if section["text"] else []
    for table in section["tables"]:
        out += ([table["title"]] if table["title"] else []) + style.table(table["headers"], table["rows"])
    return out + [f"note: {n}" for n in section["notes"]]


def header_lines(header: dict[str, Any]) -> list[str]:
    """What was measured, as the report's first lines: domain, participants, models, sizes, profile, plugins, limits."""
    models = ", ".join(f"{role}={m}" for role, m in header.get("models", {}).items()) or "none"
    data = header.get("data") if not header.get("split") else f"{header.get('data')}, split {header.get('split')}"
    plugins = ", ".join(f"{name} {version or '(unknown version)'}" for name, version in header.get("plugins", {}).items())
    return [
        f"domain {header.get('domain')} ({data}), agent {agent_label(header)}, user {header.get('user')}, "
        f"judge {header.get('judge') or 'none'}, models {models}, mode {header.get('mode')}, channel {header.get('channel')}, "
        f"{_plural(header.get('tasks', 0), 'task')}, {_plural(header.get('trials') or 0, 'trial')}, "
        f"seed {header.get('seed')}" + (f", retrieval {header['retrieval']}" if header.get("retrieval") else ""),
        *([f"full duplex: {header['duplex']}"] if header.get("duplex") else []),
        *(
            [f"rescored from run {header['rescored_from']}: its conversations scored again, none played (bench rescore)"]
            if header.get("rescored_from")
            else []
        ),
        f"profile: {header.get('profile')}",
        f"plugins: {plugins or 'unknown'}",
        *_in_flight_lines(header),
    ]


def agent_label(header: dict[str, Any]) -> str:
    """The agent with what identifies its code (its fingerprint) and the models it reported using."""
    details = [f"{key} {_short(value)}" for key, value in (header.get("agent_fingerprint") or {}).items()]
    if header.get("agent_models"):
        details.append(f"reports model {', '.join(header['agent_models'])}")
    return f"{header.get('agent')} ({', '.join(details)})" if details else str(header.get("agent"))


def _short(value: str) -> str:
    """A long hex digest cut to 12 characters (the whole of it is in the stored configuration)."""
    return f"{value[:12]}…" if len(value) > 16 and all(c in "0123456789abcdef" for c in value) else value


def _in_flight_lines(header: dict[str, Any]) -> list[str]:
    if "in_flight" not in header:
        return []
    endpoints = "; ".join(f"{e['endpoint']} ({', '.join(e['roles'])}): {e['limit']} ({e['source']})" for e in header["in_flight"])
    return [f"in flight: {header.get('concurrency')} conversations; requests per endpoint: {endpoints or 'no model endpoint'}"]
