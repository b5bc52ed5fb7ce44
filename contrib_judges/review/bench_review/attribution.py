"""The review role of failure attribution: a reviewer's verdict refines what the kernel's rules left to the agent.

The kernel labels every failed conversation by rules (docs/attribution.md) and leaves to the agent (rule `default`)
what no rule attributes to another party. A stored review whose first reviewer found a critical user-simulator
error in such a conversation moves it to `user-simulator`, source `review`, with the finding as evidence. A label a
rule gave another party is never changed; one an earlier review gave is set back to the agent when the reviews stored
now find no such error. Derived from the stored reviews after every `bench review`, so a killed review loses nothing.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from bench_kernel import Store, is_success

AGENT, USER_SIMULATOR = "agent", "user-simulator"


def apply_review_attributions(store: Store, run_id: str, arm: str, reviewer: str) -> int:
    """Set the attribution of the arm's failed conversations from the reviewer's stored reviews; how many changed."""
    findings = _critical_user_findings(store, run_id, reviewer)
    reviewed = {
        r["conversation_id"]
        for r in store.db.query("select conversation_id from reviews where run_id = ? and reviewer = ? and error is null", [run_id, reviewer])
    }
    changed = 0
    for row in store.conversations(run_id):
        if row["arm"] != arm or row["id"] not in reviewed:
            continue
        update = review_attribution(row, findings.get(row["id"], []))
        if update is not None:
            store.set_attribution(row["id"], *update)
            changed += 1
    return changed


def review_attribution(row: Mapping[str, Any], critical: list[dict[str, Any]]) -> tuple[str, dict[str, str]] | None:
    """The (label, evidence) a review gives a stored conversation, or None to leave its attribution as it is."""
    if is_success(row["reward"]) or row["termination_reason"] == "infrastructure_error":
        return None
    evidence = json.loads(row["attribution_evidence"]) if row.get("attribution_evidence") else {}
    by_review = evidence.get("source") == "review"
    left_to_agent = (row.get("attribution") or AGENT) == AGENT and evidence.get("rule", "default") == "default"
    if not (by_review or left_to_agent):
        return None  # a rule named another party: its evidence stands
    if critical:
        first = critical[0]
        more = f" (and {len(critical) - 1} more)" if len(critical) > 1 else ""
        wanted = (
            USER_SIMULATOR,
            {
                "rule": f"review:{first['category']}",
                "source": "review",
                "evidence": f"the reviewer found a critical user-simulator error at turn {first['turn_idx']}: {first['reason']}{more}",
            },
        )
    elif by_review:
        wanted = (AGENT, {"rule": "default", "source": "review", "evidence": "the reviewer found no critical user-simulator error"})
    else:
        return None
    return None if (row.get("attribution"), evidence) == (wanted[0], wanted[1]) else wanted


def _critical_user_findings(store: Store, run_id: str, reviewer: str) -> dict[str, list[dict[str, Any]]]:
    sql = """select f.conversation_id, f.category, f.turn_idx, f.reason from review_findings f
             join reviews r on r.conversation_id = f.conversation_id and r.reviewer = f.reviewer and r.mode = f.mode
             where f.run_id = ? and f.reviewer = ? and f.side = 'user' and f.severity = 'critical' and r.error is null
             order by f.conversation_id, f.mode, f.idx"""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in store.db.query(sql, [run_id, reviewer]):
        found[row["conversation_id"]].append(row)
    return found
