"""An agent in another process that speaks MCP and the OpenAI protocol, evaluated through the bridge.

The "remote agent" is a small HTTP server of this test: each turn bench POSTs the user's message with the
conversation's MCP URL and model endpoint; the agent lists the tools over MCP, calls its model once, then
performs the task's gold actions as MCP tool calls. bench must execute and score those calls, ledger the
model call, and end the conversation as usual.
"""

from __future__ import annotations

import asyncio
import http.server
import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from bench_kernel import RunConfig, collect, get_plugin_manager, load_domain
from bench_kernel.testing import FakeOpenAIServer, cli

pytest.importorskip("mcp", reason="pip install 'bench-bridge[mcp]' (mcp==2.3.*)")

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

TASK = "upgrade_by_email"


def gold_actions() -> list[tuple[str, dict[str, Any]]]:
    """The mock task's gold actions, read from the domain (what a perfect agent does)."""
    data = load_domain(collect(get_plugin_manager(["mock"])), RunConfig(domain="mock"))
    return [(a.name, dict(a.arguments)) for a in data.task(TASK).gold_actions() if a.requestor == "assistant"]


async def play_turn(payload: dict[str, Any], seen: dict[str, Any]) -> str:
    """One turn of the remote agent: tools over MCP, one model call, the gold actions as MCP calls."""
    async with streamable_http_client(payload["mcp_url"]) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        seen["tools"] = [t.name for t in (await session.list_tools()).tools]
        model = payload["model"]
        async with httpx.AsyncClient(trust_env=False) as client:
            reply = await client.post(
                f"{model['base_url']}/chat/completions",
                json={
                    "model": model["model"],
                    "messages": [{"role": "system", "content": payload["instructions"]}, {"role": "user", "content": payload["message"]}],
                },
                headers={"Authorization": f"Bearer {model['api_key']}"},
            )
            seen["model_status"] = reply.status_code
        for name, arguments in seen["actions"]:
            result = await session.call_tool(name, arguments)
            seen.setdefault("results", []).append(result.is_error)
    return "Your plan is changed."


@pytest.fixture
def remote_agent() -> Iterator[tuple[str, dict[str, Any]]]:
    seen: dict[str, Any] = {"actions": gold_actions(), "turns": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            payload = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen["turns"] += 1
            text = asyncio.run(play_turn(payload, seen)) if seen["turns"] == 1 else "Is there anything else?"
            body = json.dumps({"content": text}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/turn", seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_an_mcp_agent_in_another_process_lists_calls_and_is_scored(remote_agent: tuple[str, dict[str, Any]], tmp_path: Path) -> None:
    url, seen = remote_agent
    factory = tmp_path / "remote_factory.py"
    factory.write_text(f"from bench_bridge import RemoteAgent\n\n\ndef make(ctx):\n    return RemoteAgent({url!r})\n")
    db = tmp_path / "r.db"
    with FakeOpenAIServer() as server:
        result = CliRunner().invoke(
            cli,
            [
                "run",
                "--plugin",
                "mock",
                "--plugin",
                "bridge",
                "--plugin",
                "openai",
                "--agent",
                "framework",
                "--agent-option",
                f"factory={factory}:make",
                "--agent-option",
                "mcp=true",
                "--agent-model",
                "fake-model",
                "--agent-base-url",
                server.base_url,
                "--task-id",
                TASK,
                "--no-baseline",
                "--db",
                str(db),
                "--run-id",
                "remote",
            ],
            catch_exceptions=False,
        )
    assert result.exit_code == 0, result.output
    assert set(seen["tools"]) >= {name for name, _ in seen["actions"]}  # listed over MCP
    assert seen["model_status"] == 200 and seen["results"] == [False] * len(seen["actions"])
    connection = sqlite3.connect(db)
    try:
        (reward,) = connection.execute("select reward from conversations where run_id = 'remote'").fetchone()
        messages = [json.loads(m) for (m,) in connection.execute("select message_json from messages order by rowid")]
        ledger = connection.execute("select count(*) from llm_calls where run_id = 'remote' and role = 'agent'").fetchone()[0]
    finally:
        connection.close()
    called = [c["name"] for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert called == [name for name, _ in seen["actions"]]  # executed by bench's environment, in order
    assert reward == 1.0  # and scored
    assert ledger == 1  # the agent's own model call went through bench's model access


def test_the_issue_command_needs_no_backend_plugin_named(remote_agent: tuple[str, dict[str, Any]], tmp_path: Path) -> None:
    """`--plugin mock --plugin bridge` alone: the agent role's backend (openai) brings its own plugin."""
    url, _ = remote_agent
    factory = tmp_path / "remote_factory.py"
    factory.write_text(f"from bench_bridge import RemoteAgent\n\n\ndef make(ctx):\n    return RemoteAgent({url!r})\n")
    with FakeOpenAIServer() as server:
        result = CliRunner().invoke(
            cli,
            [
                "run",
                "--plugin",
                "mock",
                "--plugin",
                "bridge",
                "--agent",
                "framework",
                "--agent-option",
                f"factory={factory}:make",
                "--agent-option",
                "mcp=true",
                "--agent-model",
                "fake-model",
                "--agent-base-url",
                server.base_url,
                "--task-id",
                TASK,
                "--no-baseline",
                "--db",
                str(tmp_path / "r.db"),
                "--format",
                "json",
            ],
            catch_exceptions=False,
        )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["average_reward"]["value"] == 1.0
