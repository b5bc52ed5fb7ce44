"""Failure attribution's seam: registered attributors (bench-trust's rules, docs/attribution.md) label a failed conversation."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import attrs

from bench_kernel.evaluation.evaluator import GoldReplay
from bench_kernel.logs import get_logger
from bench_kernel.schema.messages import TerminationReason
from bench_kernel.schema.results import Attribution, ConversationResult, is_success
from bench_kernel.schema.tasks import Task
from bench_kernel.tasks.domain import DomainData
from bench_kernel.tools.environment import Environment

log = get_logger()


@attrs.frozen(kw_only=True)
class FinishedConversation:
    """What an attributor reads: the conversation as played and scored, its task, the domain and what else is known."""

    result: ConversationResult
    task: Task
    data: DomainData
    final_env: Environment
    """The conversation's final environment (a fresh one for a conversation judged again from the store)."""
    gold: GoldReplay | None
    """The task's gold replay as the run computed it (None when unknown: an import without one)."""
    store: Any = None
    """The run's results database (a `Store`), or None outside a run: what an attributor may read besides."""


@attrs.define(kw_only=True)
class Attributor:
    """Base class of registered attributors: who a failed conversation's failure is due to (docs/attribution.md)."""

    name: str
    description: str = ""

    def attribute(self, conversation: FinishedConversation) -> Attribution | None:
        """The failure's attribution, or None to leave it to the next attributor (unlabelled after the last)."""
        raise NotImplementedError


def attributed(
    result: ConversationResult,
    task: Task,
    data: DomainData,
    env: Environment,
    gold: GoldReplay | None,
    store: Any = None,
    attributors: Iterable[Attributor] = (),
) -> ConversationResult:
    """The result labelled by the first attributor that names a label (unchanged when it passed, or none does)."""
    if result.termination_reason is not TerminationReason.INFRASTRUCTURE_ERROR and is_success(result.reward):
        return result
    finished = FinishedConversation(result=result, task=task, data=data, final_env=env, gold=gold, store=store)
    for attributor in attributors:
        try:
            found = attributor.attribute(finished)
        except Exception as exc:  # noqa: BLE001 - a label is never worth a conversation: it is stored unlabelled instead
            log.warning("attribution.failed", attributor=attributor.name, task_id=task.id, error=f"{type(exc).__name__}: {exc}")
            continue
        if found is not None:
            return attrs.evolve(result, attribution=found)
    return result
