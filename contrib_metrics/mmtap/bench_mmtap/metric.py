"""The mmtap metric: MM-tau-p²'s twelve metrics per conversation and per run, and the mm-tap composite.

Per conversation: CFA, TE, UES, ERR, RTC, CP, CR, IAS, SR (None when a ratio has nothing to count).
Per run (`bench report`): each metric micro-averaged (counters summed over conversations, as MM-tau-p²'s
consolidated report does) and per-conversation averaged; ARGA (pass^1 of conversations with an ASR
error), MRS and TO (with --paired: pass^1 voice / text, agent turns voice / text - 1), pass^1, and the
composite S = a*(CFA*pass^1) + b*(MRS + ARGA + ERR)/3 + g*(TE + 1/(1+UES) + 1/(1+TO))/3 + d*IAS with
weights 0.35/0.35/0.2/0.1 (BENCH_MMTAP_WEIGHTS="a,b,g,d" to change them). A term that is undefined
(no --paired run for MRS and TO, no ASR error for ARGA, no error for ERR, no state change for IAS) is left
out of its group and the group's weight is shared by the others; the report says which were left out.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Mapping
from typing import Any

import attrs

from bench_kernel import Metric, MetricContext, MetricResult, RunView

from .counts import count
from .labels import LABELS, Labels, agreement, judge_labels, kappa, rules_labels

JUDGE, SECOND_JUDGE = "mmtap-judge", "mmtap-judge-2"

WEIGHTS = (0.35, 0.35, 0.2, 0.1)
RATIOS: dict[str, tuple[str, str]] = {
    "CFA": ("fields_heard", "fields_said"),
    "TE": ("necessary_agent_messages", "agent_messages"),
    "UES": ("restatements", "user_messages"),
    "ERR": ("recovered", "errors"),
    "RTC": ("recovery_turns", "recovered"),
    "CP": ("clarifications_useful", "clarifications_asked"),
    "CR": ("clarifications_useful", "clarifications_needed"),
    "IAS": ("confirmed", "irreversible"),
    "SR": ("critical_confirmed", "critical_irreversible"),
}


def ratio(counts: Mapping[str, int], name: str) -> float | None:
    """One metric from counters (None when its denominator is 0)."""
    top, bottom = RATIOS[name]
    return counts[top] / counts[bottom] if counts[bottom] else None


def weights() -> tuple[float, float, float, float]:
    """The composite's weights (BENCH_MMTAP_WEIGHTS overrides; they must sum to 1)."""
    given = os.environ.get("BENCH_MMTAP_WEIGHTS")
    if not given:
        return WEIGHTS
    parts = tuple(float(x) for x in given.split(","))
    if len(parts) != 4 or abs(sum(parts) - 1.0) > 1e-9:
        raise ValueError(f"BENCH_MMTAP_WEIGHTS must be four weights summing to 1, got {given!r}")
    return parts


@attrs.define(kw_only=True)
class MmTap(Metric):
    """MM-tau-p²'s modality metrics, decided deterministically from the trajectory and the voice channel's log."""

    name: str = "mmtap"
    description: str = "MM-tau-p2's CFA, TE, UES, ERR, RTC, CP, CR, IAS, SR per conversation; ARGA, MRS, TO and mm-tap per run."

    async def score(self, context: MetricContext) -> MetricResult:
        """The counters of one conversation and its ratios."""
        turns = [(e.message_index, e.data) for e in context.events.of_kind("voice.turn") if e.data.get("speaker") == "user"]
        specs = context.final_env.agent_tools.specs()
        mutating = {name for name, spec in specs.items() if spec.mutates}
        (source, labels), second = await self._labels(context)
        counts = count(context.messages, turns, mutating, labels)
        values: dict[str, float | None] = {name.lower(): ratio(counts.as_dict(), name) for name in RATIOS}
        details: dict[str, Any] = {"cfa": {"counts": counts.as_dict(), "asr_error": counts.misheard_turns > 0, "labels_by": source}}
        if second is not None:
            table = agreement(labels, second[1])
            cells = [sum(t[k] for t in table.values()) for k in ("yes_yes", "no_no")]
            total = sum(sum(t.values()) for t in table.values())
            values["judge_agreement"] = sum(cells) / total if total else None
            details["judge_agreement"] = {"first": source, "second": second[0], "tables": table, "split": _split(labels, second[1])}
        return MetricResult(values=values, details=details)

    async def _labels(self, context: MetricContext) -> tuple[tuple[str, Labels], tuple[str, Labels] | None]:
        """The labels the counters use (the judge's when configured, else the rules'), and a second opinion if any."""
        models, messages, cid = context.models, context.messages, context.result.conversation_id
        if models is None or not models.has(JUDGE):
            return ("rules", rules_labels(messages)), None
        first = (JUDGE, await judge_labels(models, JUDGE, messages, cid))
        if models.has(SECOND_JUDGE):
            return first, (SECOND_JUDGE, await judge_labels(models, SECOND_JUDGE, messages, cid))
        return first, ("rules", rules_labels(messages))

    def summarize(self, view: RunView) -> dict[str, float | None]:
        """Micro and per-conversation averages, ARGA, MRS, TO, pass^1 and the composite; each noise level of a sweep apart."""
        arms = sorted({c["arm"] for c in view.conversations(arm=None)} - {"baseline", "text"}, key=lambda a: (a != "agent", a))
        out: dict[str, float | None] = {}
        for arm in arms:
            figures = self._arm_figures(view, arm)
            suffix = "" if arm == "agent" else f" [{arm}]"
            out.update({f"{name}{suffix}": value for name, value in figures.items()})
        out.update(judge_agreement(view))
        return out

    def _arm_figures(self, view: RunView, arm: str) -> dict[str, float | None]:
        rows = {c["id"]: c for c in view.conversations(arm=arm)}
        per: list[tuple[dict[str, int], bool, float | None]] = []
        for value in view.values("mmtap.cfa", plugin=view.plugin, arm=arm):
            details = json.loads(value["details_json"] or "{}")
            if "counts" in details and value["conversation_id"] in rows:
                per.append((details["counts"], bool(details.get("asr_error")), rows[value["conversation_id"]]["reward"]))
        if not per:
            return {}
        total = {k: sum(c[k] for c, _, _ in per) for k in per[0][0]}
        out: dict[str, float | None] = {}
        for name in RATIOS:
            out[f"{name} (micro)"] = ratio(total, name)
            each = [r for r in (ratio(c, name) for c, _, _ in per) if r is not None]
            out[f"{name} (per conversation)"] = statistics.fmean(each) if each else None
        out.update(run_level(view, per))
        out.update(composite(out))
        return out


def _passed(reward: float | None) -> float:
    return 1.0 if reward is not None and reward >= 1.0 - 1e-6 else 0.0


def run_level(view: RunView, per: list[tuple[dict[str, int], bool, float | None]]) -> dict[str, float | None]:
    """pass^1, ARGA (pass^1 where the agent misheard something), and with a paired run MRS and TO."""
    text = view.conversations(arm="text")
    typed = sum(1 for r in text for m in view.messages(r["id"]) if m["role"] == "assistant")
    return paired_figures(per, [r["reward"] for r in text] if text else None, typed)


def paired_figures(
    per: list[tuple[dict[str, int], bool, float | None]], text_rewards: list[float | None] | None, text_agent_messages: int
) -> dict[str, float | None]:
    """pass^1, ARGA, and (given the text arm's rewards and agent messages) MRS and TO; None where undefined."""
    out: dict[str, float | None] = {"pass^1": statistics.fmean(_passed(r) for _, _, r in per)}
    with_error = [_passed(r) for _, error, r in per if error]
    out["ARGA"] = statistics.fmean(with_error) if with_error else None
    out["MRS"] = out["TO"] = None
    if text_rewards:
        pass_text = statistics.fmean(_passed(r) for r in text_rewards)
        out["MRS"] = out["pass^1"] / pass_text if pass_text else None  # type: ignore[operator]
        spoken = sum(c["agent_messages"] for c, _, _ in per)
        out["TO"] = spoken / text_agent_messages - 1 if text_agent_messages else None
    return out


def composite(figures: Mapping[str, float | None]) -> dict[str, Any]:
    """mm-tap from the micro figures; undefined terms leave their group, whose weight the others share."""
    a, b, g, d = weights()
    pass1 = figures.get("pass^1")
    cfa = figures.get("CFA (micro)")
    ues, to = figures.get("UES (micro)"), figures.get("TO")
    groups = [
        (a, [cfa * pass1 if cfa is not None and pass1 is not None else None]),
        (b, [figures.get("MRS"), figures.get("ARGA"), figures.get("ERR (micro)")]),
        (g, [figures.get("TE (micro)"), None if ues is None else 1 / (1 + ues), None if to is None or to <= -1 else 1 / (1 + to)]),
        (d, [figures.get("IAS (micro)")]),
    ]
    used = [(w, [t for t in terms if t is not None]) for w, terms in groups]
    kept = [(w, terms) for w, terms in used if terms]
    weight = sum(w for w, _ in kept)
    score = sum(w * statistics.fmean(terms) for w, terms in kept) / weight if weight else None
    missing = sum(1 for _, terms in groups for t in terms if t is None)
    return {"mm-tap": score, "mm-tap terms left out (undefined)": float(missing)}


def _split(first: Labels, second: Labels) -> list[dict[str, Any]]:
    """The verdicts two labelers split on: message index, label and each one's verdict."""
    return [
        {"message": i, "label": label, "first": value, "second": second[i][label]}
        for i in sorted(set(first) & set(second))
        for label, value in first[i].items()
        if label in second[i] and second[i][label] != value
    ]


def judge_agreement(view: RunView) -> dict[str, float | None]:
    """Per label, over every conversation two labelers scored: observed agreement, Cohen's kappa and the verdicts compared."""
    tables: dict[str, dict[str, int]] = {}
    pair, split_conversations, scored = "", 0, 0
    kept = {c["id"] for c in view.conversations(arm=None) if c["arm"] != "baseline"}
    for value in view.values("mmtap.judge_agreement", plugin=view.plugin, arm=None):
        if value["conversation_id"] not in kept:
            continue
        found = json.loads(value["details_json"] or "{}")
        if "tables" not in found:
            continue
        scored += 1
        pair = f"{found['first']} vs {found['second']}"
        split_conversations += bool(found.get("split"))
        for label, cells in found["tables"].items():
            into = tables.setdefault(label, dict.fromkeys(cells, 0))
            for key, n in cells.items():
                into[key] += n
    if not scored:
        return {}
    out: dict[str, float | None] = {
        f"judge agreement: conversations ({pair})": float(scored),
        "judge agreement: conversations with a split verdict": float(split_conversations),
    }
    for label in LABELS:
        cells = tables.get(label)
        if cells and sum(cells.values()):
            observed, k = kappa(cells)
            out[f"judge agreement: {label} (observed)"] = observed
            out[f"judge agreement: {label} (kappa)"] = k
            out[f"judge agreement: {label} (verdicts)"] = float(sum(cells.values()))
    return out
