"""`bench review RUN` against a real OpenAI-protocol server on 127.0.0.1: labels stored per conversation, a garbage reply
recorded as that conversation's error, resume without duplicates, the report section, the ledger and the cache."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from bench_kernel import RunConfig, get_plugin_manager, run
from bench_kernel.testing import FakeOpenAIServer, Reply, bench_cli

Servers = Callable[..., FakeOpenAIServer]
TASKS = ["plan_price_question", "upgrade_by_email", "close_fixed_ticket"]


def stored_run(db: Path, agent: str = "do-nothing", tasks: list[str] = TASKS) -> str:
    """A mock-domain run (do-nothing fails every task, the oracle solves every one), without a baseline."""
    summary = run(RunConfig(plugins=["mock"], agent=agent, task_ids=tasks, baseline=False), db, plugins=get_plugin_manager(["mock", "trust"]))
    return summary.run_id


def reviewer(body: dict[str, Any]) -> Reply:
    """A reviewer that blames the agent at the last turn of the transcript it was shown, and the user never."""
    asked = body["messages"][-1]["content"]
    last = max(int(line[1 : line.index("]")]) for line in asked.splitlines() if line.startswith("[") and "]" in line)
    if "user_errors" in body["messages"][0]["content"] and "agent_errors" not in body["messages"][0]["content"]:
        return Reply.text(json.dumps({"user_errors": [], "summary": "the customer kept to the scenario"}))
    return Reply.text(
        json.dumps(
            {
                "agent_errors": [{"category": "missed_action", "turn": last, "severity": "critical", "reason": "the agent never made the change"}],
                "user_errors": [],
                "summary": "the agent did nothing",
            }
        )
    )


def user_blamer(body: dict[str, Any]) -> Reply:
    """A second reviewer that blames the user (critical) and never the agent."""
    full = "agent_errors" in body["messages"][0]["content"]
    found = [{"category": "invented_detail", "turn": 1, "severity": "critical", "reason": "gave an email the scenario lacks"}]
    return Reply.text(json.dumps({**({"agent_errors": []} if full else {}), "user_errors": found, "summary": "x"}))


@pytest.fixture
def server() -> Iterator[Callable[..., FakeOpenAIServer]]:
    started: list[FakeOpenAIServer] = []

    def start(responder: Callable[[dict[str, Any]], Reply] = reviewer, **kwargs: Any) -> FakeOpenAIServer:
        started.append(FakeOpenAIServer(responder, **kwargs).start())
        return started[-1]

    yield start
    for s in started:
        s.stop()


def review(db: Path, run_id: str, url: str, *args: str) -> Result:
    return CliRunner().invoke(
        bench_cli(["review", "openai"]), ["review", run_id, "--db", str(db), "--reviewer-model", "judge-a", "--reviewer-base-url", url, *args]
    )


def rows(db: Path, sql: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db) as connection:
        return list(connection.execute(sql, params))


def test_every_conversation_is_labelled_and_stored_and_the_report_shows_the_categories(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    run_id = stored_run(db)
    fake = server()

    result = review(db, run_id, fake.base_url)

    assert result.exit_code == 0, result.output
    assert f"reviewed 3 of 3 conversation(s) of run {run_id} (full; reviewer reviewer); 0 review(s) already stored" in result.output
    assert rows(db, "select count(*), count(summary), count(error) from reviews") == [(3, 3, 0)]
    found = rows(
        db, "select f.category, f.severity, f.turn_idx, c.num_messages from review_findings f join conversations c on c.id = f.conversation_id"
    )
    assert len(found) == 3 and all(category == "missed_action" and turn == n - 1 for category, _, turn, n in found)
    # the section, as `bench review` prints it and as `bench report` shows it: categories of both sides, every finding
    assert "Error categories (reviewer, full)" in result.output and "missed_action" in result.output
    report = CliRunner().invoke(bench_cli([]), ["report", run_id, "--db", str(db), "--format", "json"])
    section = next(s for s in json.loads(report.output)["sections"] if s["name"] == "review")
    tables = {t["title"]: t for t in section["tables"]}
    overview = tables["Reviews (conversations)"]["rows"]
    assert overview == [["reviewer", "judge-a", "full", 3, 0, 3, 0, 0]]
    categories = {(r[0], r[1]): r[2:] for r in tables["Error categories (reviewer, full)"]["rows"]}
    assert categories[("agent", "missed_action")] == [3, 3, 3] and categories[("user", "invented_detail")] == [0, 0, 0]
    assert len(tables["Findings"]["rows"]) == 3
    # every call is in the run's ledger under arm 'review', against its conversation, with the cost the price table gives
    assert rows(db, "select arm, role, model, count(distinct conversation_id), count(*) from llm_calls group by arm, role, model") == [
        ("review", "reviewer", "judge-a", 3, 3)
    ]
    request = fake.completions[0]
    assert request["response_format"] == {"type": "json_object"} and request["model"] == "judge-a"
    assert "# Policy the agent must follow" in request["messages"][1]["content"]


def test_a_garbage_reply_is_recorded_for_its_conversation_and_the_others_are_labelled(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    run_id = stored_run(db)
    fake = server(replies=[Reply.text("I think the agent was fine, overall. 7/10")])

    result = review(db, run_id, fake.base_url, "--concurrency", "1")

    assert result.exit_code == 1, result.output  # a failed review is a failed command, after the others are stored
    assert "1 review(s) failed (recorded; run the same command again to retry them)" in result.output
    assert "reviewed 2 of 3 conversation(s)" in result.output and "1 failed (recorded, retried next time)" in result.output
    ((cid, error, reply_text),) = rows(db, "select conversation_id, error, reply_text from reviews where error is not null")
    assert error.startswith("ReviewReplyError: $: not a JSON object") and reply_text == "I think the agent was fine, overall. 7/10"
    assert rows(db, "select count(*) from review_findings where conversation_id = ?", (cid,)) == [(0,)]
    assert "Reviews that failed" in result.output
    # the next review retries it (and only it): now every conversation holds a review, none twice
    again = review(db, run_id, fake.base_url)
    assert again.exit_code == 0, again.output
    assert "reviewed 1 of 3 conversation(s)" in again.output and "2 review(s) already stored" in again.output
    assert rows(db, "select count(*), count(error) from reviews") == [(3, 0)]
    assert len(fake.completions) == 4


def test_reviewing_again_stores_nothing_twice_and_redo_replaces(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    run_id = stored_run(db)
    fake = server()
    assert review(db, run_id, fake.base_url).exit_code == 0
    before = rows(db, "select * from review_findings order by conversation_id")

    again = review(db, run_id, fake.base_url)
    assert "reviewed 0 of 3 conversation(s)" in again.output and "3 review(s) already stored" in again.output
    assert len(fake.completions) == 3 and rows(db, "select * from review_findings order by conversation_id") == before

    redo = review(db, run_id, fake.base_url, "--redo")
    assert "reviewed 3 of 3" in redo.output and len(fake.completions) == 6
    assert rows(db, "select count(*) from reviews") == [(3,)] and rows(db, "select count(*) from review_findings") == [(3,)]
    plugins = json.loads(rows(db, "select plugins_json from runs where id = ?", (run_id,))[0][0])
    assert [p["name"] for p in plugins if not p.get("builtin")] == ["mock", "trust", "review"]  # listed once: its section shows


def test_failed_only_and_user_only(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    solved = stored_run(db, agent="oracle")
    failed = stored_run(db)
    fake = server()
    assert "reviewed 0 of 0 conversation(s)" in review(db, solved, fake.base_url, "--failed-only").output
    assert "reviewed 3 of 3" in review(db, failed, fake.base_url, "--failed-only").output

    user_only = review(db, solved, fake.base_url, "--user-only")

    assert "reviewed 3 of 3 conversation(s) of run" in user_only.output and "(user-only;" in user_only.output
    asked = fake.completions[-1]["messages"]
    assert "# Policy" not in asked[1]["content"] and "agent_errors" not in asked[0]["content"]
    assert rows(db, "select mode, count(*) from reviews where run_id = ? group by mode", (solved,)) == [("user-only", 3)]
    assert "Error categories (reviewer, user-only)" in user_only.output


def test_a_second_reviewer_gives_the_agreement_figure(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    run_id = stored_run(db)
    first, second = server(), server(user_blamer)

    result = review(
        db, run_id, first.base_url, "--model-option", "reviewer-2.model=judge-b", "--model-option", f"reviewer-2.base_url={second.base_url}"
    )

    assert result.exit_code == 0, result.output
    assert "(full; reviewers reviewer, reviewer-2)" in result.output
    assert len(first.completions) == 3 and len(second.completions) == 3
    report = CliRunner().invoke(bench_cli([]), ["report", run_id, "--db", str(db), "--section", "review", "--format", "json"])
    tables = {t["title"].split(" (")[0]: t for t in json.loads(report.output)["tables"]}
    agreement = {row[2]: row[3:] for row in tables["Reviewer agreement"]["rows"]}
    # the first blames the agent in all 3 and the user never, the second the reverse: they disagree on every conversation
    # (observed 0; chance 1*0 + 0*1 = 0, so kappa 0); on "unreliable verdict" the second says yes, the first no
    assert agreement["agent error"] == [3, 0.0, 0.0] and agreement["user error"] == [3, 0.0, 0.0]
    assert agreement["agent: missed_action"] == [3, 0.0, 0.0] and agreement["user: invented_detail"] == [3, 0.0, 0.0]
    assert rows(db, "select reviewer, count(*) from reviews group by reviewer") == [("reviewer", 3), ("reviewer-2", 3)]
    notes = json.loads(report.output)["notes"]
    assert any("3 conversation(s) with a critical user-simulator error: their task verdicts are unreliable" in n for n in notes)


def test_the_cache_answers_a_repeated_review_and_the_cost_cap_stops_then_resumes(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    run_id = stored_run(db)
    fake = server()
    price = ["--price", "judge-a=1000000,0"]  # 10 prompt tokens a call: 10 USD each
    capped = review(db, run_id, fake.base_url, "--concurrency", "1", "--max-cost", "15", "--cache", *price)
    assert capped.exit_code == 1 and "review stopped: cost cap of 15.0 reached" in capped.output
    assert rows(db, "select count(*) from reviews") == [(2,)]  # the second call went over the cap; the third was never sent
    assert len(fake.completions) == 2
    still = review(db, run_id, fake.base_url, "--max-cost", "15", "--cache", *price)
    assert still.exit_code == 1 and len(fake.completions) == 2  # the cap counts what earlier reviews of the run spent
    done = review(db, run_id, fake.base_url, "--cache", *price)
    assert done.exit_code == 0 and "reviewed 1 of 3" in done.output
    redo = review(db, run_id, fake.base_url, "--cache", "--redo", *price)
    assert "reviewed 3 of 3" in redo.output and len(fake.completions) == 3  # all three answered from the cache
    assert rows(db, "select cached, count(*) from llm_calls where arm = 'review' group by cached") == [(0, 3), (1, 3)]


def test_an_unknown_run_and_a_missing_model_are_one_clean_error(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    stored_run(db)
    unknown = review(db, "nope", server().base_url)
    assert unknown.exit_code == 1 and "no run 'nope'" in unknown.output
    no_model = CliRunner().invoke(bench_cli(["review"]), ["review", "nope", "--db", str(db)])
    assert no_model.exit_code == 1 and "no model for the reviewer role 'reviewer': give --reviewer-model NAME" in no_model.output


def test_a_killed_review_resumes_where_it_stopped(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    run_id = stored_run(db)
    third = threading.Event()

    def slow_third(body: dict[str, Any]) -> Reply:
        if len(fake.completions) >= 3:
            third.wait(timeout=60)  # held until the process asking for it is killed
        return reviewer(body)

    fake = server(slow_third)
    bench = Path(sys.executable).with_name("bench")
    process = subprocess.Popen(
        [str(bench), "review", run_id, "--db", str(db), "--reviewer-model", "judge-a", "--reviewer-base-url", fake.base_url, "--concurrency", "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        for _ in range(600):  # until the third request has arrived: the first two reviews are stored by then
            if len(fake.completions) >= 3:
                break
            time.sleep(0.05)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    finally:
        third.set()
        if process.poll() is None:
            process.kill()
    assert rows(db, "select count(*) from reviews") == [(2,)]

    resumed = review(db, run_id, fake.base_url)

    assert resumed.exit_code == 0 and "reviewed 1 of 3" in resumed.output and "2 review(s) already stored" in resumed.output
    assert rows(db, "select count(*), count(distinct conversation_id) from reviews") == [(3, 3)]
    assert rows(db, "select count(*) from review_findings") == [(3,)]
    assert len(fake.completions) == 4  # two before the kill, the one it was waiting for, and the one left


def test_refused_credentials_stop_the_review_before_the_first_conversation(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    run_id = stored_run(db)
    fake = server(api_key="sk-right")
    result = review(db, run_id, fake.base_url, "--reviewer-api-key-env", "REVIEW_KEY_FOR_TEST")
    assert result.exit_code == 1 and "Error:" in result.output and not fake.completions
    assert rows(db, "select count(*) from reviews") == [(0,)]


def test_repeated_errors_are_one_line_with_their_count(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    run_id = stored_run(db)
    fake = server(lambda body: Reply.text("no review today"))

    result = review(db, run_id, fake.base_url)

    assert result.exit_code == 1 and "3 review(s) failed" in result.output
    failed = [line for line in result.output.splitlines() if line.startswith("  failed: ")]
    assert len(failed) == 1, result.output
    assert failed[0].startswith("  failed: ReviewReplyError: $: not a JSON object") and "(3 reviews, e.g. " in failed[0]


def test_task_id_and_limit_choose_the_conversations(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    run_id = stored_run(db)
    fake = server()

    one_task = review(db, run_id, fake.base_url, "--task-id", "upgrade_by_email")
    assert one_task.exit_code == 0 and "reviewed 1 of 1 conversation(s)" in one_task.output
    assert rows(db, "select c.task_id from reviews r join conversations c on c.id = r.conversation_id") == [("upgrade_by_email",)]

    limited = review(db, run_id, fake.base_url, "--limit", "1")
    assert limited.exit_code == 0 and "reviewed 1 of 3 conversation(s)" in limited.output and "1 review(s) already stored" in limited.output
    assert rows(db, "select count(*) from reviews") == [(2,)]

    unknown = review(db, run_id, fake.base_url, "--task-id", "no_such_task")
    assert unknown.exit_code == 1 and "no scored conversation of task 'no_such_task'" in unknown.output


def test_a_critical_user_error_found_by_the_review_sets_the_attribution(tmp_path: Path, server: Servers) -> None:
    db = tmp_path / "r.db"
    run_id = stored_run(db)
    before = rows(db, "select attribution, json_extract(attribution_evidence, '$.rule') from conversations")
    assert before == [("agent", "default")] * 3  # do-nothing: no rule blames anyone else

    blamed = review(db, run_id, server(user_blamer).base_url)

    assert blamed.exit_code == 0 and "attribution: 3 failed conversation(s) relabelled" in blamed.output
    labelled = rows(db, "select attribution, attribution_evidence from conversations")
    assert {label for label, _ in labelled} == {"user-simulator"}
    evidence = json.loads(labelled[0][1])
    assert evidence["source"] == "review" and evidence["rule"] == "review:invented_detail"
    assert "gave an email the scenario lacks" in evidence["evidence"]
    report = json.loads(CliRunner().invoke(bench_cli([]), ["report", run_id, "--db", str(db), "--format", "json"]).output)
    assert report["attribution"]["counts"]["user-simulator"] == 3 and report["attribution"]["tasks_dropped"] == 3

    # a new review that finds no user error gives the conversations back to the agent
    cleared = review(db, run_id, server().base_url, "--redo")
    assert cleared.exit_code == 0
    assert rows(db, "select distinct attribution, json_extract(attribution_evidence, '$.source') from conversations") == [("agent", "review")]
