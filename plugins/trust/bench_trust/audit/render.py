"""`bench audit` output: the JSON document, or a summary and the flagged tasks as a table or markdown."""

from __future__ import annotations

import json
from typing import Any

from .auditing import FLOORS
from .flags import FLAGS


def render_audit(document: dict[str, Any], fmt: str) -> str:
    """JSON, markdown or a plain table."""
    if fmt == "json":
        return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    markdown = fmt == "markdown"
    total = document["summary"]
    head = "## " if markdown else ""
    lines = [
        f"{head}Audit of {document['domain']}: {total['tasks']} tasks, {total['any_flag']} flagged "
        f"(data {document['data'].get('source') or '-'}, fingerprint {document['data']['fingerprint'][:12]})",
        "",
    ]
    lines += _table(["figure", "value"], _summary_rows(total), markdown)
    flagged = [a for a in document["tasks"] if a["flags"]]
    if flagged:
        lines += ["", f"{head}Flagged tasks", ""]
        rows = [
            [
                a["id"],
                _num(a["ceiling"]),
                *(_num(a["floors"][f]) for f in FLOORS),
                ", ".join(a["flags"]),
                "; ".join(f"{flag}: {text}" for flag, text in a["evidence"].items()),
            ]
            for a in flagged
        ]
        lines += _table(["task", "ceiling", *FLOORS, "flags", "evidence"], rows, markdown)
    notes = [a for a in document["tasks"] if a.get("notes")]
    if notes:
        lines += ["", f"{len(notes)} task(s) have rewards left null: {next(iter(notes[0]['notes'].values()))} (e.g. task " + notes[0]["id"] + ")"]
    return "\n".join(lines) + "\n"


def _summary_rows(total: dict[str, Any]) -> list[list[str]]:
    rows = [["ceiling (mean oracle reward)", _num(total["ceiling_mean"])]]
    rows += [[f"floor {name} (mean reward)", _num(value)] for name, value in total["floor_means"].items()]
    rows += [[f"flag {flag}", str(total["flagged"].get(flag, 0))] for flag in FLAGS]
    return [*rows, ["tasks with any flag", str(total["any_flag"])]]


def _num(value: float | None) -> str:
    return "null" if value is None else f"{value:.3f}"


def _table(headers: list[str], rows: list[list[str]], markdown: bool) -> list[str]:
    if markdown:
        cells = [[c.replace("|", "\\|") for c in row] for row in rows]
        return ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers), *("| " + " | ".join(r) + " |" for r in cells)]
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]
    widths[-1] = len(headers[-1])  # the last column (evidence) is never padded
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=False)).rstrip()  # noqa: E731
    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]
