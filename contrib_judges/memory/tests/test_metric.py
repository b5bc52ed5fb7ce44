"""The memory metric online: scored from a metric context, and inside a real run whose report shows its run-level figures."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import attrs
from bench_memory import MemoryMetric
from dialogues import COMPLEX, MEDIUM, Dialogue, hotel_model

from bench_kernel import (
    ConversationResult,
    EventLog,
    MetricContext,
    ModelConfig,
    RunConfig,
    Store,
    Task,
    TerminationReason,
    converter,
    run,
)
from bench_kernel.testing import Reply, bench_cli


def context(dialogue: Dialogue) -> MetricContext:
    task = attrs.evolve(converter.structure({"id": dialogue.id, "user_scenario": {"instructions": "x"}}, Task), extensions={"goals": dialogue.goals})
    result = ConversationResult(
        run_id="r",
        arm="agent",
        task_id=dialogue.id,
        trial=0,
        seed=7,
        agent="a",
        user="u",
        termination_reason=TerminationReason.USER_STOP,
        messages=dialogue.messages,
        reward_info=None,
        started_utc="",
        ended_utc="",
        duration_ms=0,
    )
    return MetricContext(task=task, result=result, events=EventLog(events=list(dialogue.events)), final_env=None, gold=None, source="memory:memory")


def test_the_metric_scores_a_conversation_and_queues_the_memory_for_the_runs_database() -> None:
    ctx = context(COMPLEX)
    scored = asyncio.run(MemoryMetric().score(ctx))
    values = scored.values
    assert (values["detection_f1"], values["status_accuracy"], values["dependency_f1"]) == (1.0, 1.0, 1.0)
    assert values["turns"] == 13 and values["latency_ms_p95"] is not None and values["latency_ms_mean"] is not None
    assert values["prompt_tokens_per_turn"] == 0.0  # the rules judge spends no tokens
    tables = [t for t, _ in ctx.rows]
    assert tables.count("memory_goals") == 8 and tables.count("memory_edges") == 3 and tables.count("memory_turns") == 13
    counts = scored.details["detection_f1"]["counts"]
    assert counts["statuses_compared"] == counts["statuses_correct"] > 0


def test_a_task_without_goals_gets_no_values() -> None:
    ctx = context(attrs.evolve(MEDIUM, goals=[]))
    assert asyncio.run(MemoryMetric().score(ctx)).values == {} and ctx.rows == []


def test_a_run_stores_the_memory_and_the_report_shows_run_level_figures(tmp_path: Path) -> None:
    tasks = json.loads((Path(__import__("bench_mock").__file__).parent / "data" / "tasks.json").read_text())
    task = next(t for t in tasks if t["id"] == "plan_price_question")
    task["user_scenario"]["script"] = ["I'd like to book a hotel in Paris for May 3.", "Also, can you check my checking account balance?"]
    task["attributes"] = {"complexity": "medium"}
    task["goals"] = [
        {
            "id": "h",
            "domain": "Hotels",
            "intent": "ReserveHotel",
            "content": "a hotel in Paris",
            "status": "open",
            "slot_values": {"location": "Paris"},
        },
        {"id": "b", "domain": "Banks", "intent": "CheckBalance", "content": "the checking balance", "status": "open"},
    ]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]))
    db = tmp_path / "r.db"
    summary = run(RunConfig(domain="mock", plugins=["mock", "memory"], tasks_file=str(path), baseline=False), db)
    store = Store(db)
    try:
        values = {r["metric"]: r["value"] for r in store.db.query("select metric, value from metric_values where plugin = 'memory'")}
        goals = list(store.db.query("select intent, status, gold_goal_id from memory_goals order by goal_id"))
        turns = store.db.execute("select count(*) from memory_turns").fetchone()[0]
    finally:
        store.close()
    assert values["memory.detection_f1"] == 1.0 and values["memory.final_status_accuracy"] == 1.0
    assert goals == [
        {"intent": "book hotel", "status": "open", "gold_goal_id": "h"},
        {"intent": "check account", "status": "open", "gold_goal_id": "b"},
    ]
    assert turns == values["memory.turns"] >= 2
    from click.testing import CliRunner

    report = CliRunner().invoke(bench_cli(["memory"]), ["report", summary.run_id, "--db", str(db), "--section", "memory:memory", "--format", "json"])
    assert report.exit_code == 0, report.output
    figures = {row[0]: row[1] for table in json.loads(report.stdout)["tables"] for row in table["rows"]}
    assert figures["detection_f1 (macro)"] == 1.0
    assert figures["detection_f1 (macro) [medium]"] == 1.0  # per complexity class (the task's attribute)


def test_with_a_memory_judge_role_the_run_uses_the_llm_judge(tmp_path: Path, fake_openai_server: Any) -> None:
    server = fake_openai_server(hotel_model)
    tasks = json.loads((Path(__import__("bench_mock").__file__).parent / "data" / "tasks.json").read_text())
    task = next(t for t in tasks if t["id"] == "plan_price_question")
    task["user_scenario"]["script"] = ["I'd like to book a hotel in Paris for May 3."]
    task["goals"] = [{"id": "h", "domain": "Hotels", "intent": "ReserveHotel", "content": "a hotel in Paris", "status": "open"}]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]))
    db = tmp_path / "r.db"
    judge = ModelConfig(model="fake-model", base_url=server.base_url, max_retries=0)
    run(RunConfig(domain="mock", plugins=["mock", "memory", "openai"], tasks_file=str(path), baseline=False, models={"memory-judge": judge}), db)
    store = Store(db)
    try:
        roles = {r["role"] for r in store.db.query("select role from llm_calls")}
        values = {r["metric"]: r["value"] for r in store.db.query("select metric, value from metric_values where plugin = 'memory'")}
    finally:
        store.close()
    assert roles == {"memory-judge"} and values["memory.prompt_tokens_per_turn"] > 0
    assert values["memory.detection_f1"] == 1.0


def test_a_memory_judge_answering_garbage_is_that_conversations_metric_error(tmp_path: Path, fake_openai_server: Any) -> None:
    server = fake_openai_server(lambda body: Reply.text("no idea"))
    tasks = json.loads((Path(__import__("bench_mock").__file__).parent / "data" / "tasks.json").read_text())
    task = next(t for t in tasks if t["id"] == "plan_price_question")
    task["goals"] = [{"id": "h", "domain": "Hotels", "intent": "ReserveHotel", "content": "a hotel in Paris", "status": "open"}]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]))
    db = tmp_path / "r.db"
    judge = ModelConfig(model="fake-model", base_url=server.base_url, max_retries=0)
    summary = run(
        RunConfig(domain="mock", plugins=["mock", "memory", "openai"], tasks_file=str(path), baseline=False, models={"memory-judge": judge}), db
    )
    store = Store(db)
    try:
        rows = list(store.db.query("select metric, value, error from metric_values where plugin = 'memory'"))
        reward = store.conversations(summary.run_id)[0]["reward"]
    finally:
        store.close()
    assert summary.status == "complete" and reward == 1.0  # the conversation itself is untouched
    assert len(rows) == 1 and rows[0]["value"] is None and "MemoryJudgeError" in rows[0]["error"] and "no JSON" in rows[0]["error"]
