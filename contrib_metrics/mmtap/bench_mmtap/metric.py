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

WEIGHTS = (0.35, 0.35, 0.2, 0.1)
RATIOS: dict[str, tuple[str, str]] = {
    "CFA": ("fields_heard", "fields_said"), "TE": ("necessary_agent_messages", "agent_messages"),
    "UES": ("restatements", "user_messages"), "ERR": ("recovered", "errors"), "RTC": ("recovery_turns", "recovered"),
    "CP": ("clarifications_useful", "clarifications_asked"), "CR": ("clarifications_useful", "clarifications_needed"),
    "IAS": ("confirmed", "irreversible"), "SR": ("critical_confirmed", "critical_irreversible"),
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
        counts = count(context.messages, turns, mutating)
        values = {name.lower(): ratio(counts.as_dict(), name) for name in RATIOS}
        return MetricResult(values=values, details={"cfa": {"counts": counts.as_dict(), "asr_error": counts.misheard_turns > 0}})

    def summarize(self, view: RunView) -> dict[str, float | None]:
        """Micro and per-conversation averages, ARGA, MRS, TO, pass^1 and the composite; each noise level of a sweep apart."""
        arms = sorted({c["arm"] for c in view.conversations(arm=None)} - {"baseline", "text"}, key=lambda a: (a != "agent", a))
        out: dict[str, float | None] = {}
        for arm in arms:
            figures = self._arm_figures(view, arm)
            suffix = "" if arm == "agent" else f" [{arm}]"
            out.update({f"{name}{suffix}": value for name, value in figures.items()})
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
    out: dict[str, float | None] = {"pass^1": statistics.fmean(_passed(r) for _, _, r in per)}
    with_error = [_passed(r) for _, error, r in per if error]
    out["ARGA"] = statistics.fmean(with_error) if with_error else None
    text = view.conversations(arm="text")
    if text:
        pass_text = statistics.fmean(_passed(r["reward"]) for r in text)
        out["MRS"] = out["pass^1"] / pass_text if pass_text else None  # type: ignore[operator]
        typed = sum(1 for r in text for m in view.messages(r["id"]) if m["role"] == "assistant")
        spoken = sum(c["agent_messages"] for c, _, _ in per)
        out["TO"] = spoken / typed - 1 if typed else None
    else:
        out["MRS"] = out["TO"] = None
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
