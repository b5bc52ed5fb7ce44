"""`bench review` seen in the viewer: a reviewed run's page shows the review section, each finding linking to its
conversation (a real `bench view` process on 127.0.0.1, over a run reviewed against the local fake OpenAI server)."""

from __future__ import annotations

import html
import json
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from click.testing import CliRunner

from bench_kernel.testing import FakeOpenAIServer, Reply, bench_cli


def reviewer(body: dict[str, Any]) -> Reply:
    """Blames the agent at turn 2 (the do-nothing agent's reply) and the user never."""
    return Reply.text(
        json.dumps(
            {
                "agent_errors": [
                    {"category": "missed_action", "turn": 2, "severity": "critical", "reason": "the agent never looked the customer up"}
                ],
                "user_errors": [],
                "summary": "the agent did nothing",
            }
        )
    )


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_reviewed_run_page_shows_the_findings_linked_to_their_conversations(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    cli = bench_cli(["mock", "review", "openai", "view"])
    ran = CliRunner().invoke(
        cli,
        [
            "run",
            "--plugin",
            "mock",
            "--agent",
            "do-nothing",
            "--num-tasks",
            "2",
            "--run-id",
            "idle",
            "--db",
            str(db),
            "--format",
            "none",
            "--progress",
            "none",
        ],
    )
    assert ran.exit_code == 0, ran.output
    with FakeOpenAIServer(reviewer) as server:
        reviewed = CliRunner().invoke(cli, ["review", "idle", "--db", str(db), "--reviewer-model", "judge-a", "--reviewer-base-url", server.base_url])
    assert reviewed.exit_code == 0, reviewed.output

    port = free_port()
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("bench")), "view", "--db", str(db), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "BENCH_DEBUG": ""},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        page = None
        for _ in range(150):
            try:
                response = httpx.get(f"{base}/-/bench/run?id=idle", timeout=2)
                if response.status_code == 200:
                    page = html.unescape(response.text)
                    break
            except httpx.TransportError:
                pass
            if process.poll() is not None:
                pytest.fail(f"bench view did not start: {process.communicate(timeout=5)[1]}")
            time.sleep(0.2)
        assert page is not None, "bench view did not answer"
        assert 'Conversation review <span class="meta">(review)</span>' in page
        assert "Error categories (reviewer, full)" in page and "the agent never looked the customer up" in page
        review = page[page.index("Conversation review <span") :]
        review = review[: review.index("</section>")]  # the review section's links (the failed-checks section has its own)
        linked = [unquote(h) for h in re.findall(r'class="section-conversation" href="([^"]+)"', review)]
        assert sorted(linked) == sorted(f"/-/bench/conversation?id=idle/agent/{t}/0" for t in ("plan_price_question", "upgrade_by_email"))
        conversation = httpx.get(base + linked[0], timeout=10)
        assert conversation.status_code == 200 and "idle/agent/" in html.unescape(conversation.text)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
