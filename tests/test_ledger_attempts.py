"""`bench run` against an endpoint that keeps failing: the ledger (llm_calls) holds the real number of attempts."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from bench_kernel.testing import FakeOpenAIServer, Reply, cli


def test_a_call_that_fails_after_its_retries_is_ledgered_with_every_attempt(tmp_path: Path) -> None:
    def overloaded(body: dict[str, Any]) -> Reply:
        return Reply.error(503, "overloaded")

    db = tmp_path / "r.db"
    with FakeOpenAIServer(overloaded) as server:
        args = [
            "run",
            "--plugin",
            "mock",
            "--plugin",
            "openai",
            "--plugin",
            "llm",
            "--task-id",
            "upgrade_by_email",
            "--agent",
            "llm-fc",
            "--agent-model",
            "fake-model",
            "--agent-base-url",
            server.base_url,
            "--no-baseline",
            "--model-option",
            "agent.max_retries=3",
            "--model-option",
            'agent.options={"retry_base_s": 0.001, "retry_max_s": 0.01}',
            "--db",
            str(db),
            "--format",
            "none",
        ]
        result = CliRunner().invoke(cli, args)
        requests = len(server.completions)
    assert result.exit_code == 1 and "infrastructure error" in result.output, result.output
    with sqlite3.connect(db) as conn:
        rows = conn.execute("select role, attempts, error from llm_calls").fetchall()
        [(error,)] = conn.execute("select error from conversations").fetchall()
    assert [(role, attempts) for role, attempts, _ in rows] == [("agent", 4)] and requests == 4
    assert "gave up after 4 attempts" in rows[0][2] and "ModelUnavailableError" in error
