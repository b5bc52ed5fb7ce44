"""What the viewer's pages show, as plain data computed from a read-only store (no Datasette here)."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any
from urllib.parse import urlencode

from bench_duplex import SpeechSegment, Timeline
from bench_report.compare import compare_stored
from bench_report.text import agent_label

from bench_kernel import BenchError, Store, build_report, is_success, run_registry
from bench_view import duplex, task

KERNEL = "bench-kernel"
TICK_MS = 200
"""The kernel's default tick, for speech events of a conversation whose timeline is missing."""


def run_url(run_id: str) -> str:
    """The run page of a run."""
    return "/-/bench/run?" + urlencode({"id": run_id})


def conversation_url(conversation_id: str) -> str:
    """The conversation page of a conversation."""
    return "/-/bench/conversation?" + urlencode({"id": conversation_id})


def table_url(database: str, table: str, **filters: Any) -> str:
    """A Datasette table page filtered by exact column values."""
    query = urlencode({k: v for k, v in filters.items() if v is not None})
    return f"/{database}/{table}" + (f"?{query}" if query else "")


def conversations_url(database: str, run_id: str, arm: str = "", termination_reason: str = "", task_id: str = "") -> str:
    """The canned query listing a run's conversations (each linking to its page), filtered."""
    query = urlencode({"run": run_id, "arm": arm, "termination_reason": termination_reason, "task_id": task_id})
    return f"/{database}/conversations_of_run?{query}"


def metric_url(database: str, run_id: str, plugin: str, metric: str) -> str:
    """The canned query listing a metric's values in a run, by conversation."""
    return f"/{database}/metric_values_of_run?" + urlencode({"run": run_id, "plugin": plugin, "metric": metric})


def pretty(text: str | None) -> str:
    """A JSON text indented for reading (other text unchanged)."""
    if not text:
        return ""
    try:
        return json.dumps(json.loads(text), indent=2, sort_keys=True, ensure_ascii=False)
    except json.JSONDecodeError:
        return text


def runs(store: Store) -> list[dict[str, Any]]:
    """Every stored run with its run page."""
    return [{**r, "url": run_url(r["id"])} for r in store.runs()]


def run_page(store: Store, run_id: str, database: str) -> dict[str, Any]:
    """A run's report with a link from every figure to the conversations behind it, and its conversations."""
    run = store.run(run_id)
    assert run is not None
    registry, notes = run_registry(run)
    report = build_report(store, run_id, registry)
    figures = [{"name": "average reward", **report.average_reward, "of": "conversations", "url": conversations_url(database, run_id, "agent")}]
    figures += [{"name": f"pass^{k}", **v, "of": "tasks", "url": "#tasks"} for k, v in report.pass_hat_k.items()]
    figures += [{"name": f"pass@{k}", **v, "of": "tasks", "url": "#tasks"} for k, v in report.pass_at_k.items()]
    figures += [
        {"name": f"component {name}", **v, "of": "conversations", "url": metric_url(database, run_id, KERNEL, f"component.{name}")}
        for name, v in report.components.items()
    ]
    figures += [
        {"name": name, **v, "of": "conversations", "url": metric_url(database, run_id, *name.split(":", 1))} for name, v in report.metrics.items()
    ]
    return {
        "run": run,
        "report": report,
        "notes": notes,
        "figures": figures,
        "settings": task.run_settings(run),
        "terminations": [{"reason": k, "count": v, "url": conversations_url(database, run_id, "agent", k)} for k, v in report.terminations.items()],
        # Usage an agent reported about its own model calls has no ledger rows to link to.
        "costs": [
            {
                **c,
                "url": None
                if c["role"].endswith("(reported)")
                else table_url(database, "llm_calls", run_id=run_id, role=c["role"], model=c["model"]),
            }
            for c in report.costs
        ],
        "agent_label": agent_label(report.header),
        "baseline_url": conversations_url(database, run_id, "baseline"),
        "tasks": _tasks(store, run_id, report.tasks),
        "sections": report.sections,
    }


def _tasks(store: Store, run_id: str, tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    trials: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in store.conversations(run_id):
        if c["arm"] == "agent":
            trials[c["task_id"]].append({**c, "url": conversation_url(c["id"]), "passed": is_success(c["reward"])})
    return [{**t, "conversations": trials[t["task_id"]]} for t in tasks]


def conversation_page(store: Store, conversation_id: str, database: str) -> dict[str, Any] | None:
    """One conversation: its row, the transcript with tool calls and events in place, reward checks, metrics, model calls."""
    rows = list(store.db.query("select * from conversations where id = ?", [conversation_id]))
    if not rows:
        return None
    conversation = rows[0]
    reward_info = json.loads(conversation["reward_info_json"]) if conversation.get("reward_info_json") else None
    run = store.run(conversation["run_id"])
    assert run is not None
    played, task_notes = task.find_task(run, conversation["task_id"])
    metrics = list(store.db.query("select * from metric_values where conversation_id = ? order by plugin, metric", [conversation_id]))
    calls = list(store.db.query("select * from llm_calls where conversation_id = ? order by id", [conversation_id]))
    full_duplex, duplex_error = None, None
    try:
        full_duplex = duplex.load_timeline(store, conversation_id)
    except BenchError as exc:  # a malformed timeline spoils its strip, never the rest of the page
        duplex_error = str(exc)
    return {
        "conversation": conversation,
        "passed": is_success(conversation["reward"]),
        "attributes": json.loads(conversation.get("attributes_json") or "{}"),
        "run_url": run_url(conversation["run_id"]),
        "settings": task.run_settings(run),
        "task": task.task_page(played, _action_checks(reward_info)) if played is not None else None,
        "task_notes": task_notes,
        "attribution": attribution(conversation),
        "reviews": reviews(store, conversation_id),
        "timeline": timeline(store, conversation_id, full_duplex.tick_ms if full_duplex else TICK_MS),
        "duplex": duplex.page(full_duplex, conversation_id, store.path) if full_duplex else duplex_error and {"error": duplex_error},
        "reward_info": reward_info,
        "metrics": [{**m, "details": pretty(m["details_json"])} for m in metrics],
        "llm_calls": calls,
        "llm_calls_url": table_url(database, "llm_calls", conversation_id=conversation_id),
        "totals": {
            "prompt_tokens": sum(c["prompt_tokens"] or 0 for c in calls),
            "completion_tokens": sum(c["completion_tokens"] or 0 for c in calls),
            "cost": None if any(c["cost"] is None and not c["error"] for c in calls) else sum(c["cost"] or 0.0 for c in calls),
        },
    }


def timeline(store: Store, conversation_id: str, tick_ms: int = TICK_MS) -> list[dict[str, Any]]:
    """Messages in order, each with its tool calls (arguments, result, error) and the events that happened at it.

    tick_ms (a full-duplex conversation's tick) puts its speech events' ticks in seconds.
    """
    calls: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for call in store.db.query("select * from tool_calls where conversation_id = ? order by message_idx", [conversation_id]):
        calls[call["message_idx"]].append({**call, "arguments": pretty(call["arguments_json"]), "result": None, "result_idx": None})
    events: dict[int | None, list[dict[str, Any]]] = defaultdict(list)
    for event in store.conversation_events(conversation_id):
        events[event["message_index"]].append(_event(event, tick_ms))
    items = []
    waiting: dict[str, dict[str, Any]] = {}
    for m in store.messages(conversation_id):
        items += [{"type": "event", **e} for e in events.pop(m["idx"], [])]
        item = {"type": "message", **m, "tool_calls": calls.get(m["idx"], []), "result_of": None}
        waiting.update((c["call_id"], c) for c in item["tool_calls"])
        answered = waiting.pop(m["tool_call_id"], None) if m["role"] == "tool" and m.get("tool_call_id") else None
        if answered is not None:  # the result shows once, with its call; the tool message only points to it
            answered.update(result=pretty(m["content"]), error=m["error"], result_idx=m["idx"])
            item["result_of"] = answered
        items.append(item)
    return items + [{"type": "event", **e} for index in sorted(events, key=lambda i: (i is None, i or 0)) for e in events[index]]


def _action_checks(reward_info: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The stored ACTION checks by subject ("ACTION_ID NAME"), to show each beside its gold action."""
    components = (reward_info or {}).get("components") or []
    return {c["subject"]: c for comp in components if comp.get("component") == "ACTION" for c in comp.get("checks") or []}


def attribution(conversation: dict[str, Any]) -> dict[str, Any] | None:
    """Who a failed conversation's failure is attributed to, with its rule, source and evidence (stores before the
    attribution columns have none)."""
    label = conversation.get("attribution")
    if not label:
        return None
    try:
        evidence = json.loads(conversation.get("attribution_evidence") or "{}")
    except json.JSONDecodeError:
        evidence = {"evidence": conversation.get("attribution_evidence")}
    if not isinstance(evidence, dict):
        evidence = {"evidence": evidence}
    return {
        "label": label,
        "rule": evidence.get("rule"),
        "source": evidence.get("source"),
        "evidence": evidence.get("evidence") if isinstance(evidence.get("evidence"), str) else pretty(json.dumps(evidence.get("evidence"))),
    }


def reviews(store: Store, conversation_id: str) -> list[dict[str, Any]]:
    """bench-review's reviews of the conversation, each with its findings (none in a store never reviewed)."""
    if not (store.db.table("reviews").exists() and store.db.table("review_findings").exists()):
        return []
    found: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for f in store.db.query("select * from review_findings where conversation_id = ? order by reviewer, mode, idx", [conversation_id]):
        found[(f["reviewer"], f["mode"])].append(f)
    rows = store.db.query("select * from reviews where conversation_id = ? order by reviewer, mode", [conversation_id])
    return [{**r, "findings": found.get((r["reviewer"], r["mode"]), [])} for r in rows]


def _event(row: dict[str, Any], tick_ms: int) -> dict[str, Any]:
    data = json.loads(row["data_json"] or "{}")
    line = _one_line(row["kind"], data, tick_ms)
    return {
        "kind": row["kind"],
        "source": row["source"],
        "ts_utc": row["ts_utc"],
        "message_index": row["message_index"],
        "data": data,
        "meant": data.get("meant"),
        "heard": data.get("heard"),
        "line": line,
        "fields": []
        if line
        else [(k, v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)) for k, v in sorted(data.items()) if k not in ("meant", "heard")],
    }


def _one_line(kind: str, data: dict[str, Any], tick_ms: int) -> str | None:
    """The line a full-duplex event shows instead of its fields (a timeline's data runs to thousands of entries)."""
    if kind == Timeline.kind:
        return duplex.summary(data)
    if kind == SpeechSegment.kind:
        return duplex.speech_line(data, tick_ms)
    return None


def compare_page(store: Store, run_a: str, run_b: str, database: str) -> dict[str, Any]:
    """Two runs compared, each task linking to its conversations in both runs."""
    comparison = compare_stored(store, run_a, store, run_b)
    tasks = [
        {
            **t,
            "url_a": conversations_url(database, run_a, "agent", task_id=t["task_id"]),
            "url_b": conversations_url(database, run_b, "agent", task_id=t["task_id"]),
        }
        for t in comparison.tasks
    ]
    return {"comparison": comparison, "tasks": tasks, "run_a_url": run_url(run_a), "run_b_url": run_url(run_b)}
