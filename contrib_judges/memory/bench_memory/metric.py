"""The memory metric: the evaluator run over every finished multi-goal conversation of a run, and its run-level figures.

Per conversation: goal detection P/R/F1, status tracking accuracy (per turn, and final), dependency
F1, turns, per-turn latency (mean, p95) and judge tokens per turn; the memory itself goes to the
memory_goals / memory_edges / memory_turns tables. Per run: detection F1 macro-averaged over
conversations (as ATOD), status accuracy and dependency F1 micro-averaged (summed counts), latency over all turns.
"""

from __future__ import annotations

import json
import os
import statistics
from typing import Any

import attrs
from bench_atod import task_goals
from bench_knowledge import embed

from bench_kernel import ConfigError, Metric, MetricContext, MetricResult, RunView

from .api import evaluate_conversation, make_judge, p95, stable_seed
from .index import VectorIndex, make_index
from .judges import MemoryJudge
from .scoring import f1

JUDGE_ROLE = "memory-judge"
EMBEDDINGS_ROLE = "embeddings"


@attrs.define(kw_only=True)
class MemoryMetric(Metric):
    """ATOD's agentic memory evaluator as a metric; the rules judge and lexical index unless the run says otherwise."""

    name: str = "memory"
    description: str = (
        "ATOD's memory evaluator over each multi-goal conversation: goal detection F1, status tracking "
        "accuracy, dependency F1, per-turn latency and tokens."
    )

    async def score(self, context: MetricContext) -> MetricResult:
        """Evaluate one conversation (no values for a task without goals)."""
        goals = task_goals(context.task)
        if not goals:
            return MetricResult(values={})
        cid = context.result.conversation_id
        evaluation = await evaluate_conversation(
            goals, context.messages, context.events.events, conversation_id=cid, judge=self.judge_for(context), index=self.index_for(context)
        )
        for table, row in evaluation.rows:
            context.write(table, row)
        values = evaluation.values()
        return MetricResult(values=values, details={"detection_f1": evaluation.details()})

    def judge_for(self, context: MetricContext) -> MemoryJudge:
        """llm when the run configures the memory-judge role (or BENCH_MEMORY_JUDGE says so), else rules."""
        models = context.models
        has_role = models is not None and models.has(JUDGE_ROLE)
        name = os.environ.get("BENCH_MEMORY_JUDGE") or ("llm" if has_role else "rules")
        if name == "llm" and not has_role:
            raise ConfigError(f"BENCH_MEMORY_JUDGE=llm needs the {JUDGE_ROLE} role (--model-option {JUDGE_ROLE}.model=NAME)")

        async def complete(request: Any) -> Any:
            return await context.complete(request, role=JUDGE_ROLE)

        return make_judge(name, complete if has_role else None, seed=context.result.seed or stable_seed(context.result.conversation_id))

    def index_for(self, context: MetricContext) -> VectorIndex:
        """embeddings when the run configures that role, else BENCH_MEMORY_INDEX (lexical by default, or minilm)."""
        models = context.models
        if models is not None and models.has(EMBEDDINGS_ROLE) and os.environ.get("BENCH_MEMORY_INDEX") in (None, "", "embeddings"):

            async def role_vectors(request: Any) -> Any:
                return await embed(models, EMBEDDINGS_ROLE, request)

            return make_index("embeddings", role_vectors)
        return make_index(os.environ.get("BENCH_MEMORY_INDEX") or "lexical")

    def summarize(self, view: RunView) -> dict[str, float | None]:
        """Run-level figures over the agent arm's conversations, then per complexity class when tasks declare one."""
        rows = view.values("memory.detection_f1", plugin=view.plugin)
        classes = {c["id"]: c["attributes"].get("complexity") for c in view.conversations()}
        latencies = _latencies(view)
        out = _figures(rows, [ms for _, ms in latencies])
        for name in sorted({c for c in classes.values() if c}):
            chosen = {cid for cid, c in classes.items() if c == name}
            figures = _figures([r for r in rows if r["conversation_id"] in chosen], [ms for cid, ms in latencies if cid in chosen])
            out.update({f"{key} [{name}]": value for key, value in figures.items()})
        return out


def _figures(rows: list[dict[str, Any]], latencies: list[float]) -> dict[str, float | None]:
    return run_figures([json.loads(r["details_json"] or "{}").get("counts", {}) for r in rows], [r["value"] for r in rows], latencies)


def _latencies(view: RunView) -> list[tuple[str, float]]:
    sql = (
        "select t.conversation_id, t.latency_ms from memory_turns t join conversations c on c.id = t.conversation_id "
        "where c.run_id = ? and c.arm = 'agent'"
    )
    return [(r["conversation_id"], r["latency_ms"]) for r in view.query(sql, [view.run.id])]


def run_figures(counts: list[dict[str, Any]], detection: list[float | None], latencies: list[float]) -> dict[str, float | None]:
    """Macro detection F1, micro status accuracy and dependency F1, and per-turn latency over many conversations."""
    total = {
        k: sum(c.get(k) or 0 for c in counts)
        for k in ("statuses_compared", "statuses_correct", "final_compared", "final_correct", "dependency_tp", "dependency_fp", "dependency_fn")
    }
    scored = [d for d in detection if d is not None]
    return {
        "conversations": float(len(counts)),
        "detection_f1 (macro)": statistics.fmean(scored) if scored else None,
        "status_accuracy (micro)": total["statuses_correct"] / total["statuses_compared"] if total["statuses_compared"] else None,
        "final_status_accuracy (micro)": total["final_correct"] / total["final_compared"] if total["final_compared"] else None,
        "dependency_f1 (micro)": f1(total["dependency_tp"], total["dependency_fp"], total["dependency_fn"])[2],
        "latency_ms per turn (mean)": statistics.fmean(latencies) if latencies else None,
        "latency_ms per turn (p95)": p95(latencies),
    }
