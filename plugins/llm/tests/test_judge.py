"""llm-judge: verdicts decide NL_ASSERTION; replies it cannot read are recorded on the component."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from bench_llm.judge import read_verdicts, transcript
from bench_llm.testing import text_reply

from bench_kernel import (
    AssistantMessage,
    ChatRequest,
    ChatResponse,
    ConfigError,
    DomainData,
    ModelResponseError,
    ToolCall,
    ToolMessage,
    UserMessage,
)

ASSERTIONS = ["The agent moves the customer to the Fiber 1000 plan.", "The agent is polite."]


@pytest.fixture
def nl_tasks(data: DomainData, tmp_path: Path) -> str:
    """A task file with one task scored on DB and two NL assertions."""
    tasks = json.loads((Path(data.source) / "tasks.json").read_text())
    task = next(t for t in tasks if t["id"] == "upgrade_by_email")
    task["evaluation_criteria"]["nl_assertions"] = ASSERTIONS
    task["evaluation_criteria"]["reward_basis"] = ["DB", "NL_ASSERTION"]
    path = tmp_path / "nl_tasks.json"
    path.write_text(json.dumps([task]))
    return str(path)


def verdicts(*met: bool, fenced: bool = False) -> Callable[[ChatRequest], ChatResponse]:
    """A judge model answering with these verdicts (numbered, in reverse order to test matching by index)."""
    entries = [{"index": i, "reasoning": f"reason {i}", "met": m} for i, m in enumerate(met, 1)]
    body = json.dumps({"verdicts": entries[::-1]})
    return lambda request: text_reply(f"Here you go:\n```json\n{body}\n```" if fenced else body)


@pytest.mark.parametrize(("met", "fenced", "reward"), [
    ((True, True), False, 1.0), ((True, False), False, 0.0), ((True, True), True, 1.0)])
def test_verdicts_decide_the_nl_component(run_bench, nl_tasks: str, met: tuple[bool, ...], fenced: bool, reward: float) -> None:
    out = run_bench({"judge": verdicts(*met, fenced=fenced)}, agent="oracle", judge="llm-judge", tasks_file=nl_tasks)
    assert out.conversation("upgrade_by_email")["reward"] == reward
    component = out.component("upgrade_by_email", "NL_ASSERTION")
    assert component["error"] is None
    assert [(c["subject"], c["met"], c["detail"]) for c in component["checks"]] == [
        (ASSERTIONS[0], met[0], "reason 1"), (ASSERTIONS[1], met[1], "reason 2")]


def test_the_judge_gets_the_transcript_and_numbered_statements(run_bench, nl_tasks: str) -> None:
    out = run_bench({"judge": verdicts(True, True)}, agent="oracle", judge="llm-judge", tasks_file=nl_tasks)
    (request,) = out.requests("judge")
    assert request.response_format == {"type": "json_object"}
    assert request.seed == out.conversation("upgrade_by_email")["seed"]
    system, question = request.messages
    assert system["role"] == "system" and '"verdicts"' in system["content"]
    assert f"1. {ASSERTIONS[0]}\n2. {ASSERTIONS[1]}" in question["content"]
    assert 'agent calls change_plan({"customer_id": "C-1001", "plan_id": "fiber-1000"})' in question["content"]
    assert "customer: Thank you, that is all. ###STOP###" in question["content"]


@pytest.mark.parametrize("reply", ["I think the agent did well.", '{"verdicts": [{"index": 1, "reasoning": "ok", "met": true}]}'])
def test_an_unreadable_or_partial_reply_is_a_component_error(run_bench, nl_tasks: str, reply: str) -> None:
    out = run_bench({"judge": lambda r: text_reply(reply)}, agent="oracle", judge="llm-judge", tasks_file=nl_tasks)
    row = out.conversation("upgrade_by_email")
    assert (row["termination_reason"], row["reward"]) == ("user_stop", 0.0)
    component = out.component("upgrade_by_email", "NL_ASSERTION")
    assert component["score"] is None and component["error"].startswith("llm-judge: ModelResponseError")


def test_without_a_judge_model_the_run_is_refused(run_bench, nl_tasks: str) -> None:
    with pytest.raises(ConfigError, match="--judge-model"):
        run_bench({}, agent="oracle", judge="llm-judge", tasks_file=nl_tasks)


def test_read_verdicts_is_lenient_about_form() -> None:
    unnumbered = json.dumps({"results": [{"met": "yes", "reasoning": "a"}, {"metExpectation": False}]})
    assert [(c.met, c.detail) for c in read_verdicts(unnumbered, ["x", "y"])] == [(True, "a"), (False, "")]
    bare_list = json.dumps([{"index": 2, "met": True}, {"index": 1, "met": False}])
    assert [c.met for c in read_verdicts(bare_list, ["x", "y"])] == [False, True]


def test_read_verdicts_accepts_raw_newlines_in_strings() -> None:
    reply = '{"verdicts": [{"index": 1, "reasoning": "The agent said:\n\tdone", "met": true}]}'
    assert "\n" in reply  # a raw newline inside a JSON string: strict JSON refuses it
    assert [(c.met, c.detail) for c in read_verdicts(reply, ["x"])] == [(True, "The agent said:\n\tdone")]


@pytest.mark.parametrize("reply", [
    None, "", "[1, 2]", '{"verdicts": "all good"}', '{"verdicts": [{"index": 1, "met": "maybe"}]}'])
def test_read_verdicts_refuses_what_it_cannot_read(reply: str | None) -> None:
    with pytest.raises(ModelResponseError):
        read_verdicts(reply, ["x"])


def test_transcript_shows_both_sides_and_their_tools() -> None:
    messages = [
        AssistantMessage(content="Hi!"),
        UserMessage(tool_calls=[ToolCall(id="u1", name="restart_router", requestor="user")]),
        ToolMessage(id="u1", content="The light is green.", requestor="user"),
        AssistantMessage(tool_calls=[ToolCall(id="a1", name="get_customer", arguments={"customer_id": "C-9"})]),
        ToolMessage(id="a1", content="Error: No customer with id 'C-9'.", error=True),
    ]
    assert transcript(messages).splitlines() == [
        "agent: Hi!",
        "customer calls restart_router({})",
        "tool result for the customer: The light is green.",
        'agent calls get_customer({"customer_id": "C-9"})',
        "tool result for the agent (error): Error: No customer with id 'C-9'.",
    ]
