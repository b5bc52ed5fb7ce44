"""What runs take from audits: `--exclude-flagged` before a run, and the static flags a run records for its report."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench_kernel.audit.auditing import audit_tasks
from bench_kernel.audit.cache import task_hashes
from bench_kernel.audit.flags import DYNAMIC_FLAGS, FLAGS, data_fingerprint, static_flags
from bench_kernel.errors import ConfigError
from bench_kernel.plugins import Registry
from bench_kernel.store.store import Store, open_store
from bench_kernel.tasks.domain import DomainData
from bench_kernel.tasks.ordering import task_id_key
from bench_kernel.tasks.schema import Task

STATIC_FLAGS_EVENT = "run.audit_flags"
"""The run event holding the static audit flags of the run's tasks, the data's fingerprint and the tasks' hashes."""
EXCLUDED_EVENT = "run.excluded_flagged"
"""The run event naming the flags `--exclude-flagged` left out and the tasks it left out."""


def check_flag_names(flags: Sequence[str]) -> list[str]:
    """The flags, split at commas and checked; an unknown name is an error listing the valid ones."""
    names = [name.strip() for item in flags for name in item.split(",") if name.strip()]
    unknown = [name for name in names if name not in FLAGS]
    if unknown:
        raise ConfigError(f"unknown audit flag {unknown[0]!r} for --exclude-flagged (flags: {', '.join(FLAGS)})")
    return sorted(set(names), key=FLAGS.index)  # one order whatever the command line's: it is part of the run's id


async def exclude_flagged(registry: Registry, data: DomainData, tasks: list[Task], flags: Sequence[str],
                          store_path: Path | str) -> tuple[list[Task], dict[str, list[str]]]:
    """The tasks without those flagged with one of `flags`, and the left-out task ids with their flags.

    Static flags are computed directly; a dynamic flag (passed_by_floor, gold_fails, nondeterministic) takes the
    audit, reused from the store's cache or run now and cached.
    """
    wanted = check_flag_names(flags)
    data.load_deferred()
    if any(flag in DYNAMIC_FLAGS for flag in wanted):
        store = open_store(store_path, registry.migrations)
        try:
            found = {a["id"]: a["flags"] for a in await audit_tasks(registry, data, tasks, store)}
        finally:
            store.close()
    else:
        found = {task.id: list(static_flags(task, data)) for task in tasks}
    excluded = {task.id: [f for f in found[task.id] if f in wanted] for task in tasks}
    excluded = {task_id: hits for task_id, hits in excluded.items() if hits}
    kept = [task for task in tasks if task.id not in excluded]
    if not kept:
        raise ConfigError(f"--exclude-flagged {' '.join(wanted)} leaves none of the {len(tasks)} selected tasks of domain "
                          f"{data.name!r} (`bench audit` lists their flags)")
    return kept, excluded


def record_exclusion(store: Store, run_id: str, flags: Sequence[str], excluded: dict[str, list[str]]) -> None:
    """Keep what `--exclude-flagged` left out with the run (its header and report say so)."""
    store.add_event(run_id, EXCLUDED_EVENT, {"flags": check_flag_names(flags), "tasks": excluded})


def exclusion_line(store: Store, run_id: str) -> str | None:
    """The run header's line on the tasks `--exclude-flagged` left out (None when the run excluded none)."""
    found = store.last_run_event(run_id, (EXCLUDED_EVENT,))
    if found is None:
        return None
    tasks = sorted(found["tasks"], key=task_id_key)
    shown = ", ".join(tasks[:10]) + (f" and {len(tasks) - 10} more" if len(tasks) > 10 else "")
    return (f"excluded {len(tasks)} task(s) flagged {' or '.join(found['flags'])} by `bench audit`"
            + (f": {shown}" if tasks else ""))


def record_static_flags(store: Store, run_id: str, data: DomainData, tasks: Sequence[Task]) -> None:
    """Store the static flags of the run's tasks with the data's fingerprint, so its report needs no domain loading."""
    unique = list({task.id: task for task in tasks}.values())
    flags = {task.id: static_flags(task, data) for task in unique}
    payload: dict[str, Any] = {"domain": data.name, "fingerprint": data_fingerprint(data), "task_hashes": task_hashes(unique),
                               "flags": {task_id: found for task_id, found in flags.items() if found}}
    store.add_event(run_id, STATIC_FLAGS_EVENT, payload)
