"""Telecom end to end across plugins: the LLM agent (behind a real OpenAI-protocol server on 127.0.0.1) in the
no-user and oracle-plan modes, and a telecom run exported to tau2's results format and imported back."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench_kernel import Store
from bench_kernel.testing import FakeOpenAIServer, Reply, bench_cli

KEY = "sk-test-telecom-0123456789"
cli = bench_cli(["telecom", "llm", "openai", "tau2"])
PLAN_STEP = re.compile(r"^\d+\. (?:Ask the customer to run `(\w+)` on their side|Call `(\w+)`) with arguments (\{.*\})\.$", re.M)


def agent_model(body: dict[str, Any]) -> Reply:
    """An agent that follows the plan in its prompt (oracle-plan) or fixes airplane mode itself (no-user)."""
    system = body["messages"][0]["content"]
    steps = PLAN_STEP.findall(system)
    done = sum(1 for m in body["messages"][1:] if m["role"] == "assistant") - 1  # minus the greeting
    if "<plan>" in system:
        if done >= len(steps):
            return Reply.text("Everything on the plan is done; your phone should work now.")
        user_tool, agent_tool, arguments = steps[done]
        if user_tool:
            return Reply.text(f"Please do this on your device: {user_tool}({arguments})")
        return Reply.tool_call(agent_tool, json.loads(arguments))
    if not any(m["role"] == "tool" for m in body["messages"]):
        return Reply.tool_call("toggle_airplane_mode", {})
    return Reply.tool_call("done", {})


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(agent_model, api_key=KEY) as running:
        yield running


def invoke(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), env={"FAKE_KEY": KEY})
    assert result.exit_code == 0, result.output
    return result.output


def conversations(db: Path) -> list[dict[str, Any]]:
    store = Store(db)
    try:
        return store.conversations(store.runs()[0]["id"])
    finally:
        store.close()


@pytest.mark.parametrize(
    ("mode", "task"),
    [("no-user", "[service_issue]airplane_mode_on[PERSONA:None]"), ("oracle-plan", "[service_issue]overdue_bill_suspension[PERSONA:Easy]")],
)
def test_the_llm_agent_solves_telecom_tasks_in_both_modes(server: FakeOpenAIServer, tmp_path: Path, mode: str, task: str) -> None:
    db = tmp_path / "r.db"
    invoke(
        "run",
        "--plugin",
        "telecom",
        "--plugin",
        "llm",
        "--plugin",
        "openai",
        "--agent",
        "llm-fc",
        "--mode",
        mode,
        "--task-id",
        task,
        "--agent-model",
        "fake",
        "--agent-base-url",
        server.base_url,
        "--agent-api-key-env",
        "FAKE_KEY",
        "--db",
        str(db),
        "--format",
        "none",
    )
    rows = {r["arm"]: r for r in conversations(db)}
    assert (rows["agent"]["error"], rows["agent"]["reward"]) == (None, 1.0)
    assert rows["baseline"]["reward"] == 0.0
    store = Store(db)
    try:
        calls = [
            (c["name"], c["requestor"])
            for c in store.db.query("select name, requestor from tool_calls where conversation_id = ? order by message_idx", [rows["agent"]["id"]])
        ]
    finally:
        store.close()
    if mode == "no-user":
        assert calls[0] == ("toggle_airplane_mode", "assistant")  # a phone tool, called by the agent itself
    else:
        assert calls == [("send_payment_request", "assistant"), ("make_payment", "user"), ("resume_line", "assistant"), ("reboot_device", "user")]


def test_an_exported_telecom_run_carries_the_phone_and_its_tool_calls(tmp_path: Path) -> None:
    db, out = tmp_path / "run.db", tmp_path / "results.json"
    invoke("run", "--plugin", "telecom", "--plugin", "tau2", "--num-tasks", "6", "--run-id", "source", "--db", str(db), "--format", "none")
    invoke("export", "tau2-results", "source", "--db", str(db), "-o", str(out))
    document = json.loads(out.read_text())
    sims = document["simulations"]
    assert len(sims) == 6
    device_calls = [c for sim in sims for m in sim["messages"] if m["role"] == "user" for c in m.get("tool_calls") or []]
    assert len(device_calls) >= 5 and all(c["requestor"] == "user" for c in device_calls)
    for sim in sims:
        phone = sim["final_state"]["user_db"]["phone"]
        assert phone["surroundings"]["phone_number"] == "612-555-0142"
        assert len(sim["final_state"]["user_db_hash"]) == 64
    result = CliRunner().invoke(cli, ["import", "tau2-results", str(out), "--plugin", "telecom", "--db", str(tmp_path / "i.db")])
    assert result.exit_code == 0, result.output
    assert "our reward equals theirs for 6" in result.output
