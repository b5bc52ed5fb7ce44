"""Task audits kept in the results database (table `task_audits`, migration m013), keyed by what decides them."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from bench_kernel import DomainData, Store, Task, canonical_json, utc_now

from .flags import AUDIT_VERSION, data_fingerprint, static_flags, task_hash

TABLE = "task_audits"


def read_audits(store: Store, domain: str, fingerprint: str, hashes: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The cached audits of these tasks (task id -> task content hash) for this data, by task id."""
    if TABLE not in store.db.table_names():  # a store opened read-only before migration m013
        return {}
    found: dict[str, dict[str, Any]] = {}
    ids = list(hashes)
    for start in range(0, len(ids), 500):  # SQLite limits the parameters of one statement
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows = store.db.execute(
            f"select task_id, task_hash, audit_json from {TABLE} where domain = ? and data_fingerprint = ? "
            f"and audit_version = ? and task_id in ({marks})",
            [domain, fingerprint, AUDIT_VERSION, *chunk],
        ).fetchall()
        found.update({task_id: json.loads(text) for task_id, digest, text in rows if hashes.get(task_id) == digest})
    return found


def write_audits(store: Store, domain: str, fingerprint: str, audits: Iterable[tuple[str, dict[str, Any]]]) -> None:
    """Keep audits ((task content hash, audit) pairs) for reuse; one transaction for all of them."""
    now = utc_now()
    rows = [[domain, audit["id"], digest, fingerprint, AUDIT_VERSION, canonical_json(audit), now] for digest, audit in audits]
    if not rows:
        return
    with store.write():  # one of the store's writes: what it holds back for this loop turn commits first
        store.db.conn.executemany(
            f"insert or replace into {TABLE} (domain, task_id, task_hash, data_fingerprint, audit_version, audit_json, "
            "created_utc) values (?, ?, ?, ?, ?, ?, ?)",
            rows,
        )


def cached_flags(store: Store, data: DomainData, task: Task) -> dict[str, str] | None:
    """The flags (flag -> evidence) of the task's cached audit for this data, or None when it was never audited."""
    found = read_audits(store, data.name, data_fingerprint(data), {task.id: task_hash(task)})
    audit = found.get(task.id)
    return None if audit is None else dict(audit.get("evidence") or {})


def task_hashes(tasks: Sequence[Task]) -> dict[str, str]:
    """Task id -> content hash."""
    return {task.id: task_hash(task) for task in tasks}


def flags_of_tasks(data: DomainData, tasks: Sequence[Task]) -> dict[str, dict[str, str]]:
    """Static flags of each task, by id (only tasks that have some)."""
    found = {task.id: static_flags(task, data) for task in tasks}
    return {task_id: flags for task_id, flags in found.items() if flags}
