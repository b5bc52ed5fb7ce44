"""The report's attribution card: failed agent conversations by label, and pass^k without the non-agent failures."""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from bench_kernel import Estimate, Store, TaskOutcomes, TerminationReason, is_success, pass_hat_k_estimate

from .attribution import AGENT, LABELS, doubted_verdicts

INFRA = TerminationReason.INFRASTRUCTURE_ERROR.value
UNLABELLED = "unlabelled"
"""Failed conversations stored before bench attributed failures (store migration m014)."""


def attribution_card(
    rows: Sequence[dict[str, Any]], superseded: int, k_max: int, seed: str, outcomes_of: Callable[[list[dict[str, Any]]], list[TaskOutcomes]]
) -> dict[str, Any]:
    """Counts by label (and rule) of the agent arm's failed conversations, and pass^k over those attributable to it.

    `rows` are the agent arm's newest rows (infrastructure errors included); a conversation is attributable to the
    agent when it passed or its failure is labelled `agent` (or was stored unlabelled). A task whose every trial is a
    non-agent failure drops out of the second figure.
    """
    failed = [r for r in rows if r["termination_reason"] == INFRA or not is_success(r["reward"])]
    counts = Counter(r.get("attribution") or UNLABELLED for r in failed)
    rules = Counter(f"{r.get('attribution') or UNLABELLED}:{_rule(r)}" for r in failed)
    scored = [r for r in rows if r["termination_reason"] != INFRA]
    kept = [r for r in scored if is_success(r["reward"]) or (r.get("attribution") or AGENT) == AGENT]
    outcomes = outcomes_of(kept)
    all_tasks = {r["task_id"] for r in scored}
    doubtful = [r["id"] for r in scored if is_success(r["reward"]) and doubted_verdicts(_components(r))]
    return {
        "failed": len(failed),
        "counts": {label: counts.get(label, 0) for label in (*LABELS, *([UNLABELLED] if counts.get(UNLABELLED) else []))},
        "rules": dict(sorted(rules.items())),
        "pass_hat_k_agent": {str(k): _est(pass_hat_k_estimate(outcomes, k, seed=f"{seed}:agent")) for k in range(1, k_max + 1)},
        "conversations": len(kept),
        "conversations_dropped": len(scored) - len(kept),
        "tasks": len(outcomes),
        "tasks_dropped": len(all_tasks) - len(outcomes),
        "superseded": superseded,
        "doubtful_passes": len(doubtful),
        "doubtful_examples": doubtful[:5],
    }


def _components(row: dict[str, Any]) -> list[dict[str, Any]]:
    return list(json.loads(row["reward_info_json"]).get("components", [])) if row.get("reward_info_json") else []


def superseded_count(store: Store, run_id: str) -> int:
    """How many of the run's agent conversations a `--retry-attributed` replay replaced."""
    sql = "select count(*) from conversations where run_id = ? and arm = 'agent' and superseded_by is not null"
    return int(store.db.execute(sql, [run_id]).fetchone()[0])


def _rule(row: dict[str, Any]) -> str:
    evidence = json.loads(row["attribution_evidence"]) if row.get("attribution_evidence") else {}
    return str(evidence.get("rule") or "-")


def _est(e: Estimate) -> dict[str, Any]:
    number = lambda x: None if math.isnan(x) else round(x, 6)  # noqa: E731
    return {"value": number(e.value), "low": number(e.low), "high": number(e.high), "n": e.n}


def card_rows(card: dict[str, Any]) -> list[dict[str, Any]]:
    """The card as summary rows (CSV): `attribution[LABEL]`, `pass^k[attributable]`, what dropped out, what was replayed."""
    if not card:
        return []
    empty = {"low": None, "high": None, "errors": 0}
    rows = [
        {"metric": f"attribution[{label}]", "value": n, **empty, "n": card["failed"], "n_of": "failed agent conversations"}
        for label, n in card["counts"].items()
    ]
    rows += [{"metric": f"pass^{k}[attributable]", **v, "errors": 0, "n_of": "tasks"} for k, v in card["pass_hat_k_agent"].items()]
    rows += [
        {
            "metric": "attribution.conversations_dropped",
            "value": card["conversations_dropped"],
            **empty,
            "n": card["conversations"] + card["conversations_dropped"],
            "n_of": "scored agent conversations",
        },
        {"metric": "attribution.tasks_dropped", "value": card["tasks_dropped"], **empty, "n": card["tasks"] + card["tasks_dropped"], "n_of": "tasks"},
        {
            "metric": "retry.superseded",
            "value": card["superseded"],
            **empty,
            "n": card["superseded"],
            "n_of": "agent conversations replaced by --retry-attributed replays",
        },
        {
            "metric": "attribution.doubtful_passes",
            "value": card.get("doubtful_passes", 0),
            **empty,
            "n": card["conversations"] + card["conversations_dropped"],
            "n_of": "scored agent conversations",
        },
    ]
    return rows


def card_lines(card: dict[str, Any]) -> list[str]:
    """The card in a few lines of text."""
    if not card:
        return []
    counts = ", ".join(f"{label} {n}" for label, n in card["counts"].items())
    figures = ", ".join(f"pass^{k} {_figure(v)}" for k, v in card["pass_hat_k_agent"].items()) or "no scored conversation"
    lines = [
        f"{card['failed']} failed agent conversations by attribution: {counts} (docs/attribution.md)",
        f"attributable to the agent: {figures}; {card['conversations_dropped']} non-agent failures left out, "
        f"{card['tasks_dropped']} tasks dropped (every trial a non-agent failure)",
    ]
    if card.get("doubtful_passes"):
        lines.append(
            f"{card['doubtful_passes']} passes rest on a judge verdict met=true whose own justification describes a "
            f"violation (tau2 #436; rule inconsistent_verdict), e.g. {', '.join(card['doubtful_examples'][:3])}"
        )
    if card["superseded"]:
        lines.append(f"{card['superseded']} conversations replaced by --retry-attributed replays (the newest row of each trial counts)")
    return lines


def _figure(v: dict[str, Any]) -> str:
    if v["value"] is None:
        return "-"
    return f"{v['value']:.3f} [{v['low']:.3f}, {v['high']:.3f}] over {v['n']} tasks"
