"""The report's "Failed checks" section: why each failed conversation failed, check by check, in reading order."""

from __future__ import annotations

import json
from typing import Any

from bench_kernel import RunView, Section, SectionTable, is_success, task_id_key

MAX_ROWS = 200
"""Failed checks the section lists at most (the viewer's conversation pages have them all)."""
MAX_DETAIL = 400
"""Characters of a check's detail the section keeps."""


def failed_checks(view: RunView, title: str) -> Section | None:
    """The failed-checks section (None when no failed conversation has a failed check)."""
    failed = [r for r in view.conversations() if not is_success(r["reward"]) and r.get("reward_info_json")]
    rows = [row for r in sorted(failed, key=lambda r: (task_id_key(r["task_id"]), r["trial"])) for row in _rows(r)]
    if not rows:
        return None
    # The checks that decided a reward come first: a cut list must not be filled with checks outside the basis.
    rows.sort(key=lambda row: row[3] != "yes")
    notes = (
        [f"the first {MAX_ROWS} of {len(rows)} failed checks, those in the reward basis first: `bench view` shows every conversation's checks"]
        if len(rows) > MAX_ROWS
        else []
    )
    table = SectionTable(headers=["task", "trial", "component", "in basis", "check", "detail", "conversation_id"], rows=rows[:MAX_ROWS])
    return Section(title=title, tables=[table], notes=notes)


def _rows(row: dict[str, Any]) -> list[list[Any]]:
    info = json.loads(row["reward_info_json"])
    basis = set(info.get("reward_basis") or [])
    out = []
    for component in info.get("components") or []:
        name = component.get("component")
        counted = "yes" if name in basis else "no"
        if component.get("error"):
            out.append([row["task_id"], row["trial"], name, counted, "(component)", component["error"], row["id"]])
        for check in component.get("checks") or []:
            if not check.get("met"):
                out.append([row["task_id"], row["trial"], name, counted, check.get("subject"), _short(check.get("detail") or ""), row["id"]])
    return out


def _short(text: str) -> str:
    return text if len(text) <= MAX_DETAIL else text[: MAX_DETAIL - 1] + "…"
