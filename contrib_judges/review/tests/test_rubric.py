"""The rubric: what the reviewer reads, and the strict reading of its reply (every way a reply can fail names its path)."""

from __future__ import annotations

import json

import pytest
from bench_review import AGENT_CATEGORIES, USER_CATEGORIES, ReviewReplyError, parse_review
from bench_review.rubric import MAX_TOOL_RESULT, Turn, system_prompt, transcript, user_prompt

TURNS = [0, 1, 2, 3, 4]


def finding(category: str = "policy_violation", turn: int = 2, severity: str = "minor", reason: str = "no confirmation") -> dict:
    return {"category": category, "turn": turn, "severity": severity, "reason": reason}


def reply(agent: list | None = None, user: list | None = None, summary: str = "ok", **extra: object) -> str:
    return json.dumps({"agent_errors": agent or [], "user_errors": user or [], "summary": summary, **extra})


def test_a_review_in_the_rubric_form_is_read_with_every_finding() -> None:
    text = reply([finding()], [finding("invented_detail", 1, "critical", "gave a made-up order id")], "the agent skipped a step")
    review = parse_review(text, "full", TURNS)
    assert [(f.side, f.category, f.turn, f.severity) for f in review.findings] == [
        ("agent", "policy_violation", 2, "minor"),
        ("user", "invented_detail", 1, "critical"),
    ]
    assert review.summary == "the agent skipped a step" and review.unreliable  # a critical user error
    assert not parse_review(reply([finding(severity="critical")]), "full", TURNS).unreliable  # an agent's does not count


def test_one_json_fence_around_the_object_is_accepted() -> None:
    assert parse_review("```json\n" + reply() + "\n```", "full", TURNS).findings == ()


def test_the_user_only_form_has_no_agent_errors() -> None:
    text = json.dumps({"user_errors": [finding("early_stop", 3, "critical", "stopped before the refund")], "summary": "x"})
    assert parse_review(text, "user-only", TURNS).unreliable
    with pytest.raises(ReviewReplyError, match=r"\$: unexpected agent_errors"):
        parse_review(reply(), "user-only", TURNS)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("Sure! Here is my review: {}", r"\$: not a JSON object"),
        ("", r"\$: not a JSON object"),
        (reply() + "\nThat is all.", r"\$: not a JSON object"),
        ("[]", r"\$: expected an object"),
        (json.dumps({"agent_errors": [], "summary": "x"}), r"\$: missing user_errors"),
        (reply(verdict="pass"), r"\$: unexpected verdict"),
        (reply(summary=None), r"\$.summary: expected a string"),  # type: ignore[arg-type]
        (json.dumps({"agent_errors": {}, "user_errors": [], "summary": ""}), r"\$.agent_errors: expected a list"),
        (reply([finding("rudeness")]), r"\$.agent_errors\[0\].category: 'rudeness' is not a category of agent errors"),
        (reply([], [finding("policy_violation")]), r"\$.user_errors\[0\].category: 'policy_violation' is not a category of user"),
        (reply([finding(turn=9)]), r"\$.agent_errors\[0\].turn: '9' is not a turn of the transcript \(0..4\)"),
        (reply([finding(turn="2")]), r"\.turn: '2' is not a turn"),  # type: ignore[arg-type]
        (reply([finding(turn=True)]), r"\.turn: 'true' is not a turn"),  # type: ignore[arg-type]
        (reply([finding(severity="major")]), r"\.severity: 'major' is not one of minor, critical"),
        (reply([finding(reason=" ")]), r"\.reason: expected a sentence"),
        (reply([finding(reason="x" * 401)]), r"\.reason: expected a sentence of 1 to 400"),
        (reply([{**finding(), "confidence": 0.9}]), r"\$.agent_errors\[0\]: unexpected confidence"),
    ],
)
def test_a_reply_that_is_not_a_review_is_an_error_naming_its_path(text: str, says: str) -> None:
    with pytest.raises(ReviewReplyError, match=says):
        parse_review(text, "full", TURNS)


def test_the_prompts_list_every_category_and_number_every_turn() -> None:
    full, user_only = system_prompt("full"), system_prompt("user-only")
    assert all(name in full for name in [*AGENT_CATEGORIES, *USER_CATEGORIES])
    assert all(name in user_only for name in USER_CATEGORIES) and "policy_violation" not in user_only
    turns = [
        Turn(turn=0, role="assistant", content="Hi"),
        Turn(turn=1, role="user", content="Upgrade me"),
        Turn(turn=2, role="assistant", content=None, tool_calls=(("upgrade", '{"plan": "gold"}'),)),
        Turn(turn=3, role="tool", content="x" * (MAX_TOOL_RESULT + 5), requestor="assistant", error=True),
    ]
    text = transcript(turns)
    assert '[0] agent: Hi\n[1] customer: Upgrade me\n[2] agent calls upgrade({"plan": "gold"})' in text
    assert "[3] result of the agent's tool call (error): " in text and "(5 more characters not shown)" in text
    asked = user_prompt("full", scenario="S", policy="P", reference="R", verdict="V", turns=turns)
    assert asked.index("# Policy") < asked.index("# Customer scenario") < asked.index("# Reference") < asked.index("# Transcript")
    only = user_prompt("user-only", scenario="S", policy="P", reference="R", verdict="V", turns=turns)
    assert "# Policy" not in only and "# Reference" not in only and "# Customer scenario\nS" in only
