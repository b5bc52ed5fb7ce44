"""The validity card of a run's report: floors, ceiling and audit flags of the run's tasks, without loading the domain.

Its figures come from the run itself (the baseline arm is the do-nothing floor; the gold replay it checks at the
start), from the static flags the run recorded (`run.audit_flags`) and from `bench audit`'s cache in the same store.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from typing import Any

from bench_kernel import GOLD_FAILURES_EVENT, RunRecord, Store, TerminationReason, is_success, task_id_key

from .auditing import FLOORS
from .cache import read_audits
from .flags import FLAGS, STATIC_FLAGS
from .runs import EXCLUDED_EVENT, STATIC_FLAGS_EVENT

INFRA = TerminationReason.INFRASTRUCTURE_ERROR.value


def _events(store: Store, run_id: str, kind: str) -> list[dict[str, Any]]:
    rows = store.db.execute(
        "select data_json from events where run_id = ? and conversation_id is null and kind = ? order by id", [run_id, kind]
    ).fetchall()
    return [json.loads(row[0]) for row in rows]


def _recorded_flags(store: Store, run_id: str) -> dict[str, Any] | None:
    """The static flags the run recorded, merged over its starts and resumes (None for runs recorded before them)."""
    events = _events(store, run_id, STATIC_FLAGS_EVENT)
    if not events:
        return None
    merged: dict[str, Any] = {"domain": events[-1]["domain"], "fingerprint": events[-1]["fingerprint"], "task_hashes": {}, "flags": {}}
    for event in events:
        merged["task_hashes"].update(event["task_hashes"])
        merged["flags"].update(event["flags"])
    return merged


def validity_card(store: Store, run: RunRecord, rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The run's validity card (docs/audit.md): floors, ceiling, flagged counts, what is missing and how to get it."""
    tasks = sorted({r["task_id"] for r in rows if r["arm"] == "agent"})
    recorded = _recorded_flags(store, run.id)
    hashes = {t: recorded["task_hashes"][t] for t in tasks if t in recorded["task_hashes"]} if recorded else {}
    audits = read_audits(store, recorded["domain"], recorded["fingerprint"], hashes) if recorded and hashes else {}
    baseline = [r for r in rows if r["arm"] == "baseline" and r["termination_reason"] != INFRA]
    card: dict[str, Any] = {
        "tasks": len(tasks),
        "audited": len(audits),
        "floors": _floors(baseline, audits),
        "ceiling": _ceiling(store, run.id, tasks, audits),
        "flagged": _flagged(tasks, recorded, audits),
        "excluded": _excluded(store, run.id),
        "notes": [],
    }
    missing = [f for f in FLAGS if card["flagged"][f] is None]
    if missing:
        card["notes"].append(
            f"run `{audit_command(run)}` (with this --db) for {', '.join(missing)}"
            + (" and the talk-only and refuse floors" if len(audits) < len(tasks) else "")
        )
    return card


def _floors(baseline: Sequence[dict[str, Any]], audits: dict[str, dict[str, Any]]) -> dict[str, Any]:
    floors: dict[str, Any] = {}
    for name in FLOORS:
        if name == FLOORS[0] and baseline:
            passed = sum(is_success(r["reward"]) for r in baseline)
            floors[name] = {"pass_rate": round(passed / len(baseline), 6), "n": len(baseline), "source": "baseline arm"}
            continue
        rewards = [a["floors"][name] for a in audits.values() if a["floors"].get(name) is not None]
        floors[name] = (
            {"pass_rate": round(sum(map(is_success, rewards)) / len(rewards), 6), "n": len(rewards), "source": "bench audit"} if rewards else None
        )
    return floors


def _ceiling(store: Store, run_id: str, tasks: Sequence[str], audits: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    rewards = [a["ceiling"] for a in audits.values() if a["ceiling"] is not None]
    if rewards and len(audits) == len(tasks):
        return {"pass_rate": round(sum(map(is_success, rewards)) / len(rewards), 6), "n": len(rewards), "source": "bench audit"}
    if not tasks:
        return None
    failing = {f["task_id"] for e in _events(store, run_id, GOLD_FAILURES_EVENT) for f in e.get("tasks", [])}
    ok = sum(t not in failing for t in tasks)
    return {"pass_rate": round(ok / len(tasks), 6), "n": len(tasks), "source": "gold replay"}


def _flagged(tasks: Sequence[str], recorded: dict[str, Any] | None, audits: dict[str, dict[str, Any]]) -> dict[str, int | None]:
    counts: dict[str, int | None] = {}
    complete = bool(tasks) and len(audits) == len(tasks)
    for flag in FLAGS:
        if complete:
            counts[flag] = sum(flag in a["flags"] for a in audits.values())
        elif flag in STATIC_FLAGS and recorded is not None:
            counts[flag] = sum(flag in recorded["flags"].get(t, {}) for t in tasks)
        else:
            counts[flag] = None
    return counts


def _excluded(store: Store, run_id: str) -> dict[str, Any] | None:
    found = store.last_run_event(run_id, (EXCLUDED_EVENT,))
    return None if found is None else {"flags": found["flags"], "tasks": len(found["tasks"]), "task_ids": sorted(found["tasks"], key=task_id_key)}


def audit_command(run: RunRecord) -> str:
    """The `bench audit` command line for a run's domain and data."""
    config = run.config
    args = ["bench", "audit"]
    plugins = config.get("plugins") or []
    args += [a for p in plugins for a in ("--plugin", p)] or ["--domain", ", ".join(run.task_sets) or str(config.get("domain"))]
    for key in ("data_dir", "tasks_file", "split"):
        if config.get(key):
            args += [f"--{key.replace('_', '-')}", str(config[key])]
    return shlex.join(args)


def validity_lines(card: dict[str, Any]) -> list[str]:
    """The card as text lines."""
    if not card:
        return []
    floors = ", ".join(f"{name} {_rate(f)}" for name, f in card["floors"].items())
    lines = [f"floors (pass rate): {floors}", f"ceiling (pass rate): {_rate(card['ceiling'])}"]
    known = {f: n for f, n in card["flagged"].items() if n is not None}
    lines.append(f"flagged of {card['tasks']} tasks: " + (", ".join(f"{f} {n}" for f, n in known.items()) or "not known"))
    if card.get("excluded"):
        lines.append(f"excluded before the run: {card['excluded']['tasks']} task(s) flagged {', '.join(card['excluded']['flags'])}")
    return lines + [f"note: {n}" for n in card["notes"]]


def _rate(figure: dict[str, Any] | None) -> str:
    return "unknown" if figure is None else f"{figure['pass_rate']:.3f} ({figure['source']}, n={figure['n']})"


def validity_rows(card: dict[str, Any]) -> list[dict[str, Any]]:
    """The card as summary rows (metric, value, low, high, n, errors, n_of, error) for CSV."""
    if not card:
        return []
    empty = {"low": None, "high": None, "errors": 0, "error": None}
    rows = [
        {
            "metric": f"validity.floor.{name}",
            "value": f["pass_rate"] if f else None,
            "n": f["n"] if f else 0,
            "n_of": f"tasks ({f['source']})" if f else "tasks (no audit)",
            **empty,
        }
        for name, f in card["floors"].items()
    ]
    ceiling = card["ceiling"]
    rows.append(
        {
            "metric": "validity.ceiling",
            "value": ceiling["pass_rate"] if ceiling else None,
            "n": ceiling["n"] if ceiling else 0,
            "n_of": f"tasks ({ceiling['source']})" if ceiling else "tasks",
            **empty,
        }
    )
    rows += [
        {
            "metric": f"validity.flagged.{flag}",
            "value": count,
            "n": card["tasks"],
            "n_of": "tasks",
            **empty,
            "error": None if count is not None else "not audited: run bench audit",
        }
        for flag, count in card["flagged"].items()
    ]
    return rows
