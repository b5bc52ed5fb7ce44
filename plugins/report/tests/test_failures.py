"""The "Failed checks" section: every failed check of the failed conversations, those in the reward basis first, each part
in reading order, cut at MAX_ROWS; and through `bench` on the practice domain."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import attrs
from bench_report.components import FailedChecks
from bench_report.failures import MAX_ROWS
from click.testing import Result


@attrs.frozen
class Stored:
    """A stand-in for the run's read-only view: its conversation rows."""

    rows: list[dict[str, Any]]

    def conversations(self) -> list[dict[str, Any]]:
        return self.rows


def conversation(task_id: str, trial: int = 0, reward: float = 0.0, checks: int = 1) -> dict[str, Any]:
    """A stored conversation with a failed DB check in the basis and `checks` failed ACTION checks outside it."""
    components = [
        {"component": "DB", "checks": [{"subject": "agent db", "met": False, "detail": "1 record differs"}]},
        {"component": "ACTION", "checks": [{"subject": f"a{n} act", "met": False, "detail": "x" * 500} for n in range(checks)]},
        {"component": "COMMUNICATE", "error": "judge unreachable", "checks": [{"subject": "said", "met": True}]},
    ]
    info = {"reward_basis": ["DB"], "components": components}
    return {"id": f"r/agent/{task_id}/{trial}", "task_id": task_id, "trial": trial, "reward": reward, "reward_info_json": json.dumps(info)}


def test_failed_checks_list_the_basis_first_each_part_in_reading_order() -> None:
    section = FailedChecks().build(Stored([conversation("10"), conversation("2", trial=1), conversation("2"), conversation("1", reward=1.0)]))
    assert section is not None and section.title == "Failed checks" and not section.notes
    [table] = section.tables
    assert table.headers == ["task", "trial", "component", "in basis", "check", "detail", "conversation_id"]
    assert [(r[0], r[1], r[2], r[3]) for r in table.rows] == [
        ("2", 0, "DB", "yes"),
        ("2", 1, "DB", "yes"),
        ("10", 0, "DB", "yes"),
        *((task, trial, component, "no") for task, trial in (("2", 0), ("2", 1), ("10", 0)) for component in ("ACTION", "COMMUNICATE")),
    ]  # task 1 passed: none of its checks
    assert ["2", 0, "COMMUNICATE", "no", "(component)", "judge unreachable", "r/agent/2/0"] in table.rows
    assert table.rows[3][5] == "x" * 399 + "…"  # a long detail is cut


def test_failed_checks_are_cut_at_max_rows_keeping_the_basis_and_show_nothing_without_a_failure() -> None:
    section = FailedChecks().build(Stored([conversation("t", checks=MAX_ROWS)]))
    assert section is not None and len(section.tables[0].rows) == MAX_ROWS and section.tables[0].rows[0][2] == "DB"
    assert section.notes == [
        f"the first {MAX_ROWS} of {MAX_ROWS + 2} failed checks, those in the reward basis first: `bench view` shows every conversation's checks"
    ]
    assert FailedChecks().build(Stored([conversation("t", reward=1.0)])) is None


def test_a_run_reports_its_failed_checks_in_every_format(bench: Callable[..., Result], runs: str) -> None:
    shown = bench("report", "idle", "--db", runs, "--section", "failed-checks", "--format", "json")
    assert shown.exit_code == 0, shown.output
    section = json.loads(shown.stdout)
    assert (section["title"], section["plugin"], section["error"]) == ("Failed checks", "report", None)
    rows = section["tables"][0]["rows"]
    assert ["take_kettle", 0, "DB", "yes", "agent db", rows[0][5], "idle/agent/take_kettle/0"] == rows[0]
    assert rows[0][5].endswith("1 record differs: items/I-1: count differs")
    assert [
        "take_kettle",
        1,
        "ACTION",
        "no",
        "a1 take_item",
        'expected take_item(item_id="I-1"), compared on the keys the call gives; never called (no tool called)',
        "idle/agent/take_kettle/1",
    ] in rows
    text = bench("report", "idle", "--db", runs, "--section", "failed-checks").stdout
    assert text.startswith("Failed checks (report)\ntask ") and "never called (no tool called)" in text
    assert not any(s["name"] == "failed-checks" for s in json.loads(bench("report", "good", "--db", runs, "--format", "json").stdout)["sections"])
