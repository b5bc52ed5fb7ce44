"""Online: a run with goals (the errands test domain) scored by every ATOD metric, by the rules and through the
atod-judge role against the kernel's fake OpenAI-protocol server; figures by complexity class in the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from atod_helpers import section_figures
from click.testing import CliRunner
from errands import ErrandsPlugin

from bench_kernel import ModelConfig, RunConfig, Store, get_plugin_manager, run
from bench_kernel.testing import FakeOpenAIServer, Reply, cli


def stored(db: Path, run_id: str) -> dict[tuple[str, str], dict[str, Any]]:
    store = Store(db)
    try:
        rows = store.db.query(
            "select c.task_id, m.plugin, m.metric, m.value, m.error, m.details_json from metric_values m join "
            "conversations c on c.id = m.conversation_id where c.run_id = ? and c.arm = 'agent'",
            [run_id],
        )
        return {(r["task_id"], r["metric"]): r for r in rows if r["plugin"] in ("atod", "bench-kernel")}
    finally:
        store.close()


def report(db: Path, run_id: str) -> dict[tuple[str, str, str], Any]:
    out = CliRunner().invoke(cli, ["report", run_id, "--db", str(db), "--format", "json"])
    return section_figures(out.output)


def errands_run(db: Path, **config: Any) -> str:
    plugins = get_plugin_manager(["atod", *config.pop("more_plugins", [])], extra=[("errands", ErrandsPlugin())])
    # The gold replay cannot pay (bookings confirm only as a conversation advances): its tasks are scored on GOALS,
    # which never read the gold state, so the run allows the tasks `bench run` would refuse.
    summary = run(RunConfig(domain="errands", user="goal-user", allow_broken_tasks=True, **config), db, plugins=plugins)
    assert summary.status == "complete"
    return summary.run_id


def test_the_oracle_completes_every_goal_the_world_allows_and_the_report_breaks_figures_down_by_complexity(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    run_id = errands_run(db)
    found = stored(db, run_id)
    # Medium: hotel and payment completed, the dinner table never acted on (open): dGCR 1. Complex: the car fails.
    assert found[("hotel_and_dinner", "dgcr")]["value"] == 1.0
    assert found[("hotel_and_car", "dgcr")]["value"] == pytest.approx(2 / 3)
    # Tool steps share the turn of the reply after them: the goals raised at turn 2 end in turn 3 (the oracle's one reply).
    assert found[("hotel_and_dinner", "ntc")]["value"] == 1.0
    # goal-credit: 2 of 3 goals (over all goals); over decided goals for the complex task, 2 of 3 as well.
    assert found[("hotel_and_dinner", "reward")]["value"] == pytest.approx(2 / 3)
    assert found[("hotel_and_car", "reward")]["value"] == pytest.approx(2 / 3)
    checks = json.loads(found[("hotel_and_car", "component.GOALS")]["details_json"])["checks"]
    assert [(c["subject"], c["met"], c["detail"]) for c in checks] == [
        ("hotel", True, "completed"),
        ("pay_hotel", True, "completed"),
        ("car", False, "failed"),
    ]
    figures = report(db, run_id)
    assert figures[("dGCR", "micro", "all")] == pytest.approx(4 / 5)
    assert figures[("dGCR", "micro", "medium")] == 1.0 and figures[("dGCR", "micro", "complex")] == pytest.approx(2 / 3, abs=1e-4)
    assert figures[("MRA", "per conversation", "medium")] is not None
    assert figures[("turn-level quality", "conversations", "complex")] == 1
    assert ("dGCR annotated", "micro", "all") not in figures  # nothing annotated in this run


def test_the_do_nothing_agents_figures(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    run_id = errands_run(db, agent="do-nothing", baseline=False)
    found = stored(db, run_id)
    assert found[("hotel_and_dinner", "dgcr")]["value"] is None and found[("hotel_and_dinner", "dgcr.decided")]["value"] == 0
    assert found[("hotel_and_dinner", "reward")]["value"] == 0.0 and found[("hotel_and_car", "reward")]["value"] == 0.0
    # Three goals opened and never followed: three memory queries, none recalled by "I'm sorry, I can't help with that."
    assert found[("hotel_and_dinner", "mra")]["value"] == 0.0 and found[("hotel_and_dinner", "mra.queries")]["value"] == 3
    assert found[("hotel_and_dinner", "pe")]["value"] is None
    figures = report(db, run_id)
    assert figures[("dGCR", "micro", "all")] is None and figures[("dGCR", "conversations", "medium")] == 0


def judge_world(body: dict[str, Any]) -> Reply:
    """Answers each question the way a careful model would, in slightly untidy JSON."""
    asked = body["messages"][-1]["content"]
    if '"match"' in asked:
        return Reply.text('{"match": 1}')
    if '"grounded"' in asked:
        return Reply.text('Here you go: {"grounded": "yes", "beneficial": 1}')
    if '"turn_quality"' in asked:
        return Reply.text('```json\n{"turn_quality": 4}\n```')
    return Reply.text('{"dialogue_quality": 9}')  # out of range: clamped to 5


def judged_run(tmp_path: Path, responder: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, FakeOpenAIServer]:
    key = "sk-atod-test-0123456789"
    monkeypatch.setenv("ATOD_FAKE_KEY", key)
    db = tmp_path / "r.db"
    with FakeOpenAIServer(responder, api_key=key) as server:
        judge = ModelConfig(backend="openai", model="fake-judge", base_url=server.base_url, api_key_env="ATOD_FAKE_KEY")
        run_id = errands_run(db, baseline=False, models={"atod-judge": judge}, more_plugins=["openai"])
    return db, run_id, server


def test_the_judged_metrics_through_the_atod_judge_role(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db, run_id, server = judged_run(tmp_path, judge_world, monkeypatch)
    found = stored(db, run_id)
    assert json.loads(found[("hotel_and_dinner", "mra")]["details_json"])["judge"] == "model:fake-judge"
    assert found[("hotel_and_dinner", "mra")]["value"] == 1.0
    assert found[("hotel_and_dinner", "turn_quality")]["value"] == pytest.approx(0.8)
    assert found[("hotel_and_dinner", "dialogue_quality")]["value"] == 5.0
    assert found[("hotel_and_dinner", "dgcr")]["value"] == 1.0  # the LLM-free metrics never ask
    prompts = [r.body["messages"][-1]["content"] for r in server.requests if r.body]
    assert prompts and all("SYSTEM" in p for p in prompts)
    store = Store(db)
    try:
        roles = {r["role"] for r in store.db.query("select role from llm_calls where run_id = ?", [run_id])}
    finally:
        store.close()
    assert roles == {"atod-judge"}


def test_garbage_from_the_judge_is_that_metrics_error_and_the_rest_is_scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db, run_id, _ = judged_run(tmp_path, lambda body: Reply.text("I would rather not say."), monkeypatch)
    found = stored(db, run_id)
    for metric in ("mra", "turn_quality", "dialogue_quality"):  # no proactive turn here: pe is None, asked nothing
        assert found[("hotel_and_dinner", metric)]["value"] is None
        assert "JudgeReplyError" in found[("hotel_and_dinner", metric)]["error"]
    assert found[("hotel_and_dinner", "dgcr")]["value"] == 1.0 and found[("hotel_and_dinner", "dgcr")]["error"] is None
