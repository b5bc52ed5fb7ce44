"""The task a stored conversation played, and the settings of its run, as the conversation page shows them.

A results database keeps no task: a run stores its configuration and, per domain, the content hash of its tasks and
policy. The viewer loads the tasks as the run loaded them (its plugins, domain, data directory or tasks file, split,
personas), once per run setting for the life of the server, and says so when the data changed since the run.
"""

from __future__ import annotations

import json
import threading
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import attrs

from bench_kernel import (
    BenchError,
    DomainData,
    RunConfig,
    RunRecord,
    Task,
    canonical_json,
    domain_changed,
    load_run_domain,
    run_registry,
)

DOMAIN_KEYS = ("domain", "data_dir", "tasks_file", "split", "retrieval", "retrieval_options", "persona", "persona_file", "plugins")
"""The stored run settings that decide which tasks the run's conversations had (the cache's key)."""


@attrs.frozen(kw_only=True)
class LoadedTasks:
    """A run's domain data as the viewer could load it, or why it could not."""

    data: DomainData | None
    notes: tuple[str, ...] = ()


def run_tasks(run: RunRecord) -> LoadedTasks:
    """The run's domain data loaded as the run loaded it (cached per setting), with notes on what differs."""
    fields = {a.name for a in attrs.fields(RunConfig)}
    settings = {k: run.config[k] for k in DOMAIN_KEYS if k in fields and run.config.get(k) is not None}
    key = canonical_json({"settings": settings, "plugins": [p["name"] for p in run.plugins if not p.get("builtin")]})
    with _LOCK:  # one load per setting, even when two pages ask at once
        if key not in _LOADED:
            _LOADED[key] = _load(run)
        loaded = _LOADED[key]
    if loaded.data is None:
        return loaded
    changed = domain_changed(run, loaded.data)
    return attrs.evolve(loaded, notes=(*loaded.notes, f"{changed}: this page shows today's")) if changed else loaded


_LOADED: dict[str, LoadedTasks] = {}
"""Domain data by run settings and plugins, for the life of the server (as the database, it is shown as of then)."""
_LOCK = threading.Lock()


def _load(run: RunRecord) -> LoadedTasks:
    registry, notes = run_registry(run)
    if registry is None:
        return LoadedTasks(data=None, notes=tuple(notes))
    try:
        data = load_run_domain(run, registry)
    except BenchError as exc:
        return LoadedTasks(
            data=None,
            notes=(f"the run's tasks could not be loaded ({exc}): start `bench view` where the run was started, with its plugins installed",),
        )
    return LoadedTasks(data=data)


def find_task(run: RunRecord, task_id: str) -> tuple[Task | None, list[str]]:
    """The task with this id in the run's domain data, and notes (why it is missing, or what changed)."""
    loaded = run_tasks(run)
    notes = list(loaded.notes)
    if loaded.data is None:
        return None, notes
    task = next((t for t in loaded.data.tasks if t.id == task_id), None)
    if task is None:
        notes.append(
            f"task {task_id!r} is not among the {len(loaded.data.tasks)} tasks of domain {loaded.data.name!r} "
            "(a task composed for the run, e.g. by goal shifts, or one removed since)"
        )
    return task, notes


def task_page(task: Task, checks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """What the page shows of a task: scenario, gold actions (compared keys marked, each with its ACTION check),
    facts to communicate, env and NL assertions, reward basis and rule."""
    criteria = task.evaluation_criteria
    scenario = task.user_scenario
    return {
        "id": task.id,
        "description": [(k, v) for k, v in attrs.asdict(task.description).items() if v] if task.description else [],
        "ticket": task.ticket,
        "persona": scenario.persona,
        "instructions": _instructions(scenario.instructions),
        "script": scenario.script or [],
        "actions": [_action(a, checks.get(f"{a.action_id} {a.name}")) for a in task.gold_actions()],
        "communicate_info": list(criteria.communicate_info or []) if criteria else [],
        "env_assertions": [
            {"env_type": a.env_type, "call": f"{a.func_name}({_arguments(a.arguments)})", "assert_value": a.assert_value, "message": a.message}
            for a in (criteria.env_assertions or [])
        ]
        if criteria
        else [],
        "nl_assertions": list(criteria.nl_assertions or []) if criteria else [],
        "reward_basis": list(criteria.reward_basis) if criteria else [],
        "reward_rule": _rule(criteria.reward_rule) if criteria and criteria.reward_rule else None,
        "attributes": sorted(task.attributes.items()),
    }


def _instructions(instructions: Any) -> list[tuple[str, str]]:
    if isinstance(instructions, str):
        return [("instructions", instructions)]
    return [(k, v) for k, v in attrs.asdict(instructions).items() if v]


def _action(action: Any, check: dict[str, Any] | None) -> dict[str, Any]:
    compared = action.compare_args
    return {
        "action_id": action.action_id,
        "name": action.name,
        "requestor": action.requestor,
        "info": action.info,
        "compare": "the keys the call gives" if compared is None else (", ".join(compared) or "no key"),
        "arguments": [
            {"key": k, "value": json.dumps(v, ensure_ascii=False, sort_keys=True), "compared": compared is None or k in compared}
            for k, v in action.arguments.items()
        ],
        "check": check,
    }


def _rule(rule: Any) -> str:
    params = ", ".join(f"{k}={json.dumps(v, sort_keys=True)}" for k, v in sorted(rule.params.items()))
    return f"{rule.name}({params})" if params else rule.name


def _arguments(arguments: dict[str, Any]) -> str:
    return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False, sort_keys=True)}" for k, v in arguments.items())


def run_settings(run: RunRecord) -> dict[str, Any]:
    """The run's profile (name and hash), data, models per role (backend, model, base URL without secrets), plugins."""
    config = run.config
    recorded = config.get("profile")
    profile: dict[str, Any] = recorded if isinstance(recorded, dict) else {}
    models = [
        {
            "role": role,
            "backend": m.get("backend"),
            "model": m.get("model"),
            "base_url": public_url(m.get("base_url")),
            "api_key_env": m.get("api_key_env"),
        }
        for role, m in sorted((config.get("models") or {}).items())
    ]
    return {
        "profile": profile.get("name") or "bench",
        "profile_hash": (profile.get("sha256") or "")[:12],
        "profile_path": profile.get("path"),
        "data": config.get("tasks_file") or config.get("data_dir") or "the domain plugin's packaged suite",
        "split": config.get("split"),
        "domains": [{"name": name, "hash": digest[:12]} for name, digest in sorted(run.task_sets.items())],
        "models": models,
        "plugins": [
            {"name": p["name"], "version": p.get("version"), "distribution": p.get("distribution")} for p in run.plugins if not p.get("builtin")
        ],
    }


def public_url(url: str | None) -> str | None:
    """A base URL without what may hold a secret: user and password, query string and fragment."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    cleaned = urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    return cleaned + (" (query left out)" if parts.query else "")
