"""The `review` report section: what the reviewers found in a run, by category, finding by finding, and how far two
reviewers agree (the kernel's judge agreement: observed agreement and Cohen's kappa per conversation-level label)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import ReportSection, RunView, Section, SectionTable, is_success, judge_agreement

from .rubric import CATEGORIES, MODES


@attrs.define(kw_only=True)
class ReviewSection(ReportSection):
    """Conversation review: error categories of the agent and the user simulator, findings, reviewer agreement."""

    name: str = "review"
    title: str = "Conversation review"
    description: str = "What `bench review` found: agent and user-simulator errors by category, each finding, agreement of two reviewers."

    def build(self, view: RunView) -> Section:
        """The section for one run (empty with a note when the run was never reviewed)."""
        reviews = view.query("select * from reviews where run_id = ? order by conversation_id, reviewer, mode", [view.run.id])
        if not reviews:
            return Section(title=self.title, notes=["this run has not been reviewed: `bench review RUN`"])
        findings = view.query("select * from review_findings where run_id = ? order by conversation_id, reviewer, mode, idx", [view.run.id])
        conversations = {c["id"]: c for c in view.conversations(arm=None)}
        by_review: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        for f in findings:
            by_review.setdefault((f["conversation_id"], f["reviewer"], f["mode"]), []).append(f)
        tables = [_overview(reviews, by_review), *_categories(reviews, findings), _findings(findings, conversations)]
        tables += [t for t in (_agreement(reviews, by_review), _errors(reviews)) if t is not None]
        return Section(title=self.title, tables=tables, notes=_notes(reviews, by_review, conversations, view))


def _usable(reviews: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in reviews if r["error"] is None]


def _groups(reviews: Iterable[Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(reviewer, mode) pairs in a stable order: modes as the rubric lists them, reviewers as first seen."""
    seen = dict.fromkeys((r["reviewer"], r["mode"]) for r in reviews)
    return sorted(seen, key=lambda g: (MODES.index(g[1]) if g[1] in MODES else len(MODES), list(seen).index(g)))


def _unreliable(found: Iterable[Mapping[str, Any]]) -> bool:
    return any(f["side"] == "user" and f["severity"] == "critical" for f in found)


def _overview(reviews: list[dict[str, Any]], by_review: Mapping[tuple[str, str, str], list[dict[str, Any]]]) -> SectionTable:
    rows = []
    for reviewer, mode in _groups(reviews):
        mine = [r for r in reviews if (r["reviewer"], r["mode"]) == (reviewer, mode)]
        ok = _usable(mine)
        found = [by_review.get((r["conversation_id"], reviewer, mode), []) for r in ok]
        models = ", ".join(sorted({r["model"] for r in mine}))
        rows.append(
            [
                reviewer,
                models,
                mode,
                len(ok),
                len(mine) - len(ok),
                sum(1 for f in found if any(x["side"] == "agent" for x in f)) if mode == "full" else None,
                sum(1 for f in found if any(x["side"] == "user" for x in f)),
                sum(1 for f in found if _unreliable(f)),
            ]
        )
    return SectionTable(
        title="Reviews (conversations)",
        rows=rows,
        headers=["reviewer", "model", "mode", "reviewed", "reply errors", "with agent errors", "with user errors", "unreliable verdicts"],
    )


def _categories(reviews: list[dict[str, Any]], findings: list[dict[str, Any]]) -> list[SectionTable]:
    """Per reviewer and mode, every category of each side it checks: conversations, findings, critical findings."""
    tables = []
    for reviewer, mode in _groups(_usable(reviews)):
        mine = [f for f in findings if (f["reviewer"], f["mode"]) == (reviewer, mode)]
        rows = []
        for side in ("agent", "user") if mode == "full" else ("user",):
            for category in CATEGORIES[side]:
                hits = [f for f in mine if f["side"] == side and f["category"] == category]
                rows.append(
                    [side, category, len({f["conversation_id"] for f in hits}), len(hits), sum(1 for f in hits if f["severity"] == "critical")]
                )
        tables.append(
            SectionTable(
                title=f"Error categories ({reviewer}, {mode})", rows=rows, headers=["side", "category", "conversations", "findings", "critical"]
            )
        )
    return tables


def _findings(findings: list[dict[str, Any]], conversations: Mapping[str, Mapping[str, Any]]) -> SectionTable:
    rows = []
    for f in findings:
        c = conversations.get(f["conversation_id"], {})
        rows.append(
            [
                f["conversation_id"],
                c.get("task_id"),
                c.get("trial"),
                c.get("reward"),
                f["reviewer"],
                f["mode"],
                f["side"],
                f["category"],
                f["severity"],
                f["turn_idx"],
                f["reason"],
            ]
        )
    return SectionTable(
        title="Findings",
        rows=rows,
        headers=["conversation_id", "task", "trial", "reward", "reviewer", "mode", "side", "category", "severity", "turn", "reason"],
    )


def _labels(found: Sequence[Mapping[str, Any]], mode: str, categories: Iterable[tuple[str, str]]) -> dict[str, bool]:
    """What one review says about one conversation, as yes/no labels two reviewers can agree on."""
    labels = {"user error": any(f["side"] == "user" for f in found), "unreliable verdict": _unreliable(found)}
    if mode == "full":
        labels["agent error"] = any(f["side"] == "agent" for f in found)
    for side, category in categories:
        labels[f"{side}: {category}"] = any(f["side"] == side and f["category"] == category for f in found)
    return labels


def _agreement(reviews: list[dict[str, Any]], by_review: Mapping[tuple[str, str, str], list[dict[str, Any]]]) -> SectionTable | None:
    """Per mode, the first two reviewers' agreement on each label over the conversations both reviewed."""
    rows = []
    usable = _usable(reviews)
    for mode in MODES:
        reviewers = list(dict.fromkeys(r["reviewer"] for r in usable if r["mode"] == mode))
        if len(reviewers) < 2:
            continue
        first, second = reviewers[:2]
        both = sorted(
            {r["conversation_id"] for r in usable if r["reviewer"] == first and r["mode"] == mode}
            & {r["conversation_id"] for r in usable if r["reviewer"] == second and r["mode"] == mode}
        )
        used = sorted(
            {
                (f["side"], f["category"])
                for (cid, who, m), fs in by_review.items()
                if m == mode and who in (first, second) and cid in both
                for f in fs
            }
        )
        tables: dict[str, Counter[tuple[bool, bool]]] = {}
        for cid in both:
            a = _labels(by_review.get((cid, first, mode), []), mode, used)
            b = _labels(by_review.get((cid, second, mode), []), mode, used)
            for label in a:
                tables.setdefault(label, Counter())[(a[label], b[label])] += 1
        for label, table in tables.items():
            found = judge_agreement(table)
            rows.append([mode, f"{first} vs {second}", label, found.items, found.observed, found.kappa])
    if not rows:
        return None
    return SectionTable(
        title="Reviewer agreement (per conversation; kappa empty when both gave one answer only)",
        rows=rows,
        headers=["mode", "reviewers", "label", "conversations", "observed agreement", "kappa"],
    )


def _errors(reviews: list[dict[str, Any]]) -> SectionTable | None:
    failed = [r for r in reviews if r["error"] is not None]
    if not failed:
        return None
    return SectionTable(
        title="Reviews that failed (reviewed again by the next `bench review`)",
        headers=["conversation_id", "reviewer", "mode", "error"],
        rows=[[r["conversation_id"], r["reviewer"], r["mode"], r["error"]] for r in failed],
    )


def _notes(
    reviews: list[dict[str, Any]],
    by_review: Mapping[tuple[str, str, str], list[dict[str, Any]]],
    conversations: Mapping[str, Mapping[str, Any]],
    view: RunView,
) -> list[str]:
    scored = [c for c in conversations.values() if c["arm"] == "agent" and c["termination_reason"] != "infrastructure_error"]
    failed = sum(1 for c in scored if not is_success(c["reward"]))
    reviewed = {r["conversation_id"] for r in _usable(reviews)}
    notes = [f"{len(reviewed & {c['id'] for c in scored})} of {len(scored)} scored agent conversations reviewed ({failed} of them failed the task)"]
    unreliable = sorted({cid for (cid, _, _), fs in by_review.items() if _unreliable(fs)})
    if unreliable:
        notes.append(
            f"{len(unreliable)} conversation(s) with a critical user-simulator error: their task verdicts are "
            f"unreliable ({', '.join(unreliable[:5])}{', ...' if len(unreliable) > 5 else ''})"
        )
    notes.append("review model calls are in the run's cost table under arm 'review'")
    return notes
