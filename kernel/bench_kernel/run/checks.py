"""Task validation for `bench tasks` and gold-replay checks for `bench check`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_kernel.errors import ConfigError
from bench_kernel.evaluation.evaluator import evaluate, replay_gold
from bench_kernel.evaluation.goldcheck import IN_PLACE, GoldCheck, GoldChecker, ToolFault, in_place_fix
from bench_kernel.logs import get_logger
from bench_kernel.plugins import PluginSet, collect, get_plugin_manager, with_backend_plugins
from bench_kernel.run.runner import RunConfig, load_domain
from bench_kernel.schema.messages import TerminationReason
from bench_kernel.schema.tasks import Task
from bench_kernel.serialization import read_json
from bench_kernel.tasks.domain import DomainData, build_environment
from bench_kernel.tasks.ordering import task_id_key

log = get_logger()


def load_for_cli(plugins: list[str] | None, *, warn: Callable[[str], None] | None = None, **settings: Any) -> DomainData:
    """Load one domain's data with the plugins named on the command line; `settings`: `bench_kernel.cli.domain_options`'."""
    return load_domain(collect(checked_plugins(plugins, warn)), RunConfig(**settings))


def checked_plugins(selected: list[str] | None, warn: Callable[[str], None] | None = None) -> PluginSet:
    """The plugin manager for a command (with bench-trust): a named plugin that failed is an error, another a warning."""
    plugin_set = get_plugin_manager(with_backend_plugins(selected, []))
    collect(plugin_set)  # registration failures too, not only import failures
    failed = [p for p in plugin_set.failures() if selected and p.name in selected]
    if failed:
        raise ConfigError("; ".join(f"plugin {p.name!r} failed: {p.error}" for p in failed))
    for p in plugin_set.failures():
        (warn or log.warning)(f"warning: plugin {p.name!r} skipped: {p.error}")
    return plugin_set


def task_summaries(data: DomainData) -> list[dict[str, Any]]:
    """One line of facts per task."""
    return [
        {
            "task_id": t.id,
            "reward_basis": list(t.evaluation_criteria.reward_basis) if t.evaluation_criteria else [],
            "actions": len(t.gold_actions()),
            "user_actions": sum(a.requestor == "user" for a in t.gold_actions()),
            "has_ticket": t.ticket is not None,
            "problems": [p for p in data.task_problems if p.startswith(f"task {t.id!r}:")],
        }
        for t in sorted(data.tasks, key=lambda t: task_id_key(t.id))
    ]


def check_task(data: DomainData, task: Task, fault: ToolFault | None = None, replayed: GoldCheck | None = None) -> dict[str, Any]:
    """A task's gold replay (`replayed`, or a fresh one): hashes, failing actions, assertions, triviality and tool `fault`."""
    gold = replay_gold(data, task, with_reference=True, replayed=replayed)
    trivial = asyncio.run(evaluate(task, [], TerminationReason.USER_STOP, build_environment(data, task), gold)).reward == 1.0
    return {
        "task_id": task.id,
        "ok": gold.ok and fault is None,
        "gold_db_hash": gold.reference_hash or gold.agent_hash,
        "gold_state_hash": gold.agent_hash,
        "gold_user_db_hash": gold.reference_user_hash or gold.user_hash,
        "gold_user_state_hash": gold.user_hash,
        "gold_action_errors": gold.action_errors,
        "gold_assertion_failures": [f"{c.subject}: {c.detail}" for c in gold.assertion_checks if not c.met],
        "tool_fault": fault.describe() if fault is not None else None,
        "do_nothing_passes": trivial,
    }


def check_tasks(data: DomainData) -> list[dict[str, Any]]:
    """One row per task of a domain, gold replayed twice (`GoldChecker`, docs/plugins.md); a task whose set-up raises is reported."""
    data.agent_state.content_hash()  # pin the pristine digests (lazy otherwise) so in-place edits show
    if data.user_state is not None:
        data.user_state.content_hash()
    tasks = sorted(data.tasks, key=lambda t: task_id_key(t.id))
    checker = GoldChecker(data)
    checks: dict[str, GoldCheck | str] = {}
    for task in tasks:
        try:
            checks[task.id] = checker.check(task)
        except Exception as exc:  # noqa: BLE001 - a broken task is a finding, not a crash
            checks[task.id] = f"set-up failed: {type(exc).__name__}: {exc}"
    # edits in place come first and win: they replace what they made look nondeterministic
    faults = {fault.task_id: fault for fault in reversed(checker.faults())}
    # Later replays saw the records an edit in place changed (now put back): replay the others anew, not the faulty ones.
    spoilt = any(fault.problem == IN_PLACE for fault in faults.values())
    results = []
    for task in tasks:
        check, fault = checks[task.id], faults.get(task.id)
        if isinstance(check, str):
            results.append(_problem_row(task.id, [check]))
        elif fault is not None and fault.problem == IN_PLACE:
            results.append(_problem_row(task.id, [], fault.describe()))
        else:
            results.append(check_task(data, task, fault, None if spoilt else check))
    # Code outside the watched calls (a tool reaching `table.base`): a row with no task id, which render_check does not count.
    edited = data.agent_state.verify_untouched() + (data.user_state.verify_untouched() if data.user_state else [])
    return results + [
        _problem_row(None, [f"a shared record of table {t!r} was edited in place outside the tool calls the check watched. {in_place_fix(t)}"])
        for t in edited
    ]


def _problem_row(task_id: str | None, problems: list[str], fault: str | None = None) -> dict[str, Any]:
    hashes = dict.fromkeys(("gold_db_hash", "gold_state_hash", "gold_user_db_hash", "gold_user_state_hash"))
    row = {"task_id": task_id, "ok": False, **hashes, "gold_action_errors": problems, "gold_assertion_failures": []}
    return {**row, "tool_fault": fault, "do_nothing_passes": None}


def render_check(data: DomainData, results: list[dict[str, Any]]) -> str:
    """A plain summary: counts (of tasks), then every failing or trivial task by id, then problems of no one task."""
    tasks = [r for r in results if r["task_id"] is not None]
    failing = [r for r in tasks if not r["ok"]]
    trivial = [r["task_id"] for r in tasks if r["do_nothing_passes"]]
    lines = [f"{data.name}: {len(tasks)} tasks, gold replay ok for {len(tasks) - len(failing)}, failing {len(failing)}"]
    for r in [*failing, *(r for r in results if r["task_id"] is None)]:
        problems = r["gold_action_errors"] + r["gold_assertion_failures"] + ([r["tool_fault"]] if r["tool_fault"] else [])
        lines += [f"  FAIL {r['task_id'] or '(domain)'}: {problem}" for problem in problems]
    if trivial:
        lines.append(f"  passed by the do-nothing agent: {', '.join(trivial)}")
    return "\n".join(lines)


def compare_expected(data: DomainData, results: list[dict[str, Any]], expected_path: Path) -> list[str]:
    """Compare gold hashes with an expected-hashes file ({domains: {name: {initial_agent_db_hash, tasks: {id: {gold_agent}}}}})."""
    document = read_json(expected_path)
    domain = (document.get("domains") or {}).get(data.name) if isinstance(document, dict) else None
    if domain is None:
        raise ConfigError(f"{expected_path}: no expected hashes for domain {data.name!r} @ $.domains")
    tasks = domain.get("tasks") or {}
    lines = _compare_side(results, tasks, "gold_agent", "gold_db_hash", "gold DB hashes", expected_path.name)
    if any("gold_user" in entry for entry in tasks.values()) and data.reference_user_hash is not None:
        lines += _compare_side(results, tasks, "gold_user", "gold_user_db_hash", "gold user DB hashes", expected_path.name)
    sides = (("agent", "", data.reference_hash, data.agent_state), ("user", "user ", data.reference_user_hash, data.user_state))
    for side, label, hashed, state in sides:
        initial = domain.get(f"initial_{side}_db_hash")
        if initial and hashed is not None and state is not None:
            ours = hashed(state)
            lines.append(f"initial {label}DB hash {'matches' if ours == initial else 'DIFFERS: ' + ours}")
    return lines


def _compare_side(results: list[dict[str, Any]], tasks: dict[str, Any], key: str, column: str, what: str, source: str) -> list[str]:
    expected = {task_id: entry.get(key) for task_id, entry in tasks.items() if entry.get(key)}
    ours = {r["task_id"]: r[column] for r in results}
    compared = [t for t in expected if t in ours]
    matching = [t for t in compared if ours[t] == expected[t]]
    lines = [f"expected hashes: {len(matching)} of {len(compared)} {what} match ({source})"]
    return lines + [f"  MISMATCH {t}: ours {ours[t]} expected {expected[t]}" for t in compared if t not in matching]
