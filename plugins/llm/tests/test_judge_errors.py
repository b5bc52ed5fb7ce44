"""Judges that cannot pass by accident (docs/judges.md), through a real OpenAI-protocol server on 127.0.0.1.

An LLM agent, an LLM user and llm-judge all talk to FakeOpenAIServer (one model name each), so every request each
role sends is counted: a failed judgment is asked again without replaying the conversation, in the run and on resume.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench_kernel import DomainData, ModelConfig, RunConfig, Store, build_report, get_plugin_manager, run, run_registry
from bench_kernel.testing import FakeOpenAIServer, Reply

TASK = "upgrade_by_email"
ASSERTIONS = ["The agent greets the customer.", "The agent says the plan's name: 'Fiber 1000'."]
MODELS = {"agent": "agent-model", "user": "user-model", "judge": "judge-model"}


@pytest.fixture
def nl_only_tasks(data: DomainData, tmp_path: Path) -> str:
    """The mock task scored on its two NL assertions alone (so the judge decides the reward)."""
    tasks = json.loads((Path(data.source) / "tasks.json").read_text())
    task = next(t for t in tasks if t["id"] == TASK)
    task["evaluation_criteria"]["nl_assertions"] = ASSERTIONS
    task["evaluation_criteria"]["reward_basis"] = ["NL_ASSERTION"]
    path = tmp_path / "nl_tasks.json"
    path.write_text(json.dumps([task]))
    return str(path)


class World:
    """The agent says one line, the user stops after it, the judge answers from `judge_replies` (then `judge`)."""

    def __init__(self, judge: Callable[[dict[str, Any]], str]) -> None:
        self.judge = judge
        self.judge_replies: list[str] = []

    def __call__(self, body: dict[str, Any]) -> Reply:
        if body["model"] == MODELS["judge"]:
            return Reply.text(self.judge_replies.pop(0) if self.judge_replies else self.judge(body))
        if body["model"] == MODELS["user"]:
            spoke = sum(1 for m in body["messages"] if m["role"] == "user")  # the agent's lines, as the user sees them
            return Reply.text("I want Fiber 1000." if spoke < 2 else "Thanks. ###STOP###")
        return Reply.text("Hello! I can move you to Fiber 1000.")


def verdicts(*met: bool) -> str:
    """bench's reply format: one verdict per statement, by its number."""
    return json.dumps({"verdicts": [{"index": i, "reasoning": f"reason {i}", "met": m} for i, m in enumerate(met, 1)]})


def served(fake_openai_server: Callable[..., FakeOpenAIServer], world: World) -> FakeOpenAIServer:
    pytest.importorskip("bench_openai")
    return fake_openai_server(world, models=list(MODELS.values()))


def play(server: FakeOpenAIServer, db: Path, tasks_file: str, **settings: Any) -> tuple[Store, str]:
    """One conversation of the mock task with llm-fc, llm-user and llm-judge on the fake server (bench-trust labels failures)."""
    plugins = get_plugin_manager(["mock", "llm", "openai", "trust", "judging"])
    models = {role: ModelConfig(backend="openai", model=name, base_url=server.base_url, max_retries=0) for role, name in MODELS.items()}
    config = RunConfig(
        domain="mock",
        plugins=["mock", "llm", "openai"],
        agent="llm-fc",
        user="llm-user",
        judge="llm-judge",
        tasks_file=tasks_file,
        baseline=False,
        models=models,
        **settings,
    )
    summary = run(config, db, plugins=plugins)
    assert summary.status == "complete"
    return Store(db), summary.run_id


def calls(server: FakeOpenAIServer) -> dict[str, int]:
    """Completions received per role."""
    by_model = [body["model"] for body in server.completions]
    return {role: by_model.count(name) for role, name in MODELS.items()}


def stored(store: Store, run_id: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The conversation's row and its NL_ASSERTION component."""
    [row] = store.conversations(run_id)
    info = json.loads(row["reward_info_json"])
    return row, next(c for c in info["components"] if c["component"] == "NL_ASSERTION")


BAD_REPLIES = {
    "empty": "",
    "garbled": '{"verdicts": [{"index": 1, "met": tru',
    "omits an assertion": verdicts(True),
    "met without the id": json.dumps({"verdicts": [{"reasoning": "fine", "met": True}, {"reasoning": "fine", "met": True}]}),
    "duplicate id": json.dumps({"verdicts": [{"index": 1, "met": True}, {"index": 1, "met": True}]}),
    "unknown id": json.dumps({"verdicts": [{"index": 1, "met": True}, {"index": 3, "met": True}]}),
    "met as text": json.dumps({"verdicts": [{"index": 1, "met": "yes"}, {"index": 2, "met": "true"}]}),
    "no verdicts": json.dumps({"all": "met"}),
}


@pytest.mark.parametrize("reply", list(BAD_REPLIES.values()), ids=list(BAD_REPLIES))
def test_a_judge_that_never_answers_in_full_is_a_judge_error_never_a_pass(
    fake_openai_server: Callable[..., FakeOpenAIServer], nl_only_tasks: str, tmp_path: Path, reply: str
) -> None:
    server = served(fake_openai_server, World(lambda body: reply))
    store, run_id = play(server, tmp_path / "r.db", nl_only_tasks)
    row, component = stored(store, run_id)
    assert row["reward"] == 0.0 and row["termination_reason"] == "user_stop"
    assert component["score"] is None and component["error"].startswith("judge error: judge 'llm-judge': ")
    assert "(after 3 attempts)" in component["error"]
    assert calls(server)["judge"] == 3  # the first judgment and --judge-retries' default 2
    values = {v["metric"]: v for v in store.metric_values(run_id)}
    assert values["component.NL_ASSERTION"]["error"] == component["error"]  # what the report lists
    failed = [e for e in store.conversation_events(row["id"]) if e["kind"] == "judge.attempt_failed"]
    assert len(failed) == 3 and len({json.loads(e["data_json"])["seed"] for e in failed}) == 3
    store.close()


def test_a_retry_asks_the_judge_again_with_a_new_seed_and_replays_nothing(
    fake_openai_server: Callable[..., FakeOpenAIServer], nl_only_tasks: str, tmp_path: Path
) -> None:
    world = World(lambda body: verdicts(True, True))
    world.judge_replies = ["", BAD_REPLIES["omits an assertion"]]
    server = served(fake_openai_server, world)
    store, run_id = play(server, tmp_path / "r.db", nl_only_tasks)
    row, component = stored(store, run_id)
    assert row["reward"] == 1.0 and component["error"] is None
    assert component["note"].startswith("judged after 2 failed attempt(s)")
    counted = calls(server)
    assert counted["judge"] == 3
    judged = [b for b in server.completions if b["model"] == MODELS["judge"]]
    assert judged[0]["seed"] == row["seed"] and len({b["seed"] for b in judged}) == 3
    assert all(b["messages"] == judged[0]["messages"] for b in judged)  # the same conversation, judged again
    assert (counted["agent"], counted["user"]) == (1, 2)  # played once: greeting, user, agent, user's stop
    store.close()


def test_a_failed_judgment_is_judged_again_on_resume_without_playing_the_conversation(
    fake_openai_server: Callable[..., FakeOpenAIServer], nl_only_tasks: str, tmp_path: Path
) -> None:
    world = World(lambda body: "no idea")
    server = served(fake_openai_server, world)
    store, run_id = play(server, tmp_path / "r.db", nl_only_tasks)
    row, component = stored(store, run_id)
    store.close()
    assert row["reward"] == 0.0 and component["error"] is not None
    before = calls(server)
    world.judge = lambda body: verdicts(True, True)
    store, again = play(server, tmp_path / "r.db", nl_only_tasks)  # the same command: resumes the run
    assert again == run_id
    after = calls(server)
    assert (after["agent"], after["user"], after["judge"]) == (before["agent"], before["user"], before["judge"] + 1)
    row, component = stored(store, run_id)
    assert row["reward"] == 1.0 and component["error"] is None and component["score"] == 1.0
    values = {v["metric"]: v["value"] for v in store.metric_values(run_id)}
    assert values["reward"] == 1.0 and values["component.NL_ASSERTION"] == 1.0
    kinds = [e["kind"] for e in store.conversation_events(row["id"])]
    assert "judge.rejudged" in kinds
    resumed = store.last_run_event(run_id, ("run.resumed",))
    assert resumed is not None and resumed["rejudged"] == 1
    assert row["attribution"] is None  # it passed once judged: the judge fault it carried is gone
    store.close()


def test_retry_attributed_judge_judges_a_doubted_verdict_again_and_plays_nothing(
    fake_openai_server: Callable[..., FakeOpenAIServer], nl_only_tasks: str, tmp_path: Path
) -> None:
    doubted = json.dumps(
        {
            "verdicts": [
                {"index": 1, "reasoning": "The agent greeted the customer correctly.", "met": False},
                {"index": 2, "reasoning": "It names the plan.", "met": True},
            ]
        }
    )
    world = World(lambda body: doubted)
    server = served(fake_openai_server, world)
    store, run_id = play(server, tmp_path / "r.db", nl_only_tasks)
    row, _ = stored(store, run_id)
    store.close()
    assert row["reward"] == 0.0 and row["attribution"] == "judge"
    assert json.loads(row["attribution_evidence"])["rule"] == "inconsistent_verdict"
    before = calls(server)
    world.judge = lambda body: verdicts(True, True)
    store, again = play(server, tmp_path / "r.db", nl_only_tasks, retry_attributed=["judge"])
    assert again == run_id
    after = calls(server)
    assert (after["agent"], after["user"], after["judge"]) == (before["agent"], before["user"], before["judge"] + 1)
    judged = [b for b in server.completions if b["model"] == MODELS["judge"]]
    assert judged[-1]["seed"] != row["seed"]  # asked again, not answered from the cache
    [current] = store.conversations(run_id, include_superseded=True)  # judged in place: no replay row
    assert current["reward"] == 1.0 and current["attribution"] is None
    store.close()


def test_a_panel_keeps_the_majority_and_stores_its_agreement(
    fake_openai_server: Callable[..., FakeOpenAIServer], nl_only_tasks: str, tmp_path: Path
) -> None:
    world = World(lambda body: verdicts(True, True))
    world.judge_replies = [verdicts(True, False), verdicts(True, True), verdicts(True, False)]
    server = served(fake_openai_server, world)
    store, run_id = play(server, tmp_path / "r.db", nl_only_tasks, judge_panel=3)
    row, component = stored(store, run_id)
    assert [c["met"] for c in component["checks"]] == [True, False]
    assert component["checks"][1]["detail"].startswith("panel: 1 of 3 met; ")
    assert row["reward"] == 0.0 and "panel of 3: agreement 0.833" in component["note"]
    judged = [b for b in server.completions if b["model"] == MODELS["judge"]]
    assert len(judged) == 3 and len({b["seed"] for b in judged}) == 3
    [agreement] = [v for v in store.metric_values(run_id) if v["metric"] == "judge.agreement"]
    details = json.loads(agreement["details_json"])
    assert agreement["value"] == pytest.approx(5 / 6, abs=1e-6)
    assert [a["votes"] for a in details["assertions"]] == [[True, True, True], [False, True, False]]
    assert [a["agreement"] for a in details["assertions"]] == pytest.approx([1.0, 2 / 3])
    report = build_report(store, run_id)
    assert report.metrics["judging:judge.agreement"]["value"] == pytest.approx(5 / 6, abs=1e-6)  # bench-judging's metric
    store.close()


def test_a_panel_changes_the_run_id_and_retries_do_not(nl_only_tasks: str) -> None:
    base = RunConfig(domain="mock", judge="llm-judge", tasks_file=nl_only_tasks)
    assert RunConfig(domain="mock", judge="llm-judge", tasks_file=nl_only_tasks, judge_retries=5).config_hash() == base.config_hash()
    assert "judge_panel" not in base.identity()
    assert RunConfig(domain="mock", judge="llm-judge", tasks_file=nl_only_tasks, judge_panel=3).config_hash() != base.config_hash()


def test_a_pass_on_a_verdict_its_justification_contradicts_is_reported_as_doubtful(
    fake_openai_server: Callable[..., FakeOpenAIServer], nl_only_tasks: str, tmp_path: Path
) -> None:
    contradicted = json.dumps(
        {
            "verdicts": [
                {"index": 1, "reasoning": "The agent did not greet the customer.", "met": True},
                {"index": 2, "reasoning": "It names the plan.", "met": True},
            ]
        }
    )
    server = served(fake_openai_server, World(lambda body: contradicted))
    store, run_id = play(server, tmp_path / "r.db", nl_only_tasks)
    row, _ = stored(store, run_id)
    assert row["reward"] == 1.0 and row["attribution"] is None  # the judge's verdict stands: bench does not overrule it
    card = build_report(store, run_id, run_registry(store.run(run_id))[0]).card("attribution")
    assert card["doubtful_passes"] == 1 and card["doubtful_examples"] == [row["id"]]
    store.close()
