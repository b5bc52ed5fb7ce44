"""bench-services with the LLM agent and the LLM user behind a real OpenAI-protocol server on 127.0.0.1.

The fake models play competent parts: the user says its plan's lines (which its prompt carries, in
the task's instructions), the agent performs the gold actions of what the user has asked so far.
The conversation must complete without error and the domain must report the goals from the
database as it goes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench_kernel.testing import FakeOpenAIServer, Reply, cli

KEY = "sk-test-never-stored-0123456789"
TASK = "services_medium_007"


def _task() -> dict[str, Any]:
    tasks = json.loads(files("bench_services").joinpath("data/tasks.json").read_text(encoding="utf-8"))
    return next(t for t in tasks if t["id"] == TASK)


def world(body: dict[str, Any]) -> Reply:
    """The agent (its requests carry the services tools) or the user."""
    task = _task()
    moves = [m["say"] for m in task["plan"]["moves"]]
    if any(t["function"]["name"] == "book" for t in body.get("tools") or []):
        asked = [m for m in body["messages"] if m["role"] == "user"]
        done = [m for m in body["messages"] if m["role"] == "tool"]
        actions = task["evaluation_criteria"]["actions"]
        due = [a for a in actions if int(a["action_id"].split(".")[0][1:]) < len(asked)]
        if len(done) < len(due):
            action = due[len(done)]
            return Reply.tool_call(action["name"], action["arguments"])
        return Reply.text("That is taken care of. Anything else?")
    spoken = [m for m in body["messages"] if m["role"] == "assistant"]
    return Reply.text(moves[len(spoken)] if len(spoken) < len(moves) else "Thanks, that is all. ###STOP###")


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(world, api_key=KEY) as running:
        yield running


def test_llm_agent_and_user_complete_a_services_conversation(server: FakeOpenAIServer, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    args = [
        "run",
        "--plugin",
        "services",
        "--plugin",
        "openai",
        "--plugin",
        "llm",
        "--task-id",
        TASK,
        "--agent",
        "llm-fc",
        "--user",
        "llm-user",
        "--no-baseline",
        "--db",
        str(db),
        "--format",
        "json",
    ]
    for role in ("agent", "user"):
        args += [f"--{role}-model", "fake-model", f"--{role}-base-url", server.base_url, f"--{role}-api-key-env", "FAKE_KEY"]
    result = CliRunner().invoke(cli, args, env={"FAKE_KEY": KEY})
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout[result.stdout.index("{") :])
    assert report["average_reward"]["value"] == 1.0 and not server.errors
    user_prompts = [b for b in server.completions if not b.get("tools")]
    first_move = _task()["plan"]["moves"][1]["say"]
    assert any(first_move in m["content"] for m in user_prompts[0]["messages"] if m["role"] == "system")  # the plan is in its prompt
    with sqlite3.connect(db) as conn:
        ((error, termination),) = conn.execute("select error, termination_reason from conversations").fetchall()
        events = [json.loads(d) for (d,) in conn.execute("select data_json from conversation_events where kind = 'goal.status' order by idx")]
    assert error is None and termination == "user_stop"
    final = {e["goal_id"]: e["status"] for e in events}
    assert final == {g["id"]: "completed" for g in _task()["goals"]}  # every goal, from the database, the user emitting none
