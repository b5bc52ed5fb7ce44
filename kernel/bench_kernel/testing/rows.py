"""What a stored run holds that decides its results, for tests that compare two ways of running one configuration."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

RESULT_QUERIES = {
    "runs": "select id, config_hash, status from runs",
    "conversations": "select id, arm, task_id, trial, seed, agent, user, termination_reason, reward, reward_info_json,"
    " error, num_messages, agent_cost, user_cost, attributes_json from conversations order by id",
    "messages": "select conversation_id, idx, role, content, tool_calls_json, tool_call_id, requestor, error"
    " from messages order by conversation_id, idx",
    "metric_values": "select conversation_id, metric, plugin, value, error from metric_values order by conversation_id, plugin, metric",
    "tool_calls": "select * from tool_calls order by 1, 2",
    "llm_calls": "select conversation_id, role, model, count(*), sum(cost) from llm_calls group by conversation_id, role, model order by 1, 2, 3",
}


def stored_rows(db: Path | str) -> dict[str, list[tuple[Any, ...]]]:
    """Result-deciding rows of every table, in a stable order, without timings; tool call ids normalised."""
    with sqlite3.connect(db) as conn:
        return {name: [_same_ids(row) for row in conn.execute(sql)] for name, sql in RESULT_QUERIES.items()}


def _same_ids(row: tuple[Any, ...]) -> tuple[Any, ...]:
    # A fake server numbers tool calls by its own request order, which concurrency shuffles in any run.
    return tuple(re.sub(r"call_\d+", "call_N", v) if isinstance(v, str) else v for v in row)
