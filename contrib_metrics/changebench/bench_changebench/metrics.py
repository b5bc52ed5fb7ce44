"""The TSR, TUE and TCRR metrics: scored per conversation, summarised per run (pooled TCRR as published, for comparison)."""

from __future__ import annotations

import json
from typing import Any

import attrs

from bench_kernel import JudgeRequest, Metric, MetricContext, MetricResult, RunView

from .extensions import expected_steps
from .scoring import Call, action_score, communicate_score, pooled_tcrr, tcrr, tool_calls, tsr, tue


@attrs.define(kw_only=True)
class TaskSuccessRate(Metric):
    """TSR: communicate 0.25, action 0.45, NL assertions 0.30, renormalised over the channels the task has."""

    name: str = "tsr"
    description: str = "AgentChangeBench's task success rate and its three channels."

    async def score(self, context: MetricContext) -> MetricResult:
        """The channels of one conversation and their weighted mean."""
        task, messages = context.task, context.messages
        criteria = task.evaluation_criteria
        info = list(criteria.communicate_info or []) if criteria else []
        steps = expected_steps(task)
        nl, nl_note = await _nl_channel(context)
        channels = {
            "communicate": communicate_score(info, messages) if info else None,
            "action": action_score(steps, tool_calls(messages)) if steps else None,
            "nl": nl,
        }
        return MetricResult(
            values={"": tsr(channels), **channels},
            details={"nl": {"source": nl_note}, "": {"channels": sorted(k for k, v in channels.items() if v is not None)}},
        )


async def _nl_channel(context: MetricContext) -> tuple[float | None, str]:
    """The NL channel from the verdicts the reward already has, else from the run's judge; dropped without either."""
    criteria = context.task.evaluation_criteria
    assertions = list(criteria.nl_assertions or []) if criteria else []
    if not assertions:
        return None, "no NL assertions"
    reward = context.result.reward_info
    judged = reward.component("NL_ASSERTION") if reward else None
    checks = list(judged.checks) if judged and judged.score is not None else []
    source = "reward"
    if not checks and context.judge is not None:
        request = JudgeRequest(
            task=context.task,
            messages=context.messages,
            assertions=assertions,
            seed=context.result.seed,
            models=context.models,
            profile=context.profile,
        )
        checks, source = await context.judge.judge(request), f"judge {context.judge.name}"
    if not checks:
        return None, "no judge configured: channel left out, as AgentChangeBench does when its judge fails"
    return sum(c.met for c in checks) / len(checks), source


@attrs.define(kw_only=True)
class ToolUseEfficiency(Metric):
    """TUE: 0.6 tool correctness + 0.4 parameter validity, over every tool call of the conversation."""

    name: str = "tue"
    description: str = "AgentChangeBench's tool-use efficiency (0 without tool calls)."

    async def score(self, context: MetricContext) -> dict[str, float | None]:
        """TUE and its two parts for one conversation."""
        return dict(tue(tool_calls(context.messages)))


@attrs.define(kw_only=True)
class ToolCallRedundancy(Metric):
    """TCRR: repeats within the 3 previous assistant turns, and beyond 2 identical calls in one turn, per conversation."""

    name: str = "tcrr"
    description: str = "AgentChangeBench's tool-call redundancy rate, per conversation (turns restart in each)."

    async def score(self, context: MetricContext) -> MetricResult:
        """TCRR, its window and batch parts, and the calls it counted (for the pooled figure)."""
        calls = tool_calls(context.messages)
        return MetricResult(values=tcrr(calls), details={"": {"calls": [_call_row(c) for c in calls]}})

    def summarize(self, view: RunView) -> dict[str, float | None]:
        """Run-level TCRR over all calls, and AgentChangeBench's pooled computation (what its papers report)."""
        conversations = [
            [Call(**row) for row in json.loads(v["details_json"] or "{}").get("calls", [])] for v in view.values(self.name, plugin=view.plugin)
        ]
        total = sum(len(c) for c in conversations)
        redundant = sum((tcrr(c)[""] or 0.0) * len(c) for c in conversations)
        return {"tcrr (all calls)": redundant / total if total else None, "tcrr pooled as AgentChangeBench publishes it": pooled_tcrr(conversations)}


def _call_row(call: Call) -> dict[str, Any]:
    return attrs.asdict(call)
