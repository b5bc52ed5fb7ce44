"""Task flaggers: registered objects that flag the tasks whose reward cannot be trusted (bench-trust's `bench audit`).

`bench run --exclude-flagged FLAG` leaves out, before the run, the tasks the flagger that knows FLAG flags with it; the
run keeps what it left out (event `run.excluded_flagged`: its header and its report say so). Once a run has played its
conversations, each flagger's `record(ctx)` keeps what the run's report needs (bench-trust: its tasks' static flags).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from bench_kernel.errors import ConfigError
from bench_kernel.logs import get_logger
from bench_kernel.tasks.ordering import task_id_key

if TYPE_CHECKING:
    from bench_kernel.registry import Registry
    from bench_kernel.run.context import RunContext
    from bench_kernel.schema.tasks import Task
    from bench_kernel.store.store import Store
    from bench_kernel.tasks.domain import DomainData

log = get_logger()
EXCLUDED_EVENT = "run.excluded_flagged"
"""The run event naming the flags `--exclude-flagged` left out, the tasks it left out and the flagger(s) that flagged them."""


@attrs.define(kw_only=True)
class TaskFlagger:
    """Base class of registered task flaggers: `flagged` names each task's flags, `record` keeps them with a run."""

    name: str
    flags: tuple[str, ...] = ()
    """Every flag it gives, in the order it lists them (the order `--exclude-flagged` names take in a run's identity)."""
    description: str = ""
    """How a run's header names it: "excluded 3 task(s) flagged gold_fails by DESCRIPTION"."""

    async def flagged(
        self, registry: Registry, data: DomainData, tasks: Sequence[Task], flags: Sequence[str], store_path: str
    ) -> dict[str, list[str]]:
        """Each task's flags among `flags` (task id -> flags; a task without one may be left out), for the run's plugins."""
        raise NotImplementedError

    def record(self, ctx: RunContext) -> None:
        """Keep what the run's report needs once the run has played its conversations (default: nothing)."""


@attrs.frozen(kw_only=True)
class Exclusion:
    """What `--exclude-flagged` left out of a run: the flags (in the flaggers' order), task id -> its flags, by whom."""

    flags: list[str]
    tasks: dict[str, list[str]]
    by: str


def flag_names(registry: Registry, names: Sequence[str]) -> dict[str, list[str]]:
    """Flagger name -> the flags among `names` it gives, in its order; an unknown flag is an error listing the known ones."""
    flaggers: dict[str, TaskFlagger] = registry.components.get("task flagger", {})
    known = {flag: name for name, flagger in flaggers.items() for flag in flagger.flags}
    unknown = [name for name in names if name not in known]
    if unknown and not known:
        raise ConfigError("--exclude-flagged needs a plugin that flags tasks, and none is loaded: bench-trust's audit does (pip install bench-trust)")
    if unknown:
        raise ConfigError(f"unknown flag {unknown[0]!r} for --exclude-flagged (flags: {', '.join(known)})")
    return {
        name: [flag for flag in flagger.flags if flag in names] for name, flagger in flaggers.items() if any(flag in names for flag in flagger.flags)
    }


async def exclude_flagged(
    registry: Registry, data: DomainData, tasks: list[Task], names: Sequence[str], store_path: str
) -> tuple[list[Task], Exclusion]:
    """The tasks none of whose flags is among `names`, and what was left out (no task left is an error)."""
    wanted = flag_names(registry, names)
    found: dict[str, list[str]] = {}
    for name, flags in wanted.items():
        for task_id, hits in (await registry.get("task flagger", name).flagged(registry, data, tasks, flags, store_path)).items():
            found.setdefault(task_id, []).extend(flag for flag in hits if flag in flags)
    flags = [flag for flags in wanted.values() for flag in flags]
    by = " and ".join(registry.get("task flagger", name).description or name for name in wanted)
    kept = [task for task in tasks if not found.get(task.id)]
    if not kept:
        raise ConfigError(
            f"--exclude-flagged {' '.join(flags)} leaves none of the {len(tasks)} selected tasks of domain {data.name!r} ({by} lists their flags)"
        )
    return kept, Exclusion(flags=flags, tasks={task.id: found[task.id] for task in tasks if found.get(task.id)}, by=by)


def record_exclusion(store: Store, run_id: str, exclusion: Exclusion) -> None:
    """Keep what `--exclude-flagged` left out with the run (its header and report say so)."""
    store.add_event(run_id, EXCLUDED_EVENT, {"flags": exclusion.flags, "tasks": exclusion.tasks, "by": exclusion.by})


def exclusion_line(store: Store, run_id: str) -> str | None:
    """The run header's line on the tasks `--exclude-flagged` left out (None when the run excluded none)."""
    found = store.last_run_event(run_id, (EXCLUDED_EVENT,))
    if found is None:
        return None
    tasks = sorted(found["tasks"], key=task_id_key)
    shown = ", ".join(tasks[:10]) + (f" and {len(tasks) - 10} more" if len(tasks) > 10 else "")
    return f"excluded {len(tasks)} task(s) flagged {' or '.join(found['flags'])} by {found.get('by') or 'a task flagger'}" + (
        f": {shown}" if tasks else ""
    )


def record_flags(ctx: RunContext) -> None:
    """Every flagger's `record(ctx)`, each on its own: one that fails is logged and leaves the run as it is."""
    for name, flagger in ctx.registry.components.get("task flagger", {}).items():
        try:
            flagger.record(ctx)
        except Exception as exc:  # noqa: BLE001 - what a report lacks is not worth the run
            log.warning("run.flags_not_recorded", flagger=name, error=f"{type(exc).__name__}: {exc}")
