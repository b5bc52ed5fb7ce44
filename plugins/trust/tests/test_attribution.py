"""Failure attribution: the rules on hand-built conversations, the stored columns, `--retry-attributed` and the report.

The kernel's side of the seam (an attributor that raises, the replay seeds, the retry passes with any attributor's
labels) is pinned by kernel/tests/test_attribution_seam.py.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from pathlib import Path

import pytest
from bench_trust.attribution import LABELS, FailedConversation, attribute
from bench_trust.attributor import RulesAttributor
from click.testing import CliRunner

from bench_kernel import (
    ATTRIBUTION_LABELS,
    Action,
    AssistantMessage,
    Check,
    ComponentScore,
    ConversationResult,
    EvaluationCriteria,
    Report,
    RewardInfo,
    RunConfig,
    Store,
    Task,
    TerminationReason,
    ToolCall,
    UserMessage,
    UserScenario,
    attributed,
    build_report,
    get_plugin_manager,
    run,
    run_registry,
)
from bench_kernel.testing import bench_cli

pytest.importorskip("bench_mock", reason="these runs play the mock domain (pip install -e contrib_domains/mock)")

from attribution_cases import CasesPlugin, case_tasks

TASK = Task(
    id="t",
    user_scenario=UserScenario(instructions="Your email is ada@example.net. Ask to move to plan gold."),
    evaluation_criteria=EvaluationCriteria(
        actions=[Action(action_id="1", name="change_plan", arguments={"plan": "gold"})], reward_basis=["DB", "NL_ASSERTION"]
    ),
)
WRITE = lambda call: call.name == "change_plan"  # noqa: E731


Component = tuple[float | None, list[Check], str | None]


def failed(messages: list, termination: TerminationReason = TerminationReason.USER_STOP, **components: Component) -> FailedConversation:
    scores = [ComponentScore(component=name, score=score, checks=checks, error=error) for name, (score, checks, error) in components.items()]
    info = RewardInfo(reward=0.0, reward_basis=["DB", "NL_ASSERTION"], components=scores or [ComponentScore(component="DB", score=0.0)])
    return FailedConversation(task=TASK, messages=messages, termination=termination, reward_info=info, is_write=WRITE, user_tools=frozenset())


class BrokenEnvironment:
    """An environment whose tools cannot be described: the rules cannot run."""

    def user_schemas(self, tools: object) -> None:
        raise ValueError("no schemas here")


def test_a_failing_rule_leaves_the_conversation_unlabelled_never_lost() -> None:
    result = ConversationResult(
        run_id="r",
        arm="agent",
        task_id=TASK.id,
        trial=0,
        seed=1,
        agent="a",
        user="u",
        termination_reason=TerminationReason.USER_STOP,
        messages=[],
        reward_info=RewardInfo(reward=0.0),
        started_utc="",
        ended_utc="",
        duration_ms=0,
    )
    assert attributed(result, TASK, None, BrokenEnvironment(), None, attributors=[RulesAttributor()]) is result  # type: ignore[arg-type]


def test_the_rules_give_exactly_the_kernels_labels() -> None:
    assert ATTRIBUTION_LABELS == LABELS


def test_a_passed_conversation_has_no_attribution() -> None:
    passed = FailedConversation(task=TASK, messages=[], termination=TerminationReason.USER_STOP, reward_info=RewardInfo(reward=1.0))
    assert attribute(passed) is None


def test_the_user_stopping_while_the_agent_asks_is_the_users_fault_but_not_after_a_claimed_success() -> None:
    asked = [
        UserMessage(content="Move me to gold."),
        AssistantMessage(content="Gold costs 10. Shall I switch you?"),
        UserMessage(content="###STOP###"),
    ]
    found = attribute(failed(asked))
    assert found is not None and (found.label, found.rule) == ("user-simulator", "user_stopped_early")
    assert "change_plan never made" in found.evidence
    claimed = [*asked[:1], AssistantMessage(content="Done, you are now on gold."), asked[2]]
    assert attribute(failed(claimed)).label == "agent"  # type: ignore[union-attr]
    closer = [*asked[:1], AssistantMessage(content="Sorry, I cannot. Is there anything else I can help you with?"), asked[2]]
    assert attribute(failed(closer)).label == "agent"  # type: ignore[union-attr]
    wrote = [*asked[:1], AssistantMessage(tool_calls=[ToolCall(id="c", name="change_plan", arguments={"plan": "bronze"})]), *asked[1:]]
    assert attribute(failed(wrote)).label == "agent"  # type: ignore[union-attr]  # the write was made (wrongly): the agent's


def test_an_invented_fact_counts_only_when_the_agent_took_it_up() -> None:
    invented = [
        UserMessage(content="My email is ada.smith@example.org."),
        AssistantMessage(tool_calls=[ToolCall(id="c", name="find", arguments={"email": "ada.smith@example.org"})]),
    ]
    found = attribute(failed(invented))
    assert found is not None and found.rule == "user_invented_fact" and "ada.smith@example.org" in found.evidence
    ignored = [invented[0], AssistantMessage(content="I cannot find that account.")]
    assert attribute(failed(ignored)).label == "agent"  # type: ignore[union-attr]
    from_scenario = [
        UserMessage(content="My email is ada@example.net."),
        AssistantMessage(tool_calls=[ToolCall(id="c", name="find", arguments={"email": "ada@example.net"})]),
    ]
    assert attribute(failed(from_scenario)).label == "agent"  # type: ignore[union-attr]


def test_judge_rules_fire_only_when_the_judge_alone_failed_the_conversation() -> None:
    stop = [UserMessage(content="hi"), AssistantMessage(content="Done, you are on gold.")]
    error = attribute(failed(stop, DB=(1.0, [], None), NL_ASSERTION=(None, [], "judge: empty reply")))
    assert error is not None and (error.label, error.rule) == ("judge", "judge_error")
    also_db = attribute(failed(stop, DB=(0.0, [], None), NL_ASSERTION=(None, [], "judge: empty reply")))
    assert also_db is not None and also_db.label == "agent"
    says_met = [Check(subject="price said", met=False, detail="The agent correctly said the price.")]
    inconsistent = attribute(failed(stop, DB=(1.0, [], None), NL_ASSERTION=(0.0, says_met, None)))
    assert inconsistent is not None and inconsistent.rule == "inconsistent_verdict"
    true_with_violation = [
        Check(subject="a", met=True, detail="However, the agent did not confirm."),
        Check(subject="b", met=False, detail="The agent never said the price."),
    ]
    assert attribute(failed(stop, DB=(1.0, [], None), NL_ASSERTION=(0.0, true_with_violation, None))).rule == "inconsistent_verdict"  # type: ignore[union-attr]
    honest = [Check(subject="price said", met=False, detail="The agent did not say the price.")]
    assert attribute(failed(stop, DB=(1.0, [], None), NL_ASSERTION=(0.0, honest, None))).label == "agent"  # type: ignore[union-attr]


def test_a_broken_task_and_failed_transport_are_not_the_agents() -> None:
    flagged = FailedConversation(
        task=TASK,
        messages=[],
        termination=TerminationReason.AGENT_STOP,
        reward_info=RewardInfo(reward=0.0),
        task_flags={"unknown_ids": "plan 'gold' is not in the data", "duplicate": "same as t2"},
    )
    found = attribute(flagged)
    assert found is not None and found.label == "task" and "unknown_ids" in found.evidence and "duplicate" not in found.evidence
    only_duplicate = attrs_evolve(flagged, task_flags={"duplicate": "same as t2"})
    assert attribute(only_duplicate).label == "agent"  # type: ignore[union-attr]
    transport = attrs_evolve(flagged, task_flags={}, termination=TerminationReason.AGENT_ERROR, error="agent: ModelHTTPError: HTTP 502: bad gateway")
    assert attribute(transport).label == "infrastructure"  # type: ignore[union-attr]
    refused = attrs_evolve(transport, error="agent: ModelHTTPError: HTTP 400: context too long")
    assert attribute(refused).label == "agent"  # type: ignore[union-attr]


def attrs_evolve(conversation: FailedConversation, **changes: object) -> FailedConversation:
    import attrs

    return attrs.evolve(conversation, **changes)


# --------------------------------------------------------------------------- runs


def case_run(db: Path, tasks: list[str], **extra: object) -> RunConfig:
    tasks_file = db.with_name("cases.json")
    tasks_file.write_text(json.dumps(case_tasks()), encoding="utf-8")
    return RunConfig(
        domain="mock",
        plugins=["mock"],
        agent="case-agent",
        user="case-user",
        judge="case-judge",
        tasks_file=str(tasks_file),
        baseline=False,
        task_ids=tasks,
        trials=2,
        **extra,
    )  # type: ignore[arg-type]


def play(db: Path, config: RunConfig) -> str:
    return run(config, db, plugins=get_plugin_manager(["mock", "trust"], [("attribution-cases", CasesPlugin())])).run_id


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as connection:
        return list(connection.execute(sql))


TWO = ["u-stop-confirm-upgrade", "a-never-acts"]


def test_labels_are_stored_with_their_evidence_and_the_report_gives_both_pass_hat_k(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    run_id = play(db, case_run(db, TWO))
    stored = rows(db, "select task_id, attribution, attribution_evidence, retry, superseded_by from conversations order by task_id, trial")
    assert [(t, label) for t, label, *_ in stored] == [("a-never-acts", "agent")] * 2 + [("u-stop-confirm-upgrade", "user-simulator")] * 2
    evidence = json.loads(stored[2][2])
    assert evidence["rule"] == "user_stopped_early" and evidence["source"] == "rules" and "Shall I go ahead?" in evidence["evidence"]
    report = stored_report(db, run_id)
    card = report.card("attribution")
    assert card["counts"]["user-simulator"] == 2 and card["counts"]["agent"] == 2
    assert card["tasks_dropped"] == 1 and card["conversations_dropped"] == 2 and card["tasks"] == 1
    assert report.pass_hat_k["2"]["n"] == 2 and card["pass_hat_k_agent"]["2"]["n"] == 1
    text, markdown = rendered(db, run_id, "table"), rendered(db, run_id, "markdown")
    assert "failed agent conversations by attribution: agent 2, user-simulator 2" in text and "## Attribution" in markdown
    metrics = {r["metric"]: r for r in csv.DictReader(io.StringIO(rendered(db, run_id, "csv")))}
    assert metrics["attribution[user-simulator]"]["value"] == "2" and metrics["pass^1[attributable]"]["n"] == "1"
    assert json.loads(rendered(db, run_id, "json"))["attribution"]["pass_hat_k_agent"]["1"]["value"] == 0.0


def stored_report(db: Path, run_id: str) -> Report:
    """The run's report with its plugins' cards, as `bench report` builds it."""
    store = Store(db)
    try:
        run_record = store.run(run_id)
        assert run_record is not None
        return build_report(store, run_id, run_registry(run_record)[0])
    finally:
        store.close()


def rendered(db: Path, run_id: str, fmt: str) -> str:
    result = CliRunner().invoke(bench_cli(["mock"]), ["report", run_id, "--db", str(db), "--format", fmt])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_retry_attributed_replays_as_new_rows_and_reports_use_the_newest(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    config = case_run(db, TWO)
    run_id = play(db, config)
    first_seeds = dict(rows(db, "select trial, seed from conversations where task_id = 'u-stop-confirm-upgrade'"))

    again = play(db, case_run(db, TWO, retry_attributed=["user-simulator"]))

    assert again == run_id  # the same options name the same run: --retry-attributed is not part of its identity
    replays = rows(db, "select id, trial, retry, seed, superseded_by from conversations where retry > 0 order by trial")
    assert [(trial, retry) for _, trial, retry, _, _ in replays] == [(0, 1), (1, 1)]
    assert all(seed != first_seeds[trial] for _, trial, _, seed, _ in replays)
    assert rows(db, "select count(*) from conversations") == [(6,)]
    superseded = dict(rows(db, "select id, superseded_by from conversations where superseded_by is not null"))
    assert sorted(superseded.values()) == sorted(r[0] for r in replays)
    # the scripted user stops again: a second pass replays the replays
    play(db, case_run(db, TWO, retry_attributed=["user-simulator"]))
    assert rows(db, "select retry, count(*) from conversations group by retry") == [(0, 4), (1, 2), (2, 2)]
    report = stored_report(db, run_id)
    assert report.conversations == 4 and report.card("attribution")["superseded"] == 4
    store = Store(db)
    try:
        assert len(store.conversations(run_id)) == 4 and len(store.conversations(run_id, include_superseded=True)) == 8
    finally:
        store.close()
    # an agent fault is not replayed by asking for user-simulator ones, and a plain resume replays nothing
    assert rows(db, "select count(*) from conversations where task_id = 'a-never-acts'") == [(2,)]
    play(db, config)
    assert rows(db, "select count(*) from conversations") == [(8,)]


def test_the_command_line_takes_retry_attributed(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    base = [
        "run",
        "--plugin",
        "mock",
        "--agent",
        "do-nothing",
        "--task-id",
        "upgrade_by_email",
        "--no-baseline",
        "--db",
        str(db),
        "--format",
        "none",
        "--progress",
        "none",
    ]
    result = CliRunner().invoke(bench_cli(["mock"]), base)
    assert result.exit_code == 0, result.output
    again = CliRunner().invoke(bench_cli(["mock"]), [*base, "--retry-attributed", "user-simulator"])
    assert again.exit_code == 0, again.output  # the stored run, resumed: no failure of the simulator's to play again
    assert rows(db, "select retry, superseded_by is null, attribution from conversations") == [(0, 1, "agent")]
    # the agent's own failures are never played again: that would report best-of-N
    agent = CliRunner().invoke(bench_cli(["mock"]), [*base, "--retry-attributed", "agent"])
    assert agent.exit_code == 2 and "'agent' is not one of" in agent.output
    # options that name no stored run are refused before anything is stored (a mistyped option would start a new run)
    other = CliRunner().invoke(bench_cli(["mock"]), [*base, "--trials", "3", "--retry-attributed", "user-simulator"])
    assert other.exit_code == 1 and "retries a stored run, and these options name none" in other.output
    assert rows(db, "select count(*) from runs") == [(1,)]
    wrong = CliRunner().invoke(bench_cli(["mock"]), ["run", "--plugin", "mock", "--retry-attributed", "nobody", "--db", str(db)])
    assert wrong.exit_code == 2 and "nobody" in wrong.output
