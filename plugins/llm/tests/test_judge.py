"""llm-judge: verdicts decide NL_ASSERTION; replies it cannot read are recorded on the component."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from bench_llm.judge import judge_request, judge_transcript, read_verdicts, transcript
from bench_llm.prompts import judge_statements
from bench_llm.testing import text_reply

from bench_kernel import (
    AssistantMessage,
    ChatRequest,
    ChatResponse,
    ConfigError,
    DomainData,
    JudgeRequest,
    JudgeStyle,
    ModelResponseError,
    Task,
    ToolCall,
    ToolMessage,
    UserMessage,
    UserScenario,
    load_profile,
)

TASK = Task(id="t", user_scenario=UserScenario(instructions="x"))
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


@pytest.mark.parametrize(("met", "fenced", "reward"), [((True, True), False, 1.0), ((True, False), False, 0.0), ((True, True), True, 1.0)])
def test_verdicts_decide_the_nl_component(run_bench, nl_tasks: str, met: tuple[bool, ...], fenced: bool, reward: float) -> None:
    out = run_bench({"judge": verdicts(*met, fenced=fenced)}, agent="oracle", judge="llm-judge", tasks_file=nl_tasks)
    assert out.conversation("upgrade_by_email")["reward"] == reward
    component = out.component("upgrade_by_email", "NL_ASSERTION")
    assert component["error"] is None
    assert [(c["subject"], c["met"], c["detail"]) for c in component["checks"]] == [
        (ASSERTIONS[0], met[0], "reason 1"),
        (ASSERTIONS[1], met[1], "reason 2"),
    ]


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
    assert component["score"] is None and component["error"].startswith("judge error: judge 'llm-judge': ModelResponseError")


def test_without_a_judge_model_the_run_is_refused(run_bench, nl_tasks: str) -> None:
    with pytest.raises(ConfigError, match="--judge-model"):
        run_bench({}, agent="oracle", judge="llm-judge", tasks_file=nl_tasks)


def test_read_verdicts_finds_each_verdict_by_its_statement_number() -> None:
    bare_list = json.dumps([{"index": 2, "met": True}, {"index": 1, "met": False, "reasoning": "a"}])
    assert [(c.subject, c.met, c.detail) for c in read_verdicts(bare_list, ["x", "y"])] == [("x", False, "a"), ("y", True, "")]
    tau2_keys = json.dumps({"results": [{"index": 1, "metExpectation": True}]})
    assert [c.met for c in read_verdicts(tau2_keys, ["x"])] == [True]


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ({"results": [{"met": True}, {"met": False}]}, "names no statement number"),
        ({"verdicts": [{"index": 1, "met": True}]}, r"no verdict for statement\(s\) \[2\]"),
        ({"verdicts": [{"index": 1, "met": True}, {"index": 1, "met": False}]}, "two verdicts for statement 1"),
        ({"verdicts": [{"index": 1, "met": True}, {"index": 5, "met": False}]}, "statement 5, which does not exist"),
        ({"verdicts": [{"index": "1", "met": True}, {"index": 2, "met": True}]}, "names no statement number"),
        ({"verdicts": [{"index": 1, "met": "yes"}, {"index": 2, "met": True}]}, 'no true/false "met"'),
    ],
)
def test_read_verdicts_refuses_a_verdict_it_cannot_tie_to_one_statement(reply: dict, problem: str) -> None:
    with pytest.raises(ModelResponseError, match=problem):
        read_verdicts(json.dumps(reply), ["x", "y"])


ECHO = JudgeStyle(verdicts="echo", statements="python_list")


def test_echoed_verdicts_are_matched_to_statements_by_normalised_text() -> None:
    statements = ["Agent should tell the user it's $8.", 'Agent says "done".', "Agent says done"]
    reply = {
        "results": [
            {"expectedOutcome": "agent says DONE", "reasoning": "r3", "metExpectation": False},
            {"expectedOutcome": "  Agent should tell   the user it\u2019s $8", "reasoning": "r1", "metExpectation": True},
            {"expectedOutcome": "Agent says 'done'.", "reasoning": "r2", "metExpectation": True},
        ]
    }
    checks = read_verdicts(json.dumps(reply), statements, ECHO)
    # identical statements (after normalising) take their verdicts in order
    assert [(c.subject, c.met, c.detail) for c in checks] == [(statements[0], True, "r1"), (statements[1], False, "r3"), (statements[2], True, "r2")]


@pytest.mark.parametrize(
    ("results", "problem"),
    [
        ([{"reasoning": "r", "metExpectation": True}], "does not repeat its statement"),
        ([{"expectedOutcome": "x", "metExpectation": True}, {"expectedOutcome": "X.", "metExpectation": True}], "two verdicts for"),
        ([{"expectedOutcome": "z", "metExpectation": True}], "a verdict for an unknown statement"),
        ([{"expectedOutcome": "x", "metExpectation": True}], r"no verdict for statement\(s\) \[2\]"),
        ([{"expectedOutcome": "x", "metExpectation": 1}, {"expectedOutcome": "y", "metExpectation": True}], 'no true/false "met"'),
    ],
)
def test_echoed_verdicts_must_each_name_one_statement_once(results: list, problem: str) -> None:
    with pytest.raises(ModelResponseError, match=problem):
        read_verdicts(json.dumps({"results": results}), ["x", "y"], ECHO)


def test_read_verdicts_accepts_raw_newlines_in_strings() -> None:
    reply = '{"verdicts": [{"index": 1, "reasoning": "The agent said:\n\tdone", "met": true}]}'
    assert "\n" in reply  # a raw newline inside a JSON string: strict JSON refuses it
    assert [(c.met, c.detail) for c in read_verdicts(reply, ["x"])] == [(True, "The agent said:\n\tdone")]


@pytest.mark.parametrize("reply", [None, "", "  \n", "[1, 2]", '{"verdicts": "all good"}', '{"verdicts": [{"index": 1, "met": "maybe"}]}'])
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


def test_a_profile_can_show_the_transcript_one_line_per_message(tmp_path: Path) -> None:
    directory = tmp_path / "profile"
    (directory / "texts").mkdir(parents=True)
    (directory / "profile.toml").write_text(
        'format = 1\nname = "lines"\n[judge]\ntranscript = "lines"\n'
        'statements = "python_list"\nverdicts = "echo"\nno_content = "(none)"\n'
        "response_format = false\nseed = false\n"
    )
    (directory / "texts" / "judge_line.md").write_text("<{{role}}> {{content}}")
    profile = load_profile(directory)
    messages = [
        AssistantMessage(content="Hi!\nHow can I help?"),
        AssistantMessage(tool_calls=[ToolCall(id="a1", name="get_customer", arguments={})]),
        ToolMessage(id="a1", content="{}"),
        UserMessage(content="Bye"),
    ]
    assert judge_transcript(profile, messages) == "<assistant> Hi!\nHow can I help?\n<assistant> (none)\n<tool> {}\n<user> Bye"
    assert judge_statements(profile, ["it's", 'a "b"']) == repr(["it's", 'a "b"'])
    first = judge_request(JudgeRequest(task=TASK, messages=messages, assertions=["x"], seed=7, profile=profile))
    assert (first.seed, first.response_format) == (None, None)  # as the profile's judge sends it
    retry = judge_request(JudgeRequest(task=TASK, messages=messages, assertions=["x"], seed=9, profile=profile, attempt=1))
    assert retry.seed == 9  # a retry always carries its own seed: never the same request twice
    assert load_profile(None).sha256 != profile.sha256
