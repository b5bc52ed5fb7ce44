"""The NL_ASSERTION component in runs (docs/judges.md): judged only in the basis, refused without a judge, asked in
rounds by everyone who asks the run's judge, a panel's agreement stored, judge errors judged again on resume."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from importlib.resources import files
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_judging import JudgeRounds

import bench_kernel
from bench_kernel import (
    AssistantMessage,
    Check,
    ConfigError,
    Evaluation,
    Judge,
    JudgeRequest,
    Message,
    Metric,
    MetricContext,
    RewardInfo,
    RunConfig,
    RunSummary,
    Store,
    Task,
    TerminationReason,
    build_environment,
    collect,
    evaluate,
    get_plugin_manager,
    replay_gold,
    run,
    structure,
)
from bench_kernel.testing import practice_data

ASSERTION = "The agent names the 'Blue Kettle'"


@attrs.define(kw_only=True)
class ScriptedJudge(Judge):
    """Says `verdict` of every assertion, or raises while `down`; keeps every request."""

    verdict: bool = True
    down: bool = False
    requests: list[JudgeRequest] = attrs.field(factory=list)

    async def judge(self, request: JudgeRequest) -> list[Check]:
        self.requests.append(request)
        if self.down:
            raise RuntimeError("judge model unreachable")
        return [Check(subject=a, met=self.verdict, detail="scripted") for a in request.assertions]


@attrs.define(kw_only=True)
class JudgeSeen(Metric):
    """Records the judge a metric is given."""

    seen: list[Judge | None] = attrs.field(factory=list)

    async def score(self, context: MetricContext) -> dict[str, float | None]:
        self.seen.append(context.judge)
        return {}


@attrs.define
class Registers:
    judges: list[Judge]
    metrics: list[Metric] = attrs.field(factory=list)

    @bench_kernel.hookimpl
    def register_judges(self, register: Callable[[Judge], None]) -> None:
        for judge in self.judges:
            register(judge)

    @bench_kernel.hookimpl
    def register_metrics(self, register: Callable[[Metric], None]) -> None:
        for metric in self.metrics:
            register(metric)


def practice_tasks(tmp_path: Path, *changed: dict[str, Any]) -> str:
    """A task file: the practice task with an assertion, changed by each of `changed` (its criteria), one task each."""
    tasks = json.loads(files("bench_kernel.builtin.practice").joinpath("tasks.json").read_text(encoding="utf-8"))
    [judged] = [t for t in tasks if t["id"] == "judged_kettle"]
    made = [{**judged, "id": f"t{n}", "evaluation_criteria": {**judged["evaluation_criteria"], **c}} for n, c in enumerate(changed)]
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(made or [judged]), encoding="utf-8")
    return str(path)


def play(tmp_path: Path, registers: Registers, **config: Any) -> RunSummary:
    """A run of the practice domain with bench-judging and the test's judges and metrics loaded."""
    plugins = get_plugin_manager(["practice", "judging"], extra=[("scripted", registers)])
    settings = {"domain": "practice", "baseline": False, **config}
    if "tasks_file" not in settings:
        settings["tasks_file"] = practice_tasks(tmp_path)
    return run(RunConfig(**settings), tmp_path / "runs.db", plugins=plugins)


def stored(tmp_path: Path, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    store = Store(tmp_path / "runs.db")
    try:
        return list(store.db.query(sql, list(params)))
    finally:
        store.close()


def nl_of(row: dict[str, Any]) -> dict[str, Any]:
    return next(c for c in json.loads(row["reward_info_json"])["components"] if c["component"] == "NL_ASSERTION")


# --------------------------------------------------------------------------- the component alone


def score(criteria: dict[str, Any], judge: Judge | None = None, messages: Sequence[Message] = ()) -> RewardInfo:
    """One conversation of a practice task with these criteria, scored by the loaded components (bench-judging's too)."""
    data = practice_data()
    task = structure({"id": "t", "user_scenario": {"instructions": "x"}, "evaluation_criteria": criteria}, Task, source="test")
    registry = collect(get_plugin_manager(["judging"]))
    evaluation = Evaluation(components=registry.components["reward component"], rules=registry.components["combination rule"])
    env = build_environment(data, task)
    return asyncio.run(evaluate(task, messages, TerminationReason.USER_STOP, env, replay_gold(data, task), judge=judge, evaluation=evaluation))


NL_TASK = {"nl_assertions": ["Agent greets", "Agent is polite"], "reward_basis": ["NL_ASSERTION"]}


def test_without_a_judge_nl_is_not_evaluated_and_scores_zero() -> None:
    info = score(NL_TASK)
    nl = info.component("NL_ASSERTION")
    assert nl is not None and nl.score is None and nl.error == "no judge"
    assert info.reward == 0.0


def test_nl_outside_the_basis_is_not_judged() -> None:
    # As tau2: NL assertions outside the basis are diagnostic only, so no judge is paid for them.
    judge = ScriptedJudge(name="scripted")
    info = score({**NL_TASK, "reward_basis": ["COMMUNICATE"]}, judge)
    assert info.component("NL_ASSERTION") is None and info.reward == 1.0 and judge.requests == []


@pytest.mark.parametrize(("verdict", "reward"), [(True, 1.0), (False, 0.0)])
def test_the_judges_checks_decide(verdict: bool, reward: float) -> None:
    judge = ScriptedJudge(name="scripted", verdict=verdict)
    messages = [AssistantMessage(content="Hello!")]
    info = score(NL_TASK, judge, messages)
    assert info.reward == reward
    nl = info.component("NL_ASSERTION")
    assert nl is not None and [(c.subject, c.met) for c in nl.checks] == [(a, verdict) for a in NL_TASK["nl_assertions"]]
    (request,) = judge.requests
    assert list(request.assertions) == NL_TASK["nl_assertions"] and list(request.messages) == messages


def test_a_raising_judge_is_recorded_not_raised() -> None:
    info = score(NL_TASK, ScriptedJudge(name="broken", down=True))
    nl = info.component("NL_ASSERTION")
    assert nl is not None and nl.score is None
    assert nl.error == "judge error: judge 'broken': RuntimeError: judge model unreachable (after 3 attempts)"
    assert info.reward == 0.0


def test_a_basis_without_assertions_passes_without_calling_the_judge() -> None:
    judge = ScriptedJudge(name="scripted")
    assert score({"reward_basis": ["NL_ASSERTION"]}, judge).reward == 1.0
    assert judge.requests == []


# --------------------------------------------------------------------------- in runs


def test_only_tasks_with_assertions_to_judge_need_a_judge(tmp_path: Path) -> None:
    empty = {"nl_assertions": None}
    assert play(tmp_path, Registers([]), tasks_file=practice_tasks(tmp_path, empty)).status == "complete"
    with pytest.raises(ConfigError, match=r"1 of 2 tasks have NL assertions to judge \(e.g. 't1'\): choose a judge with --judge"):
        play(tmp_path, Registers([]), tasks_file=practice_tasks(tmp_path, empty, {}), run_id="judged")


def test_everyone_who_asks_the_runs_judge_asks_it_in_rounds(tmp_path: Path) -> None:
    judge, seen = ScriptedJudge(name="scripted"), JudgeSeen(name="seen")
    summary = play(tmp_path, Registers([judge], [seen]), judge="scripted", judge_retries=4)
    assert summary.status == "complete"
    [given] = seen.seen
    assert isinstance(given, JudgeRounds) and given.inner is judge and given.retries == 4
    [row] = stored(tmp_path, "select * from conversations where run_id = ?", [summary.run_id])
    assert row["reward"] == 1.0 and [c["subject"] for c in nl_of(row)["checks"]] == [ASSERTION]


def test_a_panel_stores_its_agreement_as_this_plugins_metric(tmp_path: Path) -> None:
    summary = play(tmp_path, Registers([ScriptedJudge(name="scripted")]), judge="scripted", judge_panel=3)
    [row] = stored(tmp_path, "select * from conversations where run_id = ?", [summary.run_id])
    assert nl_of(row)["note"] == "panel of 3: agreement 1.000"
    [value] = stored(tmp_path, "select * from metric_values where metric = 'judge.agreement'")
    assert (value["plugin"], value["value"]) == ("judging", 1.0)
    assert json.loads(value["details_json"])["assertions"][0]["votes"] == [True, True, True]
    kinds = [e["kind"] for e in stored(tmp_path, "select kind, source from conversation_events") if e["source"] == "bench-kernel:judge"]
    assert kinds == ["judge.panel"]


def test_a_resume_judges_again_what_the_judge_failed_and_plays_nothing(tmp_path: Path) -> None:
    judge = ScriptedJudge(name="scripted", down=True)
    first = play(tmp_path, Registers([judge]), judge="scripted")
    [row] = stored(tmp_path, "select * from conversations where run_id = ?", [first.run_id])
    assert row["reward"] == 0.0 and nl_of(row)["error"].startswith("judge error: judge 'scripted': RuntimeError")
    judge.down = False
    again = play(tmp_path, Registers([judge]), judge="scripted")
    assert again.run_id == first.run_id and again.resumed and again.finished == 0
    [row] = stored(tmp_path, "select * from conversations where run_id = ?", [first.run_id])
    assert row["reward"] == 1.0 and nl_of(row)["error"] is None
    resumed = stored(tmp_path, "select data_json from events where kind = 'run.resumed'")
    assert json.loads(resumed[-1]["data_json"])["rejudged"] == 1
    rejudged = stored(tmp_path, "select data_json from conversation_events where kind = 'judge.rejudged'")
    assert json.loads(rejudged[0]["data_json"])["previous_error"].startswith("judge error: judge 'scripted': RuntimeError")
    # The new judgment's events follow the stored ones, and its reward replaced the stored value (one of each).
    events = stored(tmp_path, "select idx, kind from conversation_events where conversation_id = ? order by idx", [row["id"]])
    assert [e["idx"] for e in events] == list(range(len(events))) and "judge.rejudged" in [e["kind"] for e in events]
    [reward] = stored(tmp_path, "select value from metric_values where conversation_id = ? and metric = 'reward'", [row["id"]])
    assert reward["value"] == 1.0
