"""`bench run` through the bridge from the tests, and what the results database then holds."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from bench_kernel.testing import FakeOpenAIServer, cli


def bench_run(server: FakeOpenAIServer, factory: str, db: Path, *more: str) -> str:
    args = [
        "run",
        "--plugin",
        "mock",
        "--plugin",
        "bridge",
        "--plugin",
        "llm",
        "--plugin",
        "openai",
        "--agent",
        "framework",
        "--agent-option",
        f"factory={factory}",
        "--agent-model",
        "fake-model",
        "--agent-base-url",
        server.base_url,
        "--task-id",
        "upgrade_by_email",
        "--no-baseline",
        "--db",
        str(db),
        *more,
    ]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def rows(db: Path, sql: str) -> list[dict[str, Any]]:
    connection = sqlite3.connect(db)
    connection.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in connection.execute(sql)]
    finally:
        connection.close()


def tool_turns(db: Path, run_id: str) -> list[list[str]]:
    messages = [
        json.loads(r["message_json"]) for r in rows(db, "select * from messages order by rowid") if r["conversation_id"].startswith(run_id + "/")
    ]
    return [[c["name"] for c in m["tool_calls"]] for m in messages if m["role"] == "assistant" and m.get("tool_calls")]
