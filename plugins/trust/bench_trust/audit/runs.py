"""What runs take from audits: the tasks `--exclude-flagged` leaves out, and the static flags a run records for its report.

`ExcludeFlagged` is the task transform bench-trust registers: it owns the run setting `exclude_flagged`, leaves out
the tasks flagged with one of its flags before anything is stored, says so in the run's header and report (event
`run.excluded_flagged`), and records the static flags of every run's tasks once the run has played its conversations.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import ConfigError, DomainData, Prepared, Registry, RunContext, Store, Task, TaskTransform, open_store, task_id_key

from .cache import task_hashes
from .flags import DYNAMIC_FLAGS, FLAGS, data_fingerprint, static_flags

SETTING = "exclude_flagged"
"""The run setting (`bench run --exclude-flagged FLAG`, `[run] exclude_flagged = [...]`) naming the flags left out."""
EXCLUDED_EVENT = "run.excluded_flagged"
"""The run event naming the flags `--exclude-flagged` left out, the tasks it left out and who flagged them."""
STATIC_FLAGS_EVENT = "run.audit_flags"
"""The run event holding the static audit flags of the run's tasks, the data's fingerprint and the tasks' hashes."""
BY = "`bench audit`"


@attrs.define(kw_only=True)
class ExcludeFlagged(TaskTransform):
    """`--exclude-flagged`: leaves out the tasks `bench audit` flags with one of its flags; keeps every run's static flags."""

    name: str = "exclude-flagged"
    settings: tuple[str, ...] = (SETTING,)
    description: str = "bench-trust: leave out the tasks `bench audit` flags (--exclude-flagged), keep every run's static flags"

    async def prepare(self, data: DomainData, tasks: list[Task], settings: Mapping[str, Any], registry: Registry, store_path: str) -> Prepared:
        """The tasks none of whose flags is asked for, the flags in the audit's order (one identity whatever the
        command line's order), and what was left out; no task left is an error."""
        if SETTING not in settings:
            return Prepared(tasks=tasks)
        wanted = wanted_flags(settings[SETTING])
        found = await flagged(registry, data, tasks, wanted, store_path)
        kept = [task for task in tasks if not found.get(task.id)]
        if not kept:
            raise ConfigError(
                f"--exclude-flagged {' '.join(wanted)} leaves none of the {len(tasks)} selected tasks of domain {data.name!r} "
                f"({BY} lists their flags)"
            )
        left_out = {task.id: found[task.id] for task in tasks if found.get(task.id)}
        return Prepared(tasks=kept, settings={SETTING: wanted}, events={EXCLUDED_EVENT: {"flags": wanted, "tasks": left_out, "by": BY}})

    def header(self, ctx: RunContext) -> str | None:
        """What `--exclude-flagged` left out, when the run asks for it."""
        if not ctx.config.plugin_settings.get(SETTING):
            return None
        return exclusion_line(ctx.store, ctx.run_id) or "no task excluded"

    def finished(self, ctx: RunContext) -> None:
        """The static flags of the run's tasks, once per run (not again on a resume that finds them)."""
        if ctx.store.last_run_event(ctx.run_id, (STATIC_FLAGS_EVENT,)) is None:
            ctx.data.load_deferred()
            record_static_flags(ctx.store, ctx.run_id, ctx.data, ctx.tasks)


def wanted_flags(value: Any) -> list[str]:
    """The flags a run asks to leave out, in the audit's order; an unknown one is an error listing them all."""
    if not isinstance(value, list) or not all(isinstance(flag, str) for flag in value):
        raise ConfigError(f"exclude_flagged must be a list of audit flags, not {value!r} @ $.run.{SETTING}")
    unknown = [flag for flag in value if flag not in FLAGS]
    if unknown:
        raise ConfigError(f"unknown flag {unknown[0]!r} for --exclude-flagged (flags: {', '.join(FLAGS)})")
    return [flag for flag in FLAGS if flag in value]


async def flagged(registry: Registry, data: DomainData, tasks: Sequence[Task], flags: Sequence[str], store_path: str) -> dict[str, list[str]]:
    """Each task's flags among `flags`: static ones computed directly; a dynamic one (passed_by_floor, gold_fails,
    nondeterministic) takes the audit, reused from the store's cache or run now and cached."""
    data.load_deferred()
    if any(flag in DYNAMIC_FLAGS for flag in flags):
        from .auditing import audit_tasks  # plays conversations: only a run excluding a dynamic flag needs it

        store = open_store(store_path, registry.migrations)
        try:
            found = {a["id"]: a["flags"] for a in await audit_tasks(registry, data, tasks, store)}
        finally:
            store.close()
    else:
        found = {task.id: list(static_flags(task, data)) for task in tasks}
    return {task_id: [flag for flag in hits if flag in flags] for task_id, hits in found.items()}


def exclusion_line(store: Store, run_id: str) -> str | None:
    """The run header's line on the tasks `--exclude-flagged` left out (None when the run excluded none)."""
    found = store.last_run_event(run_id, (EXCLUDED_EVENT,))
    if found is None:
        return None
    tasks = sorted(found["tasks"], key=task_id_key)
    shown = ", ".join(tasks[:10]) + (f" and {len(tasks) - 10} more" if len(tasks) > 10 else "")
    return f"excluded {len(tasks)} task(s) flagged {' or '.join(found['flags'])} by {found.get('by') or BY}" + (f": {shown}" if tasks else "")


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
