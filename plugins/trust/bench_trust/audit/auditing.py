"""Auditing tasks: the oracle's ceiling and the floors played through a run's own conversation code, gold replays,
every flag with its evidence, and the cache that lets re-audits and runs reuse them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import (
    BASELINE_AGENT,
    BASELINE_USER,
    ConversationResult,
    DomainData,
    Evaluation,
    GoldReplay,
    ModelHub,
    Registry,
    RunConfig,
    RunContext,
    Store,
    Task,
    Unit,
    is_success,
    require_components,
    run_unit,
    scripted_user,
    task_id_key,
)

from .cache import read_audits, task_hashes, write_audits
from .flags import FLAGS, GoldTrace, data_fingerprint, static_flags, trace_gold

ORACLE = "oracle"
FLOORS = (BASELINE_AGENT, "talk-only", "refuse")
"""The floors: the run's baseline (do-nothing), a polite staller and a polite refuser."""
NO_JUDGE = "NL assertions decide the reward and no judge is configured: not judged offline"
Outcome = tuple[float | None, str]
"""A played conversation's reward (None: not evaluated) and a note saying why it is None or what ended it."""


@attrs.define
class Auditor:
    """Plays every audit conversation of a domain's tasks with the run's code, offline, in one event loop."""

    registry: Registry
    data: DomainData
    concurrency: int = 32
    contexts: dict[str, RunContext] = attrs.field(factory=dict)

    def __attrs_post_init__(self) -> None:
        store = Store(":memory:")  # conversations are stored as a run stores them, then forgotten
        hub = ModelHub(configs={}, backends={}, concurrency=self.concurrency)
        user = self.registry.get("user simulator", scripted_user(BASELINE_USER, self.data))
        evaluation = Evaluation(
            components=self.registry.components.get("reward component", {}), rules=self.registry.components.get("combination rule", {})
        )
        golds: dict[str, GoldReplay] = {}  # shared: every context replays a task's gold once
        for name in (ORACLE, *FLOORS):
            agent = self.registry.get("agent", name)
            self.contexts[name] = RunContext(
                run_id=f"audit-{name}",
                config=RunConfig(domain=self.data.name, agent=name),
                data=self.data,
                agent=agent,
                user=user,
                baseline_agent=agent,
                baseline_user=user,
                judge=None,
                metrics=[],
                registry=self.registry,
                store=store,
                models=hub,
                evaluation=evaluation,
                golds=golds,
            )

    def close(self) -> None:
        """Forget the conversations."""
        next(iter(self.contexts.values())).store.close()

    async def play(self, tasks: Sequence[Task]) -> dict[str, dict[str, Outcome]]:
        """Each task's outcome per agent (oracle and floors), at most `concurrency` conversations in flight."""
        todo = [(name, task) for task in tasks if not _needs_judge(task) for name in (ORACLE, *FLOORS)]
        queue = iter(todo)
        outcomes: dict[str, dict[str, Outcome]] = {t.id: {} for t in tasks}

        async def worker() -> None:
            for name, task in queue:
                # The do-nothing floor is the run's baseline arm itself: same arm, same agent, same user.
                arm = "baseline" if name == BASELINE_AGENT else "agent"
                result = await run_unit(self.contexts[name], Unit(arm, task, 0))
                outcomes[task.id][name] = _outcome(result)
                await asyncio.sleep(0)  # offline conversations never wait: let the others in

        require_components(self.registry, tasks)  # NL_ASSERTION: bench-judging's, named when missing
        self.evaluation().validate(tasks)
        await asyncio.gather(*(worker() for _ in range(max(1, min(self.concurrency, len(todo))))))
        return outcomes

    def evaluation(self) -> Evaluation:
        """The reward components and rules the conversations are scored with."""
        return self.contexts[ORACLE].evaluation

    def gold(self, task: Task) -> GoldReplay:
        """The task's gold replay as the run computes it (once)."""
        return self.contexts[ORACLE].gold(task)


def _needs_judge(task: Task) -> bool:
    return bool(task.evaluation_criteria and task.evaluation_criteria.nl_assertions_to_judge())


def _outcome(result: ConversationResult) -> Outcome:
    if result.reward is None:
        return None, f"not evaluated: {result.termination_reason.value}: {result.error or ''}".rstrip(": ")
    return result.reward, (result.reward_info.note if result.reward_info else "")


def task_audit(task: Task, data: DomainData, outcomes: dict[str, Outcome], gold: GoldReplay, traces: tuple[GoldTrace, GoldTrace]) -> dict[str, Any]:
    """One task's audit: ceiling, floors, flags and the evidence of each flag."""
    judged = not _needs_judge(task)
    ceiling, ceiling_note = outcomes.get(ORACLE, (None, NO_JUDGE))
    floors = {name: outcomes.get(name, (None, NO_JUDGE))[0] for name in FLOORS}
    evidence = {**static_flags(task, data, traces[0]), **_dynamic_flags(floors, ceiling, ceiling_note, gold, traces)}
    notes = {} if judged else {"ceiling": NO_JUDGE, "floors": NO_JUDGE}
    if judged and ceiling is None:
        notes["ceiling"] = ceiling_note
    flags = [flag for flag in FLAGS if flag in evidence]
    return {
        "id": task.id,
        "ceiling": ceiling,
        "floors": floors,
        "flags": flags,
        "evidence": {flag: evidence[flag] for flag in flags},
        **({"notes": notes} if notes else {}),
    }


def _dynamic_flags(
    floors: dict[str, float | None], ceiling: float | None, ceiling_note: str, gold: GoldReplay, traces: tuple[GoldTrace, GoldTrace]
) -> dict[str, str]:
    found: dict[str, str] = {}
    passing = [name for name, reward in floors.items() if is_success(reward)]
    if passing:
        found["passed_by_floor"] = f"scored 1 by {', '.join(passing)}"
    problems = [f"gold action {e}" for e in gold.action_errors]
    problems += [f"env assertion {c.subject} fails on the gold state: {c.detail}" for c in gold.assertion_checks if not c.met]
    if ceiling is not None and not is_success(ceiling):
        problems.append(f"the oracle scores {ceiling:g}" + (f" ({ceiling_note})" if ceiling_note else ""))
    elif ceiling is None and ceiling_note != NO_JUDGE:
        problems.append(f"the oracle's conversation was {ceiling_note}")
    if problems:
        found["gold_fails"] = "; ".join(problems)
    differs = _first_difference(*traces)
    if differs:
        found["nondeterministic"] = differs
    return found


def _first_difference(first: GoldTrace, second: GoldTrace) -> str | None:
    if first.hashes == second.hashes:
        return None
    for position, (a, b) in enumerate(zip(first.results, second.results, strict=False)):
        if a != b:
            return f"two gold replays differ first at action {position + 1} ({a[0]}): {a[1][:80]!r} vs {b[1][:80]!r}"
    return "two gold replays from fresh states end in different states (every tool result equal)"


async def audit_tasks(
    registry: Registry, data: DomainData, tasks: Sequence[Task], store: Store | None = None, *, concurrency: int = 32
) -> list[dict[str, Any]]:
    """Every task's audit, reused from the store's cache when it holds one for this content and data (new ones kept)."""
    fingerprint = data_fingerprint(data)
    hashes = task_hashes(tasks)
    cached = read_audits(store, data.name, fingerprint, hashes) if store is not None else {}
    todo = [task for task in tasks if task.id not in cached]
    auditor = Auditor(registry, data, concurrency)
    try:
        outcomes = await auditor.play(todo)
        fresh = {
            task.id: task_audit(task, data, outcomes[task.id], auditor.gold(task), (trace_gold(data, task), trace_gold(data, task))) for task in todo
        }
    finally:
        auditor.close()
    if store is not None:
        write_audits(store, data.name, fingerprint, [(hashes[task_id], audit) for task_id, audit in fresh.items()])
    return [cached.get(task.id) or fresh[task.id] for task in tasks]


def summary(audits: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts and means over the audited tasks."""

    def mean(values: list[float | None]) -> float | None:
        known = [v for v in values if v is not None]
        return round(sum(known) / len(known), 6) if known else None

    return {
        "tasks": len(audits),
        "ceiling_mean": mean([a["ceiling"] for a in audits]),
        "floor_means": {name: mean([a["floors"][name] for a in audits]) for name in FLOORS},
        "flagged": {flag: sum(flag in a["flags"] for a in audits) for flag in FLAGS},
        "any_flag": sum(bool(a["flags"]) for a in audits),
    }


def audit_document(domain: str, data_info: dict[str, Any], audits: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The audit as JSON-ready data, tasks in id order (numeric ids as numbers)."""
    ordered = sorted(audits, key=lambda a: task_id_key(a["id"]))
    return {"domain": domain, "data": data_info, "tasks": ordered, "summary": summary(ordered)}


def audit_domain(
    registry: Registry, data: DomainData, tasks: Sequence[Task], store: Store | None, *, concurrency: int = 32, reuse: bool = True
) -> dict[str, Any]:
    """The audit document of these tasks of a loaded domain (reusing and filling the store's cache)."""
    data.load_deferred()
    audits = asyncio.run(audit_tasks(registry, data, tasks, store if reuse else None, concurrency=concurrency))
    if store is not None and not reuse:
        hashes = task_hashes(tasks)
        write_audits(store, data.name, data_fingerprint(data), [(hashes[a["id"]], a) for a in audits])
    info = {"source": data.source, "fingerprint": data_fingerprint(data), "tasks_hash": data.content_hash()}
    return audit_document(data.name, info, audits)
