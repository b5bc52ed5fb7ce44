"""The attribution seam: registered attributors label failed conversations, the store keeps the labels, and
`--retry-attributed` replays by them whatever attributor gave them (bench-trust's rules: plugins/trust/tests)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from plugin_factory import needs_installed

from bench_kernel import Attribution, Attributor, FinishedConversation, RunConfig, Store, get_plugin_manager, hookimpl, run
from bench_kernel.errors import ConfigError
from bench_kernel.evaluation.attribution import attributed
from bench_kernel.run.planning import retry_units
from bench_kernel.run.playing import retry_seed
from bench_kernel.schema.messages import TerminationReason
from bench_kernel.schema.results import ConversationResult, RewardInfo
from bench_kernel.schema.tasks import Task, UserScenario

TASK = Task(id="t", user_scenario=UserScenario(instructions="Ask for help."))
BLAMED = "upgrade_by_email"
"""The mock task whose failures the test attributor puts on the user simulator."""


@attrs.define(kw_only=True)
class Fixed(Attributor):
    """Gives one label (or None, or raises) and counts its calls."""

    label: str | None = None
    calls: int = 0

    def attribute(self, conversation: FinishedConversation) -> Attribution | None:
        self.calls += 1
        if self.label == "raise":
            raise ValueError("a broken attributor")
        return None if self.label is None else Attribution(label=self.label, rule=self.name, evidence="fixed")


def result(reward: float | None, termination: TerminationReason = TerminationReason.USER_STOP) -> ConversationResult:
    return ConversationResult(
        run_id="r",
        arm="agent",
        task_id=TASK.id,
        trial=0,
        seed=1,
        agent="a",
        user="u",
        termination_reason=termination,
        messages=[],
        reward_info=None if reward is None else RewardInfo(reward=reward),
        started_utc="",
        ended_utc="",
        duration_ms=0,
    )


def label(found: ConversationResult) -> str | None:
    return found.attribution.label if found.attribution else None


def test_the_first_attributor_that_names_a_label_wins_and_one_that_raises_is_skipped() -> None:
    broken, silent, judge, agent = Fixed(name="a", label="raise"), Fixed(name="b"), Fixed(name="c", label="judge"), Fixed(name="d", label="agent")
    found = attributed(result(0.0), TASK, None, None, None, attributors=[broken, silent, judge, agent])  # type: ignore[arg-type]
    assert label(found) == "judge" and (broken.calls, silent.calls, judge.calls, agent.calls) == (1, 1, 1, 0)
    assert label(attributed(result(0.0), TASK, None, None, None, attributors=[silent])) is None  # type: ignore[arg-type]
    assert (
        label(
            attributed(
                result(None, TerminationReason.INFRASTRUCTURE_ERROR),
                TASK,
                None,
                None,
                None,  # type: ignore[arg-type]
                attributors=[agent],
            )
        )
        == "agent"
    )


def test_a_passed_conversation_is_never_labelled() -> None:
    asked = Fixed(name="a", label="agent")
    assert attributed(result(1.0), TASK, None, None, None, attributors=[asked]).attribution is None  # type: ignore[arg-type]
    assert asked.calls == 0


def test_a_replay_seed_is_derived_from_the_ordinal() -> None:
    assert retry_seed(7, 0) == 7
    assert retry_seed(7, 1) == retry_seed(7, 1) != retry_seed(7, 2) != 7


# --------------------------------------------------------------------------- runs


class BlamePlugin:
    """An attributor that puts the failures of one task on the user simulator and the others on the agent."""

    @hookimpl
    def register_attributors(self, register: Callable[[Attributor], None]) -> None:
        register(Blame(name="blame"))


@attrs.define(kw_only=True)
class Blame(Attributor):
    def attribute(self, conversation: FinishedConversation) -> Attribution | None:
        blamed = conversation.task.id == BLAMED
        return Attribution(label="user-simulator" if blamed else "agent", rule="blame", evidence=f"task {conversation.task.id}")


TWO = [BLAMED, "plan_price_question"]


def config(**extra: Any) -> RunConfig:
    return RunConfig(domain="mock", plugins=["mock"], agent="do-nothing", baseline=False, task_ids=TWO, trials=2, **extra)


def play(db: Path, run_config: RunConfig, *plugins: tuple[str, object]) -> str:
    return run(run_config, db, plugins=get_plugin_manager(["mock"], list(plugins) or [("blame", BlamePlugin())])).run_id


def rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as connection:
        return list(connection.execute(sql))


@needs_installed("mock")
def test_the_store_keeps_an_attributors_label_and_evidence_and_none_without_one(tmp_path: Path) -> None:
    play(tmp_path / "r.db", config())
    stored = rows(tmp_path / "r.db", "select task_id, attribution, attribution_evidence from conversations order by task_id, trial")
    assert [(t, a) for t, a, _ in stored] == [("plan_price_question", "agent")] * 2 + [(BLAMED, "user-simulator")] * 2
    assert json.loads(stored[2][2]) == {"rule": "blame", "source": "rules", "evidence": f"task {BLAMED}"}
    play(tmp_path / "bare.db", config(), ("none", object()))
    assert rows(tmp_path / "bare.db", "select distinct attribution from conversations") == [(None,)]


@needs_installed("mock")
def test_retry_attributed_replays_as_new_rows_and_the_newest_row_counts(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    run_id = play(db, config())
    first_seeds = dict(rows(db, f"select trial, seed from conversations where task_id = '{BLAMED}'"))

    assert play(db, config(retry_attributed=["user-simulator"])) == run_id  # not part of the run's identity

    replays = rows(db, "select id, trial, retry, seed from conversations where retry > 0 order by trial")
    assert [(trial, retry) for _, trial, retry, _ in replays] == [(0, 1), (1, 1)]
    assert all(seed != first_seeds[trial] for _, trial, _, seed in replays)
    superseded = dict(rows(db, "select id, superseded_by from conversations where superseded_by is not null"))
    assert sorted(superseded.values()) == sorted(r[0] for r in replays)
    play(db, config(retry_attributed=["user-simulator"]))  # still the user simulator's: the replays are replayed
    assert rows(db, "select retry, count(*) from conversations group by retry") == [(0, 4), (1, 2), (2, 2)]
    store = Store(db)
    try:
        assert len(store.conversations(run_id)) == 4 and len(store.conversations(run_id, include_superseded=True)) == 8
    finally:
        store.close()
    play(db, config())  # a plain resume replays nothing, and the agent's failures were never replayed
    assert rows(db, "select count(*) from conversations") == [(8,)]
    assert rows(db, "select count(*) from conversations where task_id = 'plan_price_question'") == [(2,)]


@needs_installed("mock")
def test_an_interrupted_retry_pass_is_finished_by_the_next_not_started_again(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    run_id = play(db, config())
    store = Store(db)
    try:  # a pass planned (its event recorded) whose process died before playing it
        tasks = [t for t in _mock_tasks() if t.id == BLAMED]
        planned = retry_units(store, run_id, tasks, ["user-simulator"])
    finally:
        store.close()
    assert [(u.task.id, u.trial, u.retry) for u in planned] == [(BLAMED, 0, 1), (BLAMED, 1, 1)]

    play(db, config(retry_attributed=["user-simulator"]))

    assert rows(db, "select retry, count(*) from conversations group by retry") == [(0, 4), (1, 2)]
    assert rows(db, "select count(*) from events where kind = 'run.retry_attributed'") == [(1,)]


@needs_installed("mock")
def test_one_current_row_per_unit_is_a_store_guarantee_and_the_agents_failures_are_never_retried(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    play(db, config())
    with sqlite3.connect(db) as connection, pytest.raises(sqlite3.IntegrityError):
        connection.execute(
            "insert into conversations (id, run_id, arm, task_id, trial, retry) "
            "select id || '/copy', run_id, arm, task_id, trial, 5 from conversations limit 1"
        )
    store = Store(db)
    try:
        with pytest.raises(ConfigError, match="best-of-N"):
            retry_units(store, "any", [], ["agent"])
    finally:
        store.close()


def _mock_tasks() -> list[Task]:
    from bench_kernel.plugins import collect
    from bench_kernel.run.planning import load_domain

    return list(load_domain(collect(get_plugin_manager(["mock"])), RunConfig(domain="mock")).tasks)
