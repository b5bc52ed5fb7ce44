"""Task validation for `bench tasks` and gold-replay checks for `bench check`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_kernel.conversation.messages import TerminationReason
from bench_kernel.errors import ConfigError
from bench_kernel.evaluation.evaluator import evaluate, replay_gold
from bench_kernel.logs import get_logger
from bench_kernel.plugins import PluginSet, collect, get_plugin_manager
from bench_kernel.run.runner import RunConfig, load_domain
from bench_kernel.serialization import read_json
from bench_kernel.tasks.domain import DomainData, build_environment
from bench_kernel.tasks.ordering import task_id_key
from bench_kernel.tasks.schema import Task

log = get_logger()


def load_for_cli(plugins: list[str] | None, *, domain: str | None, split: str | None, tasks_file: str | None,
                 data_dir: str | None, retrieval: str | None = None, retrieval_options: dict[str, Any] | None = None,
                 warn: Callable[[str], None] | None = None) -> DomainData:
    """Load one domain's data with the plugins named on the command line (a broken plugin is treated as `bench run` does)."""
    registry = collect(checked_plugins(plugins, warn))
    config = RunConfig(domain=domain, split=split, tasks_file=tasks_file, data_dir=data_dir, retrieval=retrieval,
                       retrieval_options=retrieval_options)
    return load_domain(registry, config)


def checked_plugins(selected: list[str] | None, warn: Callable[[str], None] | None = None) -> PluginSet:
    """The plugin manager for a command: a named plugin that failed is an error, any other failure a warning."""
    plugin_set = get_plugin_manager(selected)
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


def check_task(data: DomainData, task: Task) -> dict[str, Any]:
    """Replay a task's gold actions; report hashes, failing actions, assertions and triviality."""
    gold = replay_gold(data, task, with_reference=True)
    untouched = build_environment(data, task)
    trivial = asyncio.run(evaluate(task, [], TerminationReason.USER_STOP, untouched, gold)).reward == 1.0
    failed_assertions = [f"{c.subject}: {c.detail}" for c in gold.assertion_checks if not c.met]
    return {
        "task_id": task.id,
        "ok": gold.ok,
        "gold_db_hash": gold.reference_hash or gold.agent_hash,
        "gold_state_hash": gold.agent_hash,
        "gold_user_db_hash": gold.reference_user_hash or gold.user_hash,
        "gold_user_state_hash": gold.user_hash,
        "gold_action_errors": gold.action_errors,
        "gold_assertion_failures": failed_assertions,
        "do_nothing_passes": trivial,
    }


def check_tasks(data: DomainData) -> list[dict[str, Any]]:
    """Check every task of a domain; a task whose set-up raises is reported, not hidden; so is a shared record edited in place."""
    data.agent_state.content_hash()  # pin the pristine digests (lazy otherwise) so in-place edits show
    if data.user_state is not None:
        data.user_state.content_hash()
    results = []
    for task in sorted(data.tasks, key=lambda t: task_id_key(t.id)):
        try:
            results.append(check_task(data, task))
        except Exception as exc:  # noqa: BLE001 - a broken task is a finding, not a crash
            results.append({"task_id": task.id, "ok": False, "gold_db_hash": None, "gold_state_hash": None,
                            "gold_user_db_hash": None, "gold_user_state_hash": None,
                            "gold_action_errors": [f"set-up failed: {type(exc).__name__}: {exc}"],
                            "gold_assertion_failures": [], "do_nothing_passes": None})
    edited = data.agent_state.verify_untouched() + (data.user_state.verify_untouched() if data.user_state else [])
    if edited:
        results.append({"task_id": "(shared records)", "ok": False, "gold_db_hash": None, "gold_state_hash": None,
                        "gold_user_db_hash": None, "gold_user_state_hash": None, "gold_assertion_failures": [],
                        "do_nothing_passes": None,
                        "gold_action_errors": [f"a tool edited a shared record of table {t!r} in place" for t in edited]})
    return results


def render_check(data: DomainData, results: list[dict[str, Any]]) -> str:
    """A plain summary: counts, then every failing or trivial task by id."""
    failing = [r for r in results if not r["ok"]]
    trivial = [r["task_id"] for r in results if r["do_nothing_passes"]]
    lines = [f"{data.name}: {len(results)} tasks, gold replay ok for {len(results) - len(failing)}, failing {len(failing)}"]
    for r in failing:
        for problem in r["gold_action_errors"] + r["gold_assertion_failures"]:
            lines.append(f"  FAIL {r['task_id']}: {problem}")
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
    initial = domain.get("initial_agent_db_hash")
    if initial and data.reference_hash is not None:
        ours_initial = data.reference_hash(data.agent_state)
        lines.append(f"initial DB hash {'matches' if ours_initial == initial else 'DIFFERS: ' + ours_initial}")
    initial_user = domain.get("initial_user_db_hash")
    if initial_user and data.reference_user_hash is not None and data.user_state is not None:
        ours_user = data.reference_user_hash(data.user_state)
        lines.append(f"initial user DB hash {'matches' if ours_user == initial_user else 'DIFFERS: ' + ours_user}")
    return lines


def _compare_side(results: list[dict[str, Any]], tasks: dict[str, Any], key: str, column: str, what: str,
                  source: str) -> list[str]:
    expected = {task_id: entry.get(key) for task_id, entry in tasks.items() if entry.get(key)}
    ours = {r["task_id"]: r[column] for r in results}
    compared = [t for t in expected if t in ours]
    matching = [t for t in compared if ours[t] == expected[t]]
    lines = [f"expected hashes: {len(matching)} of {len(compared)} {what} match ({source})"]
    return lines + [f"  MISMATCH {t}: ours {ours[t]} expected {expected[t]}" for t in compared if t not in matching]
