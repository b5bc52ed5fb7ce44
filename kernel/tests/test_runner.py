"""Tests of whole runs on the toy domain: scores, baseline, seeds, resume, failures, metrics and the report."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import pytest
from plugin_factory import needs_report
from seam_plugins import Registers
from toy_domain import TASKS, CounterTools, ToyDomain, ToyPlugin

import bench_kernel
from bench_kernel import Agent, AgentSession, ConversationResult, ConversationSetup, Metric
from bench_kernel.builtin.participants import DoNothingSession, OracleSession
from bench_kernel.errors import ConfigError, ResumeConflictError
from bench_kernel.evaluation.sections import ReportContext
from bench_kernel.plugins import DEFAULT_PLUGINS, PluginSet, collect, get_plugin_manager
from bench_kernel.profiles.profile import conversation_seed
from bench_kernel.report.report import build_report
from bench_kernel.report.report import summary as kernel_summary
from bench_kernel.run.runner import RunConfig, RunSummary, run
from bench_kernel.schema.messages import AssistantMessage, Message, Mode
from bench_kernel.store.store import Store

WRITE_TASKS = {"inc-a", "lamp"}


def plugins(*extra: tuple[str, object], domain: ToyDomain | None = None) -> PluginSet:
    return get_plugin_manager([], extra=[("toy", ToyPlugin(domain)), *extra])


def go(tmp_path: Path, *extra: tuple[str, object], domain: ToyDomain | None = None, **config: Any) -> RunSummary:
    config.setdefault("domain", "toy")
    return run(RunConfig(**config), tmp_path / "runs.db", plugins=plugins(*extra, domain=domain))


def stored(tmp_path: Path, run_id: str) -> list[dict[str, Any]]:
    store = Store(tmp_path / "runs.db")
    try:
        return store.conversations(run_id)
    finally:
        store.close()


def by_key(rows: list[dict[str, Any]]) -> dict[tuple[str, str, int], dict[str, Any]]:
    return {(r["arm"], r["task_id"], r["trial"]): r for r in rows}


# --------------------------------------------------------------------------- agents used below


@attrs.define(kw_only=True)
class RaisingOnTask(Agent):
    """The oracle, except that its session raises on one task."""

    task_id: str

    def start(self, setup: ConversationSetup) -> AgentSession:
        if setup.task.id == self.task_id:
            return _Raising()
        return OracleSession(setup)


class _Raising(AgentSession):
    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        raise RuntimeError("agent exploded")


@attrs.define(kw_only=True)
class FirstTrialOnly(Agent):
    """The oracle on trial 0, the do-nothing agent on every other trial."""

    seed: int = 300

    def start(self, setup: ConversationSetup) -> AgentSession:
        if setup.seed == conversation_seed(self.seed, setup.task.id, 0):
            return OracleSession(setup)
        return DoNothingSession(setup)


# --------------------------------------------------------------------------- scores


@pytest.mark.parametrize("mode", [Mode.DEFAULT, Mode.NO_USER])
def test_oracle_scores_one_everywhere(tmp_path: Path, mode: Mode) -> None:
    summary = go(tmp_path, mode=mode, trials=2)
    rows = stored(tmp_path, summary.run_id)
    agent_rows = [r for r in rows if r["arm"] == "agent"]
    assert len(agent_rows) == 2 * len(TASKS)
    assert all(r["reward"] == 1.0 for r in agent_rows), [(r["task_id"], r["reward"], r["error"]) for r in agent_rows]
    expected_stop = "agent_stop" if mode is Mode.NO_USER else "user_stop"
    assert {r["termination_reason"] for r in agent_rows} == {expected_stop}
    assert summary.status == "complete" and summary.finished == summary.planned == 3 * len(TASKS)


def test_baseline_arm_is_stored_once_per_task_and_fails_the_write_tasks(tmp_path: Path) -> None:
    summary = go(tmp_path, trials=2)
    baseline = [r for r in stored(tmp_path, summary.run_id) if r["arm"] == "baseline"]
    assert sorted(r["task_id"] for r in baseline) == sorted(t["id"] for t in TASKS)
    assert {r["trial"] for r in baseline} == {0}
    assert {r["agent"] for r in baseline} == {"do-nothing"}
    assert all(r["reward"] == 0.0 for r in baseline if r["task_id"] in WRITE_TASKS)


def test_no_baseline_when_disabled_or_when_the_agent_is_the_baseline(tmp_path: Path) -> None:
    off = go(tmp_path, baseline=False)
    same = go(tmp_path, agent="do-nothing")
    assert {r["arm"] for r in stored(tmp_path, off.run_id)} == {"agent"}
    assert {r["arm"] for r in stored(tmp_path, same.run_id)} == {"agent"}


def test_messages_and_tool_calls_are_stored(tmp_path: Path) -> None:
    summary = go(tmp_path, task_ids=["inc-a"], baseline=False)
    store = Store(tmp_path / "runs.db")
    cid = f"{summary.run_id}/agent/inc-a/0"
    messages = store.messages(cid)
    calls = list(store.db.query("select * from tool_calls where conversation_id = ?", [cid]))
    conversation = store.conversations(summary.run_id)[0]
    store.close()
    assert messages[0]["content"] == "Hi! How can I help you today?"
    assert [m["idx"] for m in messages] == list(range(len(messages)))
    assert conversation["num_messages"] == len(messages)
    assert [(c["name"], json.loads(c["arguments_json"]), c["error"]) for c in calls] == [("increment", {"name": "a", "by": 1}, 0)]


# --------------------------------------------------------------------------- seeds


def test_seeds_derive_from_sha256_of_seed_task_and_trial(tmp_path: Path) -> None:
    first = stored(tmp_path, go(tmp_path, trials=3, run_id="first").run_id)
    second = stored(tmp_path, go(tmp_path, trials=3, run_id="second").run_id)
    other = stored(tmp_path, go(tmp_path, trials=3, seed=301, run_id="other").run_id)

    for row in first:
        digest = hashlib.sha256(f"300:{row['task_id']}:{row['trial']}".encode()).digest()
        assert row["seed"] == int.from_bytes(digest[:4], "big")
    assert [r["seed"] for r in first] == [r["seed"] for r in second], "same config, same seeds"
    agent = [r for r in first if r["arm"] == "agent"]
    assert len({r["seed"] for r in agent}) == len(agent), "seeds differ across tasks and trials"
    assert {r["seed"] for r in first}.isdisjoint({r["seed"] for r in other})


def test_baseline_uses_the_trial_zero_seed(tmp_path: Path) -> None:
    rows = by_key(stored(tmp_path, go(tmp_path).run_id))
    for task in TASKS:
        assert rows[("baseline", task["id"], 0)]["seed"] == rows[("agent", task["id"], 0)]["seed"]


# --------------------------------------------------------------------------- resume


def test_resuming_the_same_config_skips_everything(tmp_path: Path) -> None:
    first = go(tmp_path, trials=2, run_id="r")
    rows = stored(tmp_path, "r")
    again = go(tmp_path, trials=2, run_id="r")
    assert not first.resumed and again.resumed
    assert again.finished == 0
    assert again.skipped == again.planned == first.planned
    assert stored(tmp_path, "r") == rows


def test_a_changed_config_under_the_same_run_id_names_the_changed_keys(tmp_path: Path) -> None:
    go(tmp_path, run_id="r", max_steps=50)
    with pytest.raises(ResumeConflictError) as info:
        go(tmp_path, run_id="r", max_steps=60, seed=7)
    message = str(info.value)
    assert "'r'" in message
    assert "changed: max_steps, seed" in message


def test_execution_settings_do_not_conflict_on_resume(tmp_path: Path) -> None:
    go(tmp_path, run_id="r", concurrency=1)
    assert go(tmp_path, run_id="r", concurrency=8, run_timeout_s=100.0).finished == 0


def test_changed_tasks_under_the_same_run_id_conflict(tmp_path: Path) -> None:
    go(tmp_path, run_id="r")
    changed = [dict(t) for t in TASKS]
    changed[0] = {**changed[0], "ticket": "A different ticket."}
    with pytest.raises(ResumeConflictError, match="tasks or policy changed"):
        go(tmp_path, run_id="r", domain=ToyDomain(tasks=changed))


# --------------------------------------------------------------------------- failures


def test_a_raising_agent_session_is_an_agent_error_for_that_conversation_only(tmp_path: Path) -> None:
    agent = RaisingOnTask(name="fragile", task_id="read-b")
    summary = go(tmp_path, ("fragile", Registers(agents=[agent])), agent="fragile")
    rows = by_key(stored(tmp_path, summary.run_id))
    broken = rows[("agent", "read-b", 0)]
    assert broken["termination_reason"] == "agent_error"
    assert broken["reward"] == 0.0
    assert "agent exploded" in broken["error"]
    assert rows[("agent", "inc-a", 0)]["reward"] == 1.0
    assert rows[("agent", "lamp", 0)]["reward"] == 1.0
    assert summary.status == "complete"


class FlakyCounterTools(CounterTools):
    """CounterTools whose set-up function fails while the class switch `fail` is on (an infrastructure fault)."""

    fail = False

    def prepare(self) -> bool:
        """An initialization action that fails while the switch is on."""
        if FlakyCounterTools.fail:
            raise OSError("database volume unavailable")
        return True


@attrs.define(kw_only=True)
class FlakyToyDomain(ToyDomain):
    """The toy domain with a task whose environment set-up can fail."""

    def load(self, options: bench_kernel.DomainOptions) -> bench_kernel.DomainData:
        return attrs.evolve(super().load(options), agent_toolkit=FlakyCounterTools)


def flaky_tasks() -> list[dict[str, Any]]:
    tasks = [dict(t) for t in TASKS]
    tasks[0] = {**tasks[0], "initial_state": {"initialization_actions": [{"env_type": "assistant", "func_name": "prepare", "arguments": {}}]}}
    return tasks


def test_infrastructure_errors_are_stored_excluded_and_rerun(tmp_path: Path) -> None:
    domain = FlakyToyDomain(tasks=flaky_tasks())
    FlakyCounterTools.fail = True
    try:
        first = go(tmp_path, domain=domain, run_id="infra")
    finally:
        FlakyCounterTools.fail = False
    rows = by_key(stored(tmp_path, "infra"))
    failed = rows[("agent", "inc-a", 0)]
    assert failed["termination_reason"] == "infrastructure_error"
    assert failed["reward"] is None and "database volume unavailable" in failed["error"]
    assert rows[("baseline", "inc-a", 0)]["termination_reason"] == "infrastructure_error"
    assert rows[("agent", "read-b", 0)]["reward"] == 1.0
    assert first.finished == first.planned

    store = Store(tmp_path / "runs.db")
    figures = kernel_summary(store, "infra")  # the kernel's; bench-report's report counts the same (plugins/report/tests)
    store.close()
    assert figures["infrastructure_errors"] == 2
    assert figures["conversations"] == len(TASKS) - 1
    assert figures["mean_reward"] == 1.0

    again = go(tmp_path, domain=domain, run_id="infra")
    assert again.resumed and again.finished == 2 and again.skipped == again.planned - 2
    rows = stored(tmp_path, "infra")
    assert len(rows) == 2 * len(TASKS), "re-run conversations replace their infrastructure errors"
    assert by_key(rows)[("agent", "inc-a", 0)]["reward"] == 1.0
    assert not any(r["termination_reason"] == "infrastructure_error" for r in rows)


def test_an_nl_assertion_basis_without_bench_judging_is_refused_up_front(tmp_path: Path) -> None:
    tasks = [
        *TASKS,
        {
            "id": "nl",
            "user_scenario": {"instructions": "Be nice."},
            "evaluation_criteria": {"nl_assertions": ["Agent is nice"], "reward_basis": ["NL_ASSERTION"]},
        },
    ]
    with pytest.raises(ConfigError, match=r"1 of \d+ tasks rest on the reward component NL_ASSERTION \(e.g. 'nl'\), .* bench-judging"):
        go(tmp_path, domain=ToyDomain(tasks=tasks))
    with pytest.raises(ConfigError, match=r"registers; it is blocked by this run \(--plugin no:judging\)$"):
        go(tmp_path, domain=ToyDomain(tasks=tasks), plugins=["no:judging"])
    assert not (tmp_path / "runs.db").exists(), "nothing is stored for a refused run"


def test_unknown_task_ids_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown task ids.*nope"):
        go(tmp_path, task_ids=["inc-a", "nope"])


def test_task_ids_and_num_tasks_select(tmp_path: Path) -> None:
    picked = go(tmp_path, task_ids=["lamp", "inc-a"], baseline=False, run_id="ids")
    first_two = go(tmp_path, num_tasks=2, baseline=False, run_id="num")
    assert sorted(r["task_id"] for r in stored(tmp_path, "ids")) == ["inc-a", "lamp"]
    assert sorted(r["task_id"] for r in stored(tmp_path, "num")) == ["inc-a", "read-b"]
    assert picked.planned == first_two.planned == 2


def test_empty_plugin_selection_loads_no_installed_plugins() -> None:
    names = [p.name for p in get_plugin_manager([]).plugins]
    assert names == list(DEFAULT_PLUGINS)


# --------------------------------------------------------------------------- metrics


@attrs.define(kw_only=True)
class MessageCount(Metric):
    def score(self, result: ConversationResult) -> Mapping[str, float]:
        return {"": len(result.messages), "tool": sum(m.role == "tool" for m in result.messages)}


@attrs.define(kw_only=True)
class Exploding(Metric):
    def score(self, result: ConversationResult) -> Mapping[str, float]:
        raise ZeroDivisionError("no turns")


def test_plugin_metrics_are_stored_and_a_raising_metric_is_recorded(tmp_path: Path) -> None:
    metrics = Registers(metrics=[MessageCount(name="messages"), Exploding(name="exploding")])
    summary = go(tmp_path, ("metrics-plugin", metrics), task_ids=["inc-a"])
    assert summary.status == "complete" and summary.finished == 2
    store = Store(tmp_path / "runs.db")
    values = {(v["conversation_id"].split("/")[1], v["metric"]): v for v in store.metric_values(summary.run_id)}
    messages = store.messages(f"{summary.run_id}/agent/inc-a/0")
    store.close()

    count = values[("agent", "messages")]
    assert count["value"] == len(messages) and count["plugin"] == "metrics-plugin" and count["error"] is None
    assert values[("agent", "messages.tool")]["value"] == 1
    broken = values[("agent", "exploding")]
    assert broken["value"] is None and broken["error"] == "ZeroDivisionError: no turns"
    assert ("baseline", "messages") in values, "metrics score the baseline arm too"
    assert values[("agent", "reward")]["value"] == 1.0
    assert values[("agent", "component.DB")]["value"] == 1.0  # the report's means of them: test_report.py


# --------------------------------------------------------------------------- report


@needs_report()
def test_report_json_has_the_headline_figures(tmp_path: Path) -> None:
    agent = FirstTrialOnly(name="first-trial-only")
    summary = go(tmp_path, ("flaky-agent", Registers(agents=[agent])), agent="first-trial-only", trials=2, concurrency=1)
    store = Store(tmp_path / "runs.db")
    as_json = collect(get_plugin_manager(["report"])).get("report format", "json")
    data = json.loads(as_json.render(build_report(store, summary.run_id), ReportContext()))
    store.close()

    for key in ("average_reward", "pass_hat_k", "pass_at_k", "components", "flips", "baseline"):
        assert key in data
    assert set(data["average_reward"]) == {"value", "low", "high", "n"}
    assert data["average_reward"]["value"] == 0.5 and data["average_reward"]["n"] == 6
    assert set(data["pass_hat_k"]) == set(data["pass_at_k"]) == {"1", "2"}
    assert data["pass_hat_k"]["1"]["value"] == 0.5
    assert data["pass_hat_k"]["2"]["value"] == 0.0
    assert data["pass_at_k"]["2"]["value"] == 1.0
    for estimate in (*data["pass_hat_k"].values(), *data["pass_at_k"].values()):
        assert estimate["low"] <= estimate["value"] <= estimate["high"]
    assert {"DB", "ACTION", "COMMUNICATE", "ENV_ASSERTION"} <= set(data["components"])
    assert data["flips"]["mixed_tasks"] == 3 and data["flips"]["mean_flip_rate"] == 1.0
    assert data["baseline"]["agent"] == "do-nothing" and data["baseline"]["conversations"] == 3
    assert data["baseline"]["pass_rate"] == 0.0
    assert data["terminations"] == {"user_stop": 6}


def test_gold_states_are_hashed_when_a_task_is_first_scored_not_before_the_run_begins(tmp_path: Path) -> None:
    # Hashing a large database (tau2's airline: ~40 ms) waits for the first conversation of each task: before the
    # first request, prepare only replays the gold actions to find the tasks it must refuse.
    import asyncio

    from bench_kernel.run.runner import execute, prepare

    async def both() -> tuple[int, int, list[float]]:
        ctx, units, _, _ = await prepare(RunConfig(domain="toy", agent="oracle", baseline=False), tmp_path / "runs.db", plugins())
        try:
            before = len(ctx.golds)
            await execute(ctx, units)
            return before, len(ctx.golds), [r["reward"] for r in ctx.store.conversations(ctx.run_id)]
        finally:
            await ctx.models.aclose()
            ctx.store.close()

    before, after, rewards = asyncio.run(both())
    assert before == 0 and after == len(TASKS)
    assert rewards and all(r == 1.0 for r in rewards)


def test_the_first_score_of_a_task_reuses_the_gold_checks_replay(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The gold step replays every task before the run; scoring needs the same gold state, so it takes that replay
    # rather than replaying again (the replays `replay_gold` makes itself are counted here).
    from bench_kernel.evaluation import evaluator

    replayed: list[str] = []
    original = evaluator.replay_gold_actions

    def counted(task: Any, env: Any, *twins: Any, sync: bool = True) -> list[str]:
        replayed.append(task.id)
        return original(task, env, *twins, sync=sync)

    monkeypatch.setattr(evaluator, "replay_gold_actions", counted)
    summary = go(tmp_path, agent="oracle", trials=2)
    rows = stored(tmp_path, summary.run_id)
    assert replayed == []
    assert len(rows) == 3 * len(TASKS) and all(row["reward"] == 1.0 for row in rows if row["arm"] == "agent")
