"""bench-review's tables in the results database, and how one conversation's review is written and read back.

`reviews`: one row per conversation, reviewer role and mode (the key): the model, when, the reviewer's summary, or the
error that kept the reply from being a review (then `reply_text` keeps what came back). `review_findings`: one row
per mistake found (side, category, severity, turn, reason). A conversation's rows are replaced in one transaction,
so reviewing again never duplicates them and a killed review leaves each conversation wholly reviewed or not at all.
"""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database, Migrations

from bench_kernel import Store, utc_now

from .rubric import Review

migrations = Migrations("bench-review")
KEY = ("conversation_id", "reviewer", "mode")


@migrations(name="m001_reviews")
def m001_reviews(db: Database) -> None:
    """The reviews and their findings."""
    db.table("reviews").create(
        {
            "conversation_id": str,
            "reviewer": str,
            "mode": str,
            "run_id": str,
            "model": str,
            "reviewed_utc": str,
            "summary": str,
            "error": str,
            "reply_text": str,
        },
        pk=KEY,
    )
    db.table("reviews").create_index(["run_id"])
    db.table("review_findings").create(
        {
            "conversation_id": str,
            "reviewer": str,
            "mode": str,
            "idx": int,
            "run_id": str,
            "side": str,
            "category": str,
            "severity": str,
            "turn_idx": int,
            "reason": str,
        },
        pk=(*KEY, "idx"),
    )
    db.table("review_findings").create_index(["run_id"])


def save_review(store: Store, key: dict[str, str], run_id: str, model: str, outcome: Review | str, reply_text: str | None = None) -> None:
    """Replace one conversation's review by one reviewer in one mode: its findings, or the error (a str) and the reply."""
    row: dict[str, Any] = {**key, "run_id": run_id, "model": model, "reviewed_utc": utc_now(), "summary": None, "error": None, "reply_text": None}
    findings: list[dict[str, Any]] = []
    if isinstance(outcome, Review):
        row["summary"] = outcome.summary
        findings = [
            {
                **key,
                "idx": i,
                "run_id": run_id,
                "side": f.side,
                "category": f.category,
                "severity": f.severity,
                "turn_idx": f.turn,
                "reason": f.reason,
            }
            for i, f in enumerate(outcome.findings)
        ]
    else:
        row.update(error=outcome, reply_text=reply_text)
    where = " and ".join(f"{column} = ?" for column in KEY)
    values = [key[column] for column in KEY]
    with store.write():  # one of the store's writes: the ledger rows of this loop turn commit first
        store.db.execute(f"delete from review_findings where {where}", values)
        store.db.execute(f"delete from reviews where {where}", values)
        store.db.table("reviews").insert(row)
        if findings:
            store.db.table("review_findings").insert_all(findings)


def reviewed_keys(store: Store, run_id: str) -> set[tuple[str, str, str]]:
    """(conversation, reviewer, mode) of the run's reviews that hold a review (not an error): a resume skips them."""
    rows = store.db.query("select conversation_id, reviewer, mode from reviews where run_id = ? and error is null", [run_id])
    return {(r["conversation_id"], r["reviewer"], r["mode"]) for r in rows}
