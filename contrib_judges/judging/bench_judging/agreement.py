"""`judge.agreement`: how much a judge panel's members agreed on a conversation (docs/judges.md)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import Event, Metric, MetricContext, MetricResult, MetricValue

from .rounds import PANEL_EVENT


@attrs.define(kw_only=True)
class JudgeAgreement(Metric):
    """A panel's agreement: the mean, over the assertions, of the share of members that voted with the majority."""

    name: str = "judge"
    description: str = "A judge panel's agreement per conversation (--judge-panel), with each assertion's votes."

    async def score(self, context: MetricContext) -> MetricResult:
        """`judge.agreement` from the conversation's last panel event; nothing without a panel."""
        return panel_agreement(context.result.events)


def panel_agreement(events: Sequence[Event]) -> MetricResult:
    """The agreement of the last panel event among `events`, its data as the details (no value without one)."""
    panels = [e for e in events if e.kind == PANEL_EVENT]
    if not panels:
        return MetricResult(values={})
    data: dict[str, Any] = dict(panels[-1].data)
    return MetricResult(values={"agreement": data.get("agreement")}, details={"agreement": data})


def agreement_values(metrics: Sequence[tuple[str, Metric]], events: Sequence[Event]) -> list[MetricValue]:
    """The agreement as the loaded JudgeAgreement metric stores it (a conversation judged again on resume)."""
    found = panel_agreement(events)
    return [
        MetricValue(metric=f"{metric.name}.{key}", plugin=plugin, value=value, details=found.details.get(key))
        for plugin, metric in metrics
        if isinstance(metric, JudgeAgreement)
        for key, value in found.values.items()
    ]
