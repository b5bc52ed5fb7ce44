"""Replies no store can hold (lone surrogates, arguments nested thousands deep) are a recorded model error, not a crash."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from bench_kernel.testing import FakeOpenAIServer, Reply, cli

DEEP = "[" * 5000 + "]" * 5000
REPLIES = {
    "surrogate-content": Reply.raw('{"choices": [{"message": {"role": "assistant", "content": "hi \\ud800"}}]}'),
    "surrogate-arguments": Reply.tool_call("find_customer_by_email", '{"email": "\\udcff@example.net"}'),
    "surrogate-tool-name": Reply.tool_call("find_\udcff", {}),
    "deep-arguments": Reply.tool_call("find_customer_by_email", '{"email": ' + DEEP + "}"),
}


@pytest.mark.parametrize("kind", sorted(REPLIES))
def test_an_unstorable_reply_is_an_agent_error_and_the_run_goes_on(kind: str, tmp_path: Path) -> None:
    db = tmp_path / "b.db"
    with FakeOpenAIServer(lambda body: REPLIES[kind]) as server:
        result = CliRunner().invoke(
            cli,
            [
                "run",
                "-p",
                "mock",
                "-p",
                "openai",
                "-p",
                "llm",
                "--agent",
                "llm-fc",
                "--no-baseline",
                "--num-tasks",
                "2",
                "--agent-model",
                "m",
                "--agent-base-url",
                server.base_url,
                "--db",
                str(db),
                "--format",
                "none",
            ],
        )
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT termination_reason, error FROM conversations").fetchall()
    assert len(rows) == 2 and all(reason == "agent_error" for reason, _ in rows), rows
    assert all(error and error.encode("utf-8") for _, error in rows)
