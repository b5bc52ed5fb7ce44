"""`bench run` with agent, user and judge models behind a real OpenAI-protocol server on 127.0.0.1."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bench_kernel.testing import FakeOpenAIServer, Reply, cli

KEY = "sk-test-never-stored-0123456789"
TASK = "upgrade_by_email"


def _agent(body: dict[str, Any]) -> Reply:
    """A competent agent for the upgrade task: look the customer up, change the plan, confirm."""
    results = [m for m in body["messages"] if m["role"] == "tool"]
    if len(results) == 0:
        return Reply.tool_call("find_customer_by_email", {"email": "ada.okafor@example.net"})
    if len(results) == 1:
        return Reply.tool_call("change_plan", {"customer_id": "C-1001", "plan_id": "fiber-1000"})
    return Reply.text("Done: you are now on Fiber 1000.")


def _user(body: dict[str, Any]) -> Reply:
    spoken = [m for m in body["messages"] if m["role"] == "assistant"]
    if not spoken:
        return Reply.text("Hi, please move me to Fiber 1000. My email is ada.okafor@example.net.")
    return Reply.text("Great, thanks. ###STOP###")


def _judge(body: dict[str, Any]) -> Reply:
    statements = re.findall(r"^(\d+)\. ", body["messages"][-1]["content"], re.M)
    verdicts = [{"index": int(i), "met": True, "reasoning": "the plan was changed"} for i in statements]
    return Reply.text(json.dumps({"verdicts": verdicts}))


def world(body: dict[str, Any]) -> Reply:
    """Answer as the agent, the user or the judge, recognised from the request."""
    if body.get("response_format"):
        return _judge(body)
    if body.get("tools") and any(t["function"]["name"] == "change_plan" for t in body["tools"]):
        return _agent(body)
    return _user(body)


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(world, api_key=KEY) as running:
        yield running


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


def bench_run(server: FakeOpenAIServer, tasks_file: Path, db: Path, *extra: str, env: dict[str, str] | None = None, exit_code: int = 0) -> Any:
    args = [
        "run",
        "--plugin",
        "mock",
        "--plugin",
        "openai",
        "--plugin",
        "llm",
        "--tasks-file",
        str(tasks_file),
        "--agent",
        "llm-fc",
        "--user",
        "llm-user",
        "--judge",
        "llm-judge",
        "--no-baseline",
        "--db",
        str(db),
        "--format",
        "json",
    ]
    for role in ("agent", "user", "judge"):
        args += [f"--{role}-model", "fake-model", f"--{role}-base-url", server.base_url, f"--{role}-api-key-env", "FAKE_KEY"]
    result = CliRunner().invoke(cli, args + list(extra), env={"FAKE_KEY": KEY, **(env or {})})
    assert result.exit_code == exit_code, result.output
    return json.loads(result.stdout[result.stdout.index("{") :])


def stored(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_agent_user_and_judge_models_run_end_to_end(server: FakeOpenAIServer, tasks_file: Path, tmp_path: Path) -> None:
    report = bench_run(server, tasks_file, tmp_path / "r.db")
    assert report["average_reward"]["value"] == 1.0
    assert report["components"]["NL_ASSERTION"]["value"] == 1.0
    assert {c["role"] for c in report["costs"]} == {"agent", "user", "judge"}
    assert all(c["cost"] is None for c in report["costs"])  # fake-model has no price: unknown, never 0
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in server.requests)
    calls = stored(tmp_path / "r.db", "select role, count(*) from llm_calls group by role order by role")
    assert calls == [("agent", 3), ("judge", 1), ("user", 2)]


def test_the_api_key_is_never_stored(server: FakeOpenAIServer, tasks_file: Path, tmp_path: Path) -> None:
    bench_run(server, tasks_file, tmp_path / "r.db")
    for path in tmp_path.glob("r.db*"):
        assert KEY.encode() not in path.read_bytes()


def test_a_rerun_with_the_cache_makes_no_http_call_and_gives_identical_results(server: FakeOpenAIServer, tasks_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    first = bench_run(server, tasks_file, db, "--cache", "--run-id", "first")
    requests_after_first = len(server.completions)
    second = bench_run(server, tasks_file, db, "--cache", "--run-id", "second")
    assert len(server.completions) == requests_after_first
    assert first["average_reward"] == second["average_reward"] and first["components"] == second["components"]
    messages = stored(
        db,
        "select c.run_id, m.idx, m.role, m.content, m.tool_calls_json from messages m "
        "join conversations c on c.id = m.conversation_id order by c.run_id, m.idx",
    )
    by_run = {run: [row[1:] for row in messages if row[0] == run] for run in ("first", "second")}
    assert by_run["first"] == by_run["second"] and by_run["first"]
    cached = stored(db, "select run_id, sum(cached), count(*) from llm_calls group by run_id order by run_id")
    assert cached == [("first", 0, 6), ("second", 6, 6)]


def test_a_model_that_returns_garbage_is_a_recorded_error_not_a_crash(tasks_file: Path, tmp_path: Path) -> None:
    def garbage_agent(body: dict[str, Any]) -> Reply:
        is_agent = any(t["function"]["name"] == "change_plan" for t in body.get("tools") or [])
        return Reply.raw("<html>bad gateway</html>") if is_agent else world(body)

    with FakeOpenAIServer(garbage_agent, api_key=KEY) as server:
        # Recorded and reported; the exit status says that every conversation failed on the agent (docs/plugins.md).
        report = bench_run(server, tasks_file, tmp_path / "r.db", exit_code=1)
    assert report["terminations"] == {"agent_error": 1}
    error = stored(tmp_path / "r.db", "select error from conversations")[0][0]
    assert "ModelResponseError" in error


def test_wrong_credentials_stop_the_run_before_it_starts(server: FakeOpenAIServer, tmp_path: Path) -> None:
    args = [
        "run",
        "--plugin",
        "mock",
        "--plugin",
        "openai",
        "--plugin",
        "llm",
        "--task-id",
        TASK,
        "--agent",
        "llm-fc",
        "--agent-model",
        "fake-model",
        "--agent-base-url",
        server.base_url,
        "--agent-api-key-env",
        "FAKE_KEY",
        "--db",
        str(tmp_path / "r.db"),
    ]
    result = CliRunner().invoke(cli, args, env={"FAKE_KEY": "a-wrong-key-0000"})
    assert result.exit_code != 0
    assert "401" in result.output and "a-wrong-key-0000" not in result.output
    assert server.completions == []
    assert not (tmp_path / "r.db").exists()  # refused before any run was begun


def qwen_world(body: dict[str, Any]) -> Reply:
    """As `world`, but the agent writes Qwen-style text tool calls after a think block (no server-side parser)."""
    if not body.get("tools") or not any(t["function"]["name"] == "change_plan" for t in body["tools"]):
        return world(body)
    results = [m for m in body["messages"] if m["role"] == "tool"]
    steps = [("find_customer_by_email", {"email": "ada.okafor@example.net"}), ("change_plan", {"customer_id": "C-1001", "plan_id": "fiber-1000"})]
    if len(results) < len(steps):
        name, arguments = steps[len(results)]
        block = json.dumps({"name": name, "arguments": arguments})
        return Reply.text(f"<think>I should call {name}.</think>\n<tool_call>\n{block}\n</tool_call>")
    return Reply.text("<think>All done.</think>Done: you are now on Fiber 1000.")


def test_the_vllm_backend_reads_qwen_text_tool_calls_end_to_end(tasks_file: Path, tmp_path: Path) -> None:
    with FakeOpenAIServer(qwen_world, api_key=KEY) as server:
        report = bench_run(server, tasks_file, tmp_path / "q.db", "--plugin", "vllm", "--agent-backend", "vllm")
    assert report["average_reward"]["value"] == 1.0
    contents = [c for (c,) in stored(tmp_path / "q.db", "select content from messages where role = 'assistant'") if c]
    assert not any("<think>" in c or "<tool_call>" in c for c in contents)


def test_the_cost_cap_stops_the_run_cleanly_and_a_resume_finishes_it(server: FakeOpenAIServer, tasks_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    # 15 tokens per call at 1000 USD per million tokens: 0.015 USD a call, so the cap stops the first conversation.
    capped = bench_run(
        server,
        tasks_file,
        db,
        "--trials",
        "3",
        "--concurrency",
        "1",
        "--run-id",
        "capped",
        "--price",
        "fake-model=1000,1000",
        "--max-cost",
        "0.02",
        exit_code=1,
    )
    # The cap stops the run cleanly, but never as a success: it says incomplete and exits non-zero.
    assert capped["status"] == "incomplete" and capped["conversations"] == 0
    assert stored(db, "select termination_reason, count(*) from conversations group by 1") == [("infrastructure_error", 1)]
    resumed = bench_run(
        server, tasks_file, db, "--trials", "3", "--concurrency", "1", "--run-id", "capped", "--price", "fake-model=1000,1000", "--max-cost", "100"
    )
    assert resumed["status"] == "complete" and resumed["conversations"] == 3
    assert resumed["average_reward"]["value"] == 1.0
    assert next(c["cost"] for c in resumed["costs"] if c["role"] == "agent") > 0


def test_agent_options_from_the_command_line_reach_the_agent(tmp_path: Path) -> None:
    args = [
        "run",
        "--plugin",
        "mock",
        "--plugin",
        "llm",
        "--agent",
        "http-agent",
        "--task-id",
        TASK,
        "--no-baseline",
        "--agent-option",
        "url=http://127.0.0.1:9/turn",
        "--agent-option",
        "timeout_s=2",
        "--db",
        str(tmp_path / "o.db"),
        "--format",
        "none",
    ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 1, result.output  # nothing listens there: every conversation failed on the agent
    assert "ended in an error of the agent 'http-agent'" in result.output
    config = json.loads(stored(tmp_path / "o.db", "select config_json from runs")[0][0])
    assert config["agent_options"] == {"url": "http://127.0.0.1:9/turn", "timeout_s": 2}
    assert "127.0.0.1:9/turn unreachable" in stored(tmp_path / "o.db", "select error from conversations")[0][0]


def test_a_metric_with_its_own_model_role_calls_a_real_server_through_the_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import attrs

    import bench_kernel
    from bench_kernel import ChatRequest, Metric, MetricContext, ModelConfig, RunConfig, get_plugin_manager, run

    @attrs.define(kw_only=True)
    class Politeness(Metric):
        name: str = "politeness"
        model_roles: tuple[str, ...] = ("judge-2",)

        async def score(self, context: MetricContext) -> dict[str, float]:
            reply = await context.complete(ChatRequest(messages=[{"role": "user", "content": "Was the agent polite?"}]))
            return {"": 1.0 if (reply.content or "").startswith("Yes") else 0.0}

    class MetricPlugin:
        @bench_kernel.hookimpl
        def register_metrics(self, register: Any) -> None:
            register(Politeness())

    def judge_two(body: dict[str, Any]) -> Reply:
        return Reply.text("Yes, polite throughout.")

    monkeypatch.setenv("FAKE_KEY", KEY)
    with FakeOpenAIServer(judge_two, api_key=KEY) as server:
        config = RunConfig(
            domain="mock",
            task_ids=[TASK],
            baseline=False,
            plugins=["mock", "openai"],
            models={"judge-2": ModelConfig(backend="openai", model="judge-two", base_url=server.base_url, api_key_env="FAKE_KEY")},
        )
        plugins = get_plugin_manager(["mock", "openai"], extra=[("polite", MetricPlugin())])
        summary = run(config, tmp_path / "m.db", plugins=plugins)
        completions = len(server.completions)
    assert summary.status == "complete" and completions == 1
    values = stored(tmp_path / "m.db", "select plugin, metric, value from metric_values where plugin = 'polite'")
    assert values == [("polite", "politeness", 1.0)]
    assert stored(tmp_path / "m.db", "select role, model, kind, arm from llm_calls") == [("judge-2", "judge-two", "chat", "agent")]


def test_in_flight_limits_are_the_runs_by_default_settable_and_shown_and_stored(server: FakeOpenAIServer, tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    args = [
        "run",
        "--plugin",
        "mock",
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
        "table",
        "--progress",
        "lines",
        "--concurrency",
        "300",
    ]
    for role in ("agent", "user"):
        args += [f"--{role}-model", "fake-model", f"--{role}-base-url", server.base_url, f"--{role}-api-key-env", "FAKE_KEY"]
    endpoint = f"openai|{server.base_url}|fake-model (agent, user)"
    default = CliRunner().invoke(cli, [*args, "--run-id", "default"], env={"FAKE_KEY": KEY})
    assert default.exit_code == 0, default.output
    assert f"  endpoint {endpoint}: 600 requests (concurrency x roles)" in default.stderr  # never 64 behind the user's back
    assert f"in flight: 300 conversations; requests per endpoint: {endpoint}: 600 (concurrency x roles)" in default.stdout

    low = CliRunner().invoke(cli, [*args, "--run-id", "low"], env={"FAKE_KEY": KEY, "BENCH_MAX_IN_FLIGHT": "8"})
    assert low.exit_code == 0, low.output
    assert f"  endpoint {endpoint}: 8 requests (--max-in-flight), below the 300 conversations" in low.stderr
    role = CliRunner().invoke(
        cli, [*args, "--run-id", "role", "--max-in-flight", "400", "--model-option", "user.max_concurrency=20"], env={"FAKE_KEY": KEY}
    )
    assert role.exit_code == 0, role.output
    events = {run: json.loads(data) for run, data in stored(db, "select run_id, data_json from events where kind = 'run.started'")}
    assert [(e["concurrency"], [(x["limit"], x["source"]) for x in e["in_flight"]]) for e in events.values()] == [
        (300, [(600, "concurrency x roles")]),
        (300, [(8, "--max-in-flight")]),
        (300, [(20, "model setting")]),
    ]
    assert all(e["in_flight"][0]["roles"] == ["agent", "user"] for e in events.values())
