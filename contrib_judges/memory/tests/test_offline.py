"""`bench memory evaluate RUN`: a stored run's conversations (here, imported annotated dialogues) evaluated without replay."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from dialogues import COMPLEX, MEDIUM, Dialogue, hotel_model

from bench_kernel import ConversationResult, RunConfig, Store, TerminationReason, run, unstructure
from bench_kernel.testing import FakeOpenAIServer, Reply, bench_cli


def stored_run(tmp_path: Path, *dialogues: Dialogue, domain: str = "atod-import") -> Path:
    """A run holding the dialogues as conversations (task id = dialogue id), as an importer would store them."""
    db = tmp_path / "runs.db"
    store = Store(db)
    try:
        store.begin_run("imported", {"domain": domain, "plugins": [domain]}, "h", [], {}, 0)
        for d in dialogues:
            store.save_conversation(
                ConversationResult(
                    run_id="imported",
                    arm="agent",
                    task_id=d.id,
                    trial=0,
                    seed=3,
                    agent="atod",
                    user="atod",
                    termination_reason=TerminationReason.USER_STOP,
                    messages=d.messages,
                    reward_info=None,
                    started_utc="",
                    ended_utc="",
                    duration_ms=0,
                    events=d.events,
                ),
                [],
            )
    finally:
        store.close()
    return db


def atod_file(tmp_path: Path, *dialogues: Dialogue) -> Path:
    """The dialogues' goals in ATOD's released shape (goal_list per dialogue_id, extra keys included)."""
    entries = [
        {
            "dialogue_id": d.id,
            "complexity_class": "medium",
            "goal_list": [{**unstructure(g), "classification_method": "pre_defined", "dependency_label": bool(g.dependencies)} for g in d.goals],
        }
        for d in dialogues
    ]
    path = tmp_path / "annotated_dialogues.json"
    path.write_text(json.dumps(entries))
    return path


def evaluate(db: Path, *args: str) -> Any:
    return CliRunner().invoke(bench_cli(["memory", "openai"]), ["memory", "evaluate", "imported", "--db", str(db), *args])


def test_a_stored_run_is_evaluated_and_its_figures_stored(tmp_path: Path) -> None:
    db = stored_run(tmp_path, MEDIUM, COMPLEX)
    goals = atod_file(tmp_path, MEDIUM, COMPLEX)
    for _ in range(2):  # evaluating again replaces the earlier results
        result = evaluate(db, "--goals-file", str(goals))
        assert result.exit_code == 0, result.output
    assert "detection_f1 (macro): 1.0000" in result.output and "status_accuracy (micro): 1.0000" in result.output
    store = Store(db)
    try:
        values = list(
            store.db.query("select conversation_id, value from metric_values where plugin = 'memory' and metric = ?", ["memory.detection_f1"])
        )
        goals_stored = store.db.execute("select count(*) from memory_goals").fetchone()[0]
    finally:
        store.close()
    assert [v["value"] for v in values] == [1.0, 1.0] and goals_stored == len(MEDIUM.goals) + len(COMPLEX.goals)


def test_clear_errors_for_missing_goals_and_bad_files(tmp_path: Path) -> None:
    db = stored_run(tmp_path, MEDIUM)
    result = evaluate(db)
    assert result.exit_code != 0 and "cannot load the tasks of run 'imported'" in result.output and "--goals-file" in result.output
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([{"dialogue_id": "medium-1", "goal_list": [{"id": "g", "status": "open"}]}]))
    result = evaluate(db, "--goals-file", str(bad))
    assert result.exit_code != 0 and "$[0].goal_list[0]: not a goal" in result.output and "Traceback" not in result.output
    result = evaluate(db, "--goals-file", str(atod_file(tmp_path, MEDIUM)), "--judge", "llm")
    assert result.exit_code != 0 and "--model-option memory-judge.model=NAME" in result.output


def test_the_llm_judge_offline_is_ledgered_and_garbage_is_that_conversations_error(
    tmp_path: Path, fake_openai_server: Callable[..., FakeOpenAIServer]
) -> None:
    server = fake_openai_server(hotel_model)
    db = stored_run(tmp_path, MEDIUM)
    options = [
        "--judge",
        "llm",
        "--goals-file",
        str(atod_file(tmp_path, MEDIUM)),
        "--model-option",
        "memory-judge.model=fake-model",
        "--model-option",
        f"memory-judge.base_url={server.base_url}",
        "--model-option",
        "memory-judge.max_retries=0",
    ]
    result = evaluate(db, *options)
    assert result.exit_code == 0, result.output
    store = Store(db)
    try:
        calls = store.db.execute("select count(*), min(role), min(arm), sum(prompt_tokens) from llm_calls").fetchone()
        values = {r["metric"]: r["value"] for r in store.db.query("select metric, value from metric_values where plugin = 'memory'")}
    finally:
        store.close()
    assert calls[0] == len(server.completions) > 7 and calls[1:3] == ("memory-judge", "memory") and calls[3] > 0
    assert values["memory.prompt_tokens_per_turn"] > 0 and values["memory.goals_detected"] == 1
    assert values["memory.detection_recall"] == 1 / 3  # the scripted model only ever sees the hotel

    server.responder = lambda body: Reply.text("Sorry, I can't do that.")
    result = evaluate(db, *options)
    assert result.exit_code == 0 and "error imported/agent/medium-1/0: MemoryJudgeError" in result.output
    store = Store(db)
    try:
        rows = list(store.db.query("select metric, value, error from metric_values where plugin = 'memory'"))
    finally:
        store.close()
    assert rows == [{"metric": "memory", "value": None, "error": rows[0]["error"]}] and "no JSON" in rows[0]["error"]


def test_a_played_run_is_re_evaluated_from_its_own_tasks(tmp_path: Path) -> None:
    tasks = json.loads((Path(__import__("bench_mock").__file__).parent / "data" / "tasks.json").read_text())
    task = next(t for t in tasks if t["id"] == "plan_price_question")
    task["user_scenario"]["script"] = ["I need a flight to Rome on June 10."]
    task["goals"] = [{"id": "f", "domain": "Flights", "intent": "ReserveOnewayFlight", "content": "a flight to Rome", "status": "open"}]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([task]))
    db = tmp_path / "runs.db"
    # memory loads the `goals` field (bench-atod's) for the run, which plays and stores the task as any other
    summary = run(RunConfig(domain="mock", plugins=["mock", "memory"], tasks_file=str(path), baseline=False, run_id="imported"), db)
    assert summary.status == "complete"
    result = evaluate(db)
    assert result.exit_code == 0, result.output
    assert "1 conversations of run imported" in result.output and "detection_f1 (macro): 1.0000" in result.output
