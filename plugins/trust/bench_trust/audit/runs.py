"""What runs take from audits: the flags `--exclude-flagged` leaves out, and the static flags a run records for its report.

`AuditFlagger` is the task flagger bench-trust registers: the kernel asks it for the flags of a run's tasks before the
run (`bench run --exclude-flagged`) and lets it record their static flags once the run has played its conversations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import DomainData, Registry, RunContext, Store, Task, TaskFlagger, open_store

from .auditing import audit_tasks
from .cache import task_hashes
from .flags import DYNAMIC_FLAGS, FLAGS, data_fingerprint, static_flags

STATIC_FLAGS_EVENT = "run.audit_flags"
"""The run event holding the static audit flags of the run's tasks, the data's fingerprint and the tasks' hashes."""


@attrs.define(kw_only=True)
class AuditFlagger(TaskFlagger):
    """`bench audit`'s flags for `--exclude-flagged`, and the static flags every run keeps for its validity card."""

    name: str = "audit"
    flags: tuple[str, ...] = FLAGS
    description: str = "`bench audit`"

    async def flagged(
        self, registry: Registry, data: DomainData, tasks: Sequence[Task], flags: Sequence[str], store_path: str
    ) -> dict[str, list[str]]:
        """Static flags computed directly; a dynamic one (passed_by_floor, gold_fails, nondeterministic) takes the
        audit, reused from the store's cache or run now and cached."""
        data.load_deferred()
        if any(flag in DYNAMIC_FLAGS for flag in flags):
            store = open_store(store_path, registry.migrations)
            try:
                found = {a["id"]: a["flags"] for a in await audit_tasks(registry, data, tasks, store)}
            finally:
                store.close()
        else:
            found = {task.id: list(static_flags(task, data)) for task in tasks}
        return {task_id: [flag for flag in hits if flag in flags] for task_id, hits in found.items()}

    def record(self, ctx: RunContext) -> None:
        """The static flags of the run's tasks, once per run (not again on a resume that finds them)."""
        if ctx.store.last_run_event(ctx.run_id, (STATIC_FLAGS_EVENT,)) is None:
            ctx.data.load_deferred()
            record_static_flags(ctx.store, ctx.run_id, ctx.data, ctx.tasks)


def record_static_flags(store: Store, run_id: str, data: DomainData, tasks: Sequence[Task]) -> None:
    """Store the static flags of the run's tasks with the data's fingerprint, so its report needs no domain loading."""
    unique = list({task.id: task for task in tasks}.values())
    flags = {task.id: static_flags(task, data) for task in unique}
    payload: dict[str, Any] = {
        "domain": data.name,
        "fingerprint": data_fingerprint(data),
        "task_hashes": task_hashes(unique),
        "flags": {task_id: found for task_id, found in flags.items() if found},
    }
    store.add_event(run_id, STATIC_FLAGS_EVENT, payload)
