"""The voice metric: per conversation, word error rate and critical-field accuracy over the user's spoken turns;
per run, both by noise level, with the misheard fields that explain failures."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from typing import Any

import attrs

from bench_kernel import Metric, MetricContext, MetricResult, RunView

from .turns import VoiceTurn


@attrs.define(kw_only=True)
class VoiceQuality(Metric):
    """WER and critical-field accuracy (CFA) of what the agent heard."""

    name: str = "voice"
    description: str = "Word error rate and critical-field accuracy of the user's spoken turns (voice channel runs)."

    async def score(self, context: MetricContext) -> MetricResult:
        """Mean WER over user turns; CFA = critical fields heard exactly / said (None when none was said)."""
        turns = [t for _, t in context.events.typed(VoiceTurn) if t.speaker == "user"]
        if not turns:
            return MetricResult(values={"wer": None, "cfa": None})
        said = sum(t.fields_said for t in turns)
        misheard = [m for t in turns for m in t.misheard]
        snr = turns[0].snr_db
        return MetricResult(
            values={"wer": statistics.fmean(t.wer for t in turns), "cfa": sum(t.fields_heard for t in turns) / said if said else None},
            details={"wer": {"snr_db": snr}, "cfa": {"snr_db": snr, "misheard": misheard}},
        )

    def summarize(self, view: RunView) -> dict[str, float | None]:
        """WER and CFA by noise level, and the pass rate of conversations with and without a misheard field."""
        # Every arm that went through the channel: the agent arm and a sweep's arms (not the baseline, not --paired's text).
        rewards = {c["id"]: c["reward"] for c in view.conversations(arm=None) if c["arm"] not in ("baseline", "text")}
        by_level: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
        with_error: list[float] = []
        clean: list[float] = []
        for row in view.values(plugin=view.plugin, arm=None):
            if row["conversation_id"] not in rewards:
                continue
            details: dict[str, Any] = json.loads(row["details_json"] or "{}")
            level = "clean" if details.get("snr_db") is None else f"{details['snr_db']:g} dB"
            if row["value"] is not None:
                by_level[level][row["metric"]].append(row["value"])
            if row["metric"] == "voice.cfa" and rewards.get(row["conversation_id"]) is not None:
                (with_error if details.get("misheard") else clean).append(rewards[row["conversation_id"]])
        out: dict[str, float | None] = {}
        levels: dict[str, list[float]] = defaultdict(list)
        for row in view.values("voice.cfa", plugin=view.plugin, arm=None):
            if row["conversation_id"] in rewards and rewards[row["conversation_id"]] is not None:
                snr = json.loads(row["details_json"] or "{}").get("snr_db")
                levels["clean" if snr is None else f"{snr:g} dB"].append(1.0 if rewards[row["conversation_id"]] >= 1.0 - 1e-6 else 0.0)
        for level, metrics in sorted(by_level.items()):
            for metric, values in sorted(metrics.items()):
                out[f"{metric.split('.')[-1]} at {level}"] = statistics.fmean(values)
            if levels.get(level):
                out[f"pass^1 at {level}"] = statistics.fmean(levels[level])
        out["pass rate, a critical field misheard"] = statistics.fmean(with_error) if with_error else None
        out["pass rate, every critical field heard"] = statistics.fmean(clean) if clean else None
        out.update(modality_figures(view))
        return out


def modality_figures(view: RunView) -> dict[str, float | None]:
    """With --paired: MRS = pass^1 voice / pass^1 text, TO = agent messages voice / text - 1 (MM-tau-p²'s definitions)."""
    voice, text = view.conversations(arm="agent"), view.conversations(arm="text")
    if not text:
        return {}

    def passed(rows: list[dict[str, Any]]) -> float:
        return statistics.fmean(1.0 if r["reward"] is not None and r["reward"] >= 1.0 - 1e-6 else 0.0 for r in rows)

    def agent_messages(rows: list[dict[str, Any]]) -> int:
        return sum(1 for r in rows for m in view.messages(r["id"]) if m["role"] == "assistant")

    pass_voice, pass_text = passed(voice), passed(text)
    spoken, typed = agent_messages(voice), agent_messages(text)
    return {
        "pass^1 voice": pass_voice,
        "pass^1 text": pass_text,
        "MRS (pass^1 voice / text)": pass_voice / pass_text if pass_text else None,
        "TO (agent turns voice / text - 1)": spoken / typed - 1 if typed else None,
    }
