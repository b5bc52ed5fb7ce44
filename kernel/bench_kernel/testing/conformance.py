"""The conformance kit: checks every domain plugin runs against itself.

Use it from a plugin's tests in three lines::

    from bench_kernel.testing import DomainConformance

    class TestConformance(DomainConformance):
        plugin = "acme"            # the entry-point name in the `bench` group

pytest then runs every check below as a test of that class. Each check is also a plain function
returning the problems it found (an empty list when the domain conforms), for other harnesses.
Set `domain` when the plugin registers several domains, `data_dir`/`tasks_file` to check external
data, and `do_nothing_passes` to the ids of tasks known to pass without any work (tau2's own data
has some); any other task the do-nothing agent passes is a finding.
"""

from __future__ import annotations

import asyncio
import tempfile
import weakref
from collections.abc import Collection
from pathlib import Path
from typing import ClassVar

import attrs

from bench_kernel.evaluation.evaluator import evaluate, replay_gold
from bench_kernel.evaluation.goldcheck import IN_PLACE, NOT_DETERMINISTIC, GoldCheck, GoldChecker, ToolFault, in_place_fix
from bench_kernel.plugins import collect, get_plugin_manager, installed_entry_points
from bench_kernel.registry import Registry
from bench_kernel.run.runner import RunConfig, load_domain, run
from bench_kernel.schema.messages import TerminationReason
from bench_kernel.store.store import Store
from bench_kernel.tasks.domain import DomainData, build_environment


def load_plugin(plugin: str) -> tuple[Registry, list[str]]:
    """The registry of one installed plugin alone, and its load or registration failures."""
    plugin_set = get_plugin_manager([plugin])
    registry = collect(plugin_set)
    return registry, [f"plugin {p.name!r} failed: {p.error}" for p in plugin_set.failures()]


def check_registration(plugin: str, domain: str | None = None) -> list[str]:
    """The entry point is installed, loads alone, and registers the domain under its own name."""
    if plugin not in installed_entry_points():
        return [f"no entry point {plugin!r} in the 'bench' group (see [project.entry-points.bench])"]
    registry, problems = load_plugin(plugin)
    names = [n for n in registry.names("domain") if registry.origin("domain", n) == plugin]
    if not names:
        problems.append(f"plugin {plugin!r} registers no domain")
    elif domain is not None and domain not in names:
        problems.append(f"plugin {plugin!r} registers {names}, not {domain!r}")
    return problems


def check_tasks_load(data: DomainData) -> list[str]:
    """Tasks load, there is at least one, and ids are unique."""
    ids = [t.id for t in data.tasks]
    problems = [] if ids else [f"domain {data.name!r} loaded no task"]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    return problems + [f"duplicate task id {i!r}" for i in duplicates]


def check_tool_schemas(data: DomainData) -> list[str]:
    """Every tool of both toolkits has a schema (docstrings match signatures) with a description."""
    problems = []
    for toolkit in (data.agent_toolkit, data.user_toolkit):
        if toolkit is None:
            continue
        try:
            specs = toolkit.specs()
        except Exception as exc:  # noqa: BLE001 - the finding is the report
            problems.append(f"{toolkit.__name__}: {type(exc).__name__}: {exc}")
            continue
        problems += [f"{toolkit.__name__}.{name}: no description" for name, spec in specs.items() if not spec.schema["function"].get("description")]
        if toolkit is data.agent_toolkit and not any(spec.offered for spec in specs.values()):
            problems.append(f"{toolkit.__name__}: no tool marked with @tool")
    return problems


@attrs.frozen
class _GoldChecks:
    """Every task's gold check (or what its set-up raised), by task id, and the tool faults found across them."""

    checks: dict[str, GoldCheck | Exception]
    faults: list[ToolFault]


_checked: dict[int, tuple[weakref.ref[DomainData], _GoldChecks]] = {}


def gold_checks(data: DomainData) -> _GoldChecks:
    """The gold checks of every task (`GoldChecker`: two replays from fresh states, the first watched), computed once
    per loaded data and before any other replay of it, so that a record edited in place is found, pinned to its call
    and put back."""
    found = _checked.get(id(data))
    if found is not None and found[0]() is data:
        return found[1]
    pin_pristine(data)
    checker = GoldChecker(data)
    checks: dict[str, GoldCheck | Exception] = {}
    for task in data.tasks:
        try:
            checks[task.id] = checker.check(task)
        except Exception as exc:  # noqa: BLE001 - reported by check_gold_replays
            checks[task.id] = exc
    result = _GoldChecks(checks, checker.faults())
    key = id(data)
    _checked[key] = (weakref.ref(data, lambda _: _checked.pop(key, None)), result)
    return result


def check_gold_replays(data: DomainData) -> list[str]:
    """Every task's gold actions run without error and its env assertions hold on the gold state."""
    problems = []
    for task_id, gold in gold_checks(data).checks.items():
        if isinstance(gold, Exception):
            problems.append(f"task {task_id!r}: set-up failed: {type(gold).__name__}: {gold}")
            continue
        problems += [f"task {task_id!r}: gold action failed: {e}" for e in gold.action_errors]
        problems += [f"task {task_id!r}: assertion fails on the gold state: {c.subject} ({c.detail})" for c in gold.assertion_checks if not c.met]
    return problems


def check_gold_deterministic(data: DomainData) -> list[str]:
    """Two gold replays of every task from fresh states end in the same state (no random ids, no clock)."""
    return [fault.describe() for fault in gold_checks(data).faults if fault.problem == NOT_DETERMINISTIC]


def check_do_nothing_fails(data: DomainData, known_passes: Collection[str] = ()) -> list[str]:
    """Every task that checks state or speech fails when the agent does nothing (known exceptions aside)."""
    faulty = {fault.task_id for fault in gold_checks(data).faults}  # (the first replays are the watched ones)
    problems = []
    for task in data.tasks:
        criteria = task.evaluation_criteria
        if criteria is None or task.id in known_passes or task.id in faulty:  # a tool fault is reported as such
            continue
        env = build_environment(data, task)
        info = asyncio.run(evaluate(task, [], TerminationReason.USER_STOP, env, replay_gold(data, task)))
        if info.reward >= 1.0:
            problems.append(f"task {task.id!r} is passed by doing nothing (declare it in do_nothing_passes if intended)")
    return problems


def pin_pristine(data: DomainData) -> DomainData:
    """Compute the pristine tables' digests now, so that a later in-place edit shows (digests are otherwise lazy)."""
    data.agent_state.content_hash()
    if data.user_state is not None:
        data.user_state.content_hash()
    return data


def check_shared_records(data: DomainData) -> list[str]:
    """No tool edits a shared (pristine) record in place: each one that does is named with its task; a record edited
    by code outside the watched calls is found by digesting every shared record after all the replays."""
    faults = [fault.describe() for fault in gold_checks(data).faults if fault.problem == IN_PLACE]
    changed = data.agent_state.verify_untouched() + (data.user_state.verify_untouched() if data.user_state else [])
    return faults or [
        f"table {name!r}: a shared record was edited in place outside the tool calls the kit watched. {in_place_fix(name)}" for name in changed
    ]


def check_short_run(
    plugin: str, domain: str | None = None, *, tasks: int = 3, data_dir: str | None = None, tasks_file: str | None = None
) -> list[str]:
    """The oracle and the scripted user play a few tasks end to end; each conversation is stored exactly once."""
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "conformance.db"
        config = RunConfig(domain=domain, plugins=[plugin], num_tasks=tasks, baseline=False, trials=2, data_dir=data_dir, tasks_file=tasks_file)
        summary = run(config, db, plugins=get_plugin_manager([plugin]))
        store = Store(db)
        try:
            rows = store.conversations(summary.run_id)
        finally:
            store.close()
    keys = [(r["task_id"], r["trial"]) for r in rows]
    problems = [] if summary.status == "complete" else [f"the oracle run ended {summary.status}"]
    if len(keys) != len(set(keys)) or len(keys) != summary.planned:
        problems.append(f"{len(keys)} conversations stored for {summary.planned} planned")
    return problems + [
        f"{r['task_id']}: {r['termination_reason']} {r['error'] or ''}".strip()
        for r in rows
        if r["termination_reason"] in ("agent_error", "user_error", "infrastructure_error")
    ]


class DomainConformance:
    """Subclass in a plugin's tests and set `plugin`: every check becomes a test."""

    plugin: ClassVar[str]
    domain: ClassVar[str | None] = None
    data_dir: ClassVar[str | None] = None
    tasks_file: ClassVar[str | None] = None
    do_nothing_passes: ClassVar[frozenset[str]] = frozenset()
    run_tasks: ClassVar[int] = 3

    def domain_data(self) -> DomainData:
        """The domain's data as a run loads it (loaded once per class)."""
        cached = type(self).__dict__.get("_conformance_data")
        if cached is None:
            registry, _ = load_plugin(self.plugin)
            cached = pin_pristine(load_domain(registry, RunConfig(domain=self.domain, data_dir=self.data_dir, tasks_file=self.tasks_file)))
            type.__setattr__(type(self), "_conformance_data", cached)
        return cached

    def test_conformance_registration(self) -> None:
        """The entry point loads alone and registers the domain."""
        assert not check_registration(self.plugin, self.domain), check_registration(self.plugin, self.domain)

    def test_conformance_tasks_load(self) -> None:
        """Tasks load with unique ids."""
        _assert_none(check_tasks_load(self.domain_data()))

    def test_conformance_tool_schemas(self) -> None:
        """Every tool has a schema."""
        _assert_none(check_tool_schemas(self.domain_data()))

    def test_conformance_gold_replays(self) -> None:
        """Gold actions replay and assertions hold on the gold state."""
        _assert_none(check_gold_replays(self.domain_data()))

    def test_conformance_do_nothing_fails(self) -> None:
        """Doing nothing fails every task but the declared ones."""
        _assert_none(check_do_nothing_fails(self.domain_data(), self.do_nothing_passes))

    def test_conformance_shared_records(self) -> None:
        """No tool edits a shared record in place."""
        _assert_none(check_shared_records(self.domain_data()))

    def test_conformance_gold_deterministic(self) -> None:
        """Two gold replays from fresh states end in the same state."""
        _assert_none(check_gold_deterministic(self.domain_data()))

    def test_conformance_short_run(self) -> None:
        """An oracle run stores each conversation once."""
        _assert_none(check_short_run(self.plugin, self.domain, tasks=self.run_tasks, data_dir=self.data_dir, tasks_file=self.tasks_file))


def _assert_none(problems: list[str]) -> None:
    assert not problems, "\n".join(problems)
