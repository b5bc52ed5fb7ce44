"""After a conversation: the kernel's own metric values and the plugins' metrics, each failure recorded."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel.evaluation.evaluator import GoldReplay
from bench_kernel.evaluation.metric import Judge, Metric, MetricContext, MetricResult
from bench_kernel.modelhub.hub import ConversationModels
from bench_kernel.profiles.profile import Profile, bench_profile
from bench_kernel.schema.events import EventLog
from bench_kernel.schema.results import ConversationResult
from bench_kernel.schema.tasks import Task
from bench_kernel.serialization import shorten, unstructure
from bench_kernel.store.store import MetricValue, PluginRows, Store
from bench_kernel.tools.environment import Environment

KERNEL = "bench-kernel"
"""The plugin column of the kernel's own metric values (reward, component.*)."""


def component_values(result: ConversationResult) -> list[MetricValue]:
    """The reward and every reward component of a conversation, as metric values."""
    info = result.reward_info
    details = {"basis": list(info.reward_basis), "rule": info.rule, "note": info.note} if info else None
    values = [MetricValue(metric="reward", plugin=KERNEL, value=result.reward, details=details)]
    for c in info.components if info else []:
        details = {"checks": unstructure(c.checks), "note": c.note}
        values.append(MetricValue(metric=f"component.{c.component}", plugin=KERNEL, value=c.score, details=details, error=c.error))
    return values


@attrs.frozen
class MetricInputs:
    """What a conversation leaves for its metrics besides the result."""

    task: Task
    events: EventLog
    final_env: Environment
    gold: GoldReplay
    models: ConversationModels | None = None


async def score_metrics(
    metrics: Sequence[tuple[str, Metric]],
    result: ConversationResult,
    inputs: MetricInputs,
    *,
    judge: Judge | None = None,
    profile: Profile | None = None,
) -> tuple[list[MetricValue], list[PluginRows]]:
    """Every (plugin, metric) scored on one finished conversation; a failing metric becomes an error value, never an exception."""
    values: list[MetricValue] = []
    rows: list[PluginRows] = []
    for plugin, metric in metrics:
        context = MetricContext(
            task=inputs.task,
            result=result,
            events=inputs.events,
            final_env=inputs.final_env,
            gold=inputs.gold,
            judge=judge,
            models=inputs.models,
            role=metric.model_roles[0] if metric.model_roles else None,
            source=f"{plugin}:{metric.name}",
            profile=profile or bench_profile(),
        )
        try:
            values += metric_values(plugin, metric.name, await awaited(metric.score(context)))
        except Exception as exc:  # noqa: BLE001 - one failing metric never stops the others, nor the conversation
            values.append(MetricValue(metric=metric.name, plugin=plugin, value=None, error=f"{type(exc).__name__}: {exc}"))
            continue
        if context.rows:
            rows.append(PluginRows(plugin=plugin, metric=metric.name, rows=list(context.rows)))
    return values, rows


async def awaited(value: Any) -> Any:
    """The value, awaited when it is awaitable (a plugin's method may be either)."""
    return await value if inspect.isawaitable(value) else value


def metric_failure(store: Store, run_id: str, metrics: Sequence[tuple[str, Metric]]) -> str | None:
    """Says so when a loaded metric failed on every conversation of a run (`bench run` then exits non-zero), else None."""
    loaded = {(plugin, metric.name): metric for plugin, metric in metrics}
    failing = [found for found in store.failing_metrics(run_id) if found[:2] in loaded]
    if not failing:
        return None
    plugin, name, count, error = failing[0]
    cls = type(loaded[(plugin, name)])
    also = f" (so did {', '.join(f'{p}:{n}' for p, n, _, _ in failing[1:])})" if failing[1:] else ""
    return (
        f"plugin {plugin!r}: metric {name!r} ({cls.__module__}.{cls.__qualname__}.score) raised on every one of the {count} "
        f"conversations of run {run_id}{also}, so it measured nothing: {shorten(error, 300)}. Fix the metric: then, with "
        f"bench-trust, `bench rescore {run_id}` scores the stored conversations again without playing them"
    )


def metric_values(plugin: str, name: str, scored: MetricResult | Mapping[str, float | None]) -> list[MetricValue]:
    """A metric's result as stored values: `name` for the "" key, `name.key` for the others."""
    result = scored if isinstance(scored, MetricResult) else MetricResult(values=scored)
    out = []
    for key, value in result.values.items():
        number = None if value is None else float(value)
        out.append(MetricValue(metric=f"{name}.{key}" if key else name, plugin=plugin, value=number, details=result.details.get(key)))
    return out
