"""`bench run` with roles on the litellm backend (`openai/...` models) against a real OpenAI-protocol server on 127.0.0.1."""

from __future__ import annotations

import json
import re
import sqlite3
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from bench_litellm import INSTALL
from bench_litellm.client import import_litellm
from click.testing import CliRunner

from bench_kernel import ConfigError
from bench_kernel.testing import FakeOpenAIServer, Reply, cli

try:
    import_litellm()  # as the backend imports it (offline); a plain import would download litellm's price map
except ConfigError:
    pytest.skip(f"the litellm backend's tests need litellm: {INSTALL}", allow_module_level=True)

KEY = "sk-litellm-run-never-stored-0123"
TASK = "upgrade_by_email"
FAST_RETRIES = 'agent.options={"retry_base_s": 0.001, "retry_max_s": 0.01}'


def agent(body: dict[str, Any]) -> Reply:
    """A competent agent for the upgrade task: look the customer up, change the plan, confirm."""
    results = [m for m in body["messages"] if m["role"] == "tool"]
    if len(results) == 0:
        return Reply.tool_call("find_customer_by_email", {"email": "ada.okafor@example.net"})
    if len(results) == 1:
        return Reply.tool_call("change_plan", {"customer_id": "C-1001", "plan_id": "fiber-1000"})
    return Reply.text("Done: you are now on Fiber 1000.")


def world(body: dict[str, Any]) -> Reply:
    """Answer as the agent, the user or the judge, recognised from the request."""
    if body.get("response_format"):
        statements = re.findall(r"^(\d+)\. ", body["messages"][-1]["content"], re.M)
        return Reply.text(json.dumps({"verdicts": [{"index": int(i), "met": True, "reasoning": "done"} for i in statements]}))
    if any(t["function"]["name"] == "change_plan" for t in body.get("tools") or []):
        return agent(body)
    if not any(m["role"] == "assistant" for m in body["messages"]):
        return Reply.text("Hi, please move me to Fiber 1000. My email is ada.okafor@example.net.")
    return Reply.text("Great, thanks. ###STOP###")


@pytest.fixture
def tasks_file(tmp_path: Path) -> Path:
    """The mock upgrade task, scored on DB and an NL assertion (so the judge is needed)."""
    tasks = json.loads(files("bench_mock").joinpath("data/tasks.json").read_text())
    task = next(t for t in tasks if t["id"] == TASK)
    task["evaluation_criteria"]["nl_assertions"] = ["The agent moved the customer to Fiber 1000."]
    task["evaluation_criteria"]["reward_basis"] = ["DB", "NL_ASSERTION"]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]))
    return path


def bench(server: FakeOpenAIServer, db: Path, *extra: str, model: str = "openai/fake", key: str = KEY) -> Any:
    """`bench run` with the agent on litellm (llm-fc, the scripted user); the CliRunner result."""
    args = [
        "run",
        "--plugin",
        "mock",
        "--plugin",
        "litellm",
        "--plugin",
        "llm",
        "--task-id",
        TASK,
        "--no-baseline",
        "--agent",
        "llm-fc",
        "--agent-backend",
        "litellm",
        "--agent-model",
        model,
        "--agent-base-url",
        server.base_url,
        "--agent-api-key-env",
        "FAKE_KEY",
        "--db",
        str(db),
        "--format",
        "json",
        *extra,
    ]
    return CliRunner().invoke(cli, args, env={"FAKE_KEY": key})


def report_of(result: Any, exit_code: int = 0) -> Any:
    assert result.exit_code == exit_code, result.output
    start = re.search(r"^\{", result.stdout, re.M)  # the report, after any warning the run logged
    assert start is not None, result.output
    return json.loads(result.stdout[start.start() :])


def stored(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_agent_user_and_judge_on_litellm_run_end_to_end_with_a_ledger(tasks_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with FakeOpenAIServer(world, api_key=KEY) as server:
        report = report_of(
            bench(
                server,
                db,
                "--tasks-file",
                str(tasks_file),
                "--user",
                "llm-user",
                "--user-backend",
                "litellm",
                "--user-model",
                "openai/fake-user",
                "--user-base-url",
                server.base_url,
                "--user-api-key-env",
                "FAKE_KEY",
                "--judge",
                "llm-judge",
                "--model-option",
                "judge.backend=litellm",
                "--judge-model",
                "openai/fake-judge",
                "--judge-base-url",
                server.base_url,
                "--judge-api-key-env",
                "FAKE_KEY",
            )
        )
        models_asked = [body["model"] for body in server.completions]
    assert report["average_reward"]["value"] == 1.0 and report["components"]["NL_ASSERTION"]["value"] == 1.0
    assert set(models_asked) == {"fake", "fake-user", "fake-judge"}  # litellm took the provider prefix off
    rows = stored(db, "select role, model, prompt_tokens, completion_tokens, latency_ms, attempts, cost, cached, error from llm_calls order by id")
    assert [(role, model) for role, model, *_ in rows] == [
        ("user", "openai/fake-user"),
        ("agent", "openai/fake"),
        ("agent", "openai/fake"),
        ("agent", "openai/fake"),
        ("user", "openai/fake-user"),
        ("judge", "openai/fake-judge"),
    ]
    assert all(
        (p, c, a, cost, cached, e) == (10, 5, 1, None, 0, None) and latency >= 0 for _, _, p, c, latency, a, cost, cached, e in rows
    )  # unpriced models: unknown cost, never 0
    calls = [
        json.loads(c)
        for (c,) in stored(db, "select tool_calls_json from messages where role = 'assistant' and tool_calls_json is not null order by idx")
    ]
    assert [[(c["name"], c["arguments"]) for c in call] for call in calls] == [
        [("find_customer_by_email", {"email": "ada.okafor@example.net"})],
        [("change_plan", {"customer_id": "C-1001", "plan_id": "fiber-1000"})],
    ]
    for path in tmp_path.glob("r.db*"):
        assert KEY.encode() not in path.read_bytes()


def test_a_429_then_success_is_retried_by_bench_and_ledgered_as_two_attempts(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with FakeOpenAIServer(agent, api_key=KEY, replies=[Reply.error(429, "slow down", retry_after="0.01")]) as server:
        report = report_of(bench(server, db, "--model-option", FAST_RETRIES))
        requests = len(server.completions)
    assert report["average_reward"]["value"] == 1.0
    assert stored(db, "select attempts, error from llm_calls order by id") == [(2, None), (1, None), (1, None)]
    assert requests == 4  # bench's one retry, and no hidden one by litellm or the OpenAI SDK


def test_a_refused_key_stops_the_run_before_it_starts_with_one_line(tmp_path: Path) -> None:
    with FakeOpenAIServer(agent, api_key=KEY) as server:
        result = bench(server, tmp_path / "r.db", key="sk-a-wrong-key-0000")
        completions = server.completions
    assert result.exit_code != 0
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: HTTP 401") and "sk-a-wrong-key-0000" not in line
    assert completions == []
    assert not (tmp_path / "r.db").exists()  # refused before any run was begun


def test_garbage_tool_arguments_are_a_recorded_conversation_error_not_a_crash(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with FakeOpenAIServer(lambda body: Reply.tool_call("find_customer_by_email", '{"email": '), api_key=KEY) as server:
        result = bench(server, db)
    # Recorded and reported; the exit status says that every conversation failed on the agent (docs/plugins.md).
    report = report_of(result, exit_code=1)
    assert "every" in result.output and "agent" in result.output
    assert report["terminations"] == {"agent_error": 1}
    [(reason, error)] = stored(db, "select termination_reason, error from conversations")
    assert reason == "agent_error" and "ModelResponseError" in error and "find_customer_by_email" in error
    [(attempts, ledgered)] = stored(db, "select attempts, error from llm_calls")
    assert attempts == 1 and "ModelResponseError" in ledgered


def test_cache_answers_a_second_identical_run_without_a_request(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    with FakeOpenAIServer(agent, api_key=KEY) as server:
        first = report_of(bench(server, db, "--cache", "--run-id", "first"))
        requests_after_first = len(server.completions)
        second = report_of(bench(server, db, "--cache", "--run-id", "second"))
        assert len(server.completions) == requests_after_first == 3
    assert first["average_reward"] == second["average_reward"] and first["components"] == second["components"]
    assert stored(db, "select run_id, sum(cached), count(*) from llm_calls group by run_id order by run_id") == [("first", 0, 3), ("second", 3, 3)]


def test_cost_is_litellms_price_for_a_model_it_knows_and_unknown_otherwise(tmp_path: Path) -> None:
    import litellm

    info = litellm.get_model_info("openai/gpt-4o-mini")
    per_call = 10 * info["input_cost_per_token"] + 5 * info["output_cost_per_token"]
    with FakeOpenAIServer(agent, api_key=KEY) as server:
        priced = report_of(bench(server, tmp_path / "priced.db", model="openai/gpt-4o-mini"))
        unpriced = report_of(bench(server, tmp_path / "unpriced.db", model="openai/fake"))
    assert [c["cost"] for c in priced["costs"]] == [pytest.approx(3 * per_call, abs=1e-6)]  # the report rounds
    assert [cost for (cost,) in stored(tmp_path / "priced.db", "select cost from llm_calls")] == [pytest.approx(per_call)] * 3
    assert [c["cost"] for c in unpriced["costs"]] == [None]  # never 0
    assert stored(tmp_path / "unpriced.db", "select count(*), count(cost) from llm_calls") == [(3, 0)]
