"""An endpoint that echoes the credentials back: the key never reaches the results database, the logs or the output."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

KEY = "sk-proj-Echoed0123456789abcdefSECRET"
OTHER = "az-9f8e7d6c5b4a39281706f5e4d3c2b1a0"
"""A second credential the server reveals in an `api-key` header form (Azure style), never configured anywhere."""


def _echo(headers: Any) -> str:
    return f"Authorization: {headers.get('Authorization')}\napi-key: {OTHER}\nx-api-key={KEY}"


# Each chat request gets the next fault; every one carries the credentials in what it sends back.
FAULTS: list[tuple[int, str, Any]] = [
    (200, "text/plain", lambda h: f"<html>proxy says hello\n{_echo(h)}</html>"),  # non-JSON success
    (200, "application/json", lambda h: json.dumps({"debug": _echo(h)})),  # JSON without choices
    (200, "application/json", lambda h: json.dumps([_echo(h)])),  # JSON, not an object
    (
        200,
        "application/json",
        lambda h: json.dumps(
            {
                "choices": [
                    {
                        "message": {
                            "role": "assistant",
                            "tool_calls": [
                                {"id": "c1", "type": "function", "function": {"name": "find_customer_by_email", "arguments": "{" + _echo(h)}}
                            ],
                        }
                    }
                ]
            }
        ),
    ),
    (400, "application/json", lambda h: json.dumps({"error": {"message": _echo(h)}})),
    (500, "text/plain", lambda h: _echo(h)),  # retryable: outlives the retries, an infrastructure error
    (404, "text/plain", lambda h: _echo(h)),
    (200, "application/json", lambda h: json.dumps({"choices": [{"message": {"role": "assistant", "content": 42, "note": _echo(h)}}]})),
]


class _EchoHandler(BaseHTTPRequestHandler):
    count = 0
    lock = threading.Lock()
    check_status = 200

    def do_GET(self) -> None:  # the credential check before the run
        if self.check_status != 200:
            self._send(self.check_status, "text/plain", _echo(self.headers))
            return
        self._send(200, "application/json", json.dumps({"object": "list", "data": [{"id": "m", "object": "model"}]}))

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with self.lock:
            status, kind, body = FAULTS[_EchoHandler.count % len(FAULTS)]
            _EchoHandler.count += 1
        self._send(status, kind, body(self.headers))

    def _send(self, status: int, kind: str, text: str) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        return None


@pytest.fixture
def echo_server() -> Iterator[str]:
    _EchoHandler.count = 0
    _EchoHandler.check_status = 200
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _bench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bench_kernel", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "BENCH_LOG_LEVEL": "info", **env},
    )


def _leaks(text: str) -> list[str]:
    return [secret for secret in (KEY, OTHER, KEY[-12:], OTHER[-12:]) if secret in text]


def test_credentials_echoed_by_every_fault_kind_never_reach_the_database_logs_or_output(echo_server: str, tmp_path: Path) -> None:
    db = tmp_path / "bench.db"
    result = _bench(
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
        "--agent-model",
        "m",
        "--agent-base-url",
        echo_server,
        "--agent-api-key-env",
        "ECHO_KEY",
        "--model-option",
        "agent.max_retries=0",
        "--concurrency",
        "1",
        "--db",
        str(db),
        "--format",
        "json",
        env={"ECHO_KEY": KEY},
    )
    assert _EchoHandler.count >= len(FAULTS), result.stderr
    assert "Traceback" not in result.stderr
    with sqlite3.connect(db) as conn:
        stored = "\n".join(conn.iterdump())
        run_id = conn.execute("SELECT id FROM runs").fetchone()[0]
        errors = [row[0] for row in conn.execute("SELECT error FROM llm_calls WHERE error IS NOT NULL")]
    files = "".join(p.read_bytes().decode("utf-8", "replace") for p in tmp_path.glob("bench.db*"))
    for where, text in (("stdout", result.stdout), ("stderr", result.stderr), ("database", stored), ("files", files)):
        assert _leaks(text) == [], (where, [line[:300] for line in text.splitlines() if _leaks(line)][:2])
    # Every fault was recorded, still readable, with the secrets blanked.
    assert len(errors) >= len(FAULTS) and "Bearer ***" in stored, errors
    report = _bench("report", "--db", str(db), "--format", "json", run_id, env={})
    assert report.returncode == 0 and _leaks(report.stdout + report.stderr) == []


@pytest.mark.parametrize("status", [401, 403, 503])
def test_a_credential_check_that_echoes_the_key_is_refused_without_printing_it(echo_server: str, tmp_path: Path, status: int) -> None:
    _EchoHandler.check_status = status
    result = _bench(
        "run",
        "-p",
        "mock",
        "-p",
        "openai",
        "-p",
        "llm",
        "--agent",
        "llm-fc",
        "--agent-model",
        "m",
        "--agent-base-url",
        echo_server,
        "--agent-api-key-env",
        "ECHO_KEY",
        "--model-option",
        "agent.max_retries=0",
        "--db",
        str(tmp_path / "b.db"),
        "--format",
        "none",
        env={"ECHO_KEY": KEY},
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "Bearer ***" in result.stderr
    assert _leaks(result.stdout + result.stderr) == []
