"""The per-message labels behind the judge-based counters: rules, a judge's reply, and agreement between two labelers."""

from __future__ import annotations

import json

import pytest
from bench_mmtap.counts import count
from bench_mmtap.labels import agreement, kappa, parse_labels, rules_labels
from bench_mmtap.metric import ratio

from bench_kernel import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage

CONVERSATION: list[Message] = [
    AssistantMessage(content="Hi! How can I help you today?"),
    UserMessage(content="Please suspend my line, number 612 555 0142."),
    AssistantMessage(content="Sorry, could you repeat the number?"),
    UserMessage(content="Suspend my line please, number 612 555 0142."),
    AssistantMessage(content="Shall I suspend line 612-555-0142 now?"),
    UserMessage(content="Yes, go ahead."),
    AssistantMessage(tool_calls=[ToolCall(id="a", name="suspend_line", arguments={"phone": "612-555-0142"})]),
    ToolMessage(id="a", content="ok"),
    AssistantMessage(content="Done."),
]


def test_the_rules_label_every_message_with_text() -> None:
    labels = rules_labels(CONVERSATION)
    assert sorted(labels) == [0, 1, 2, 3, 4, 5, 8]
    assert labels[2] == {"asks_repeat": True, "asks_confirmation": False, "redundant": False}
    assert labels[3] == {"restates": True, "agrees": False}
    assert labels[4]["asks_confirmation"] and labels[5]["agrees"]


def test_a_judges_labels_replace_the_rules_in_the_counters() -> None:
    mutating = {"suspend_line"}
    by_rules = count(CONVERSATION, [], mutating).as_dict()
    judged = rules_labels(CONVERSATION)
    judged[5] = {"restates": False, "agrees": False}  # the judge hears no agreement: the call was not confirmed
    judged[2] = {"asks_repeat": False, "asks_confirmation": False, "redundant": False}
    by_judge = count(CONVERSATION, [], mutating, judged).as_dict()
    assert ratio(by_rules, "IAS") == 1.0 and ratio(by_judge, "IAS") == 0.0
    assert (by_rules["clarifications_asked"], by_judge["clarifications_asked"]) == (1, 0)
    assert ratio(by_rules, "TE") == pytest.approx(4 / 5) and ratio(by_judge, "TE") == 1.0


def reply(labels: dict[int, dict[str, object]]) -> str:
    return json.dumps({"labels": [{"index": i, **v} for i, v in labels.items()]})


def test_a_judges_reply_is_read_tolerantly() -> None:
    wanted = rules_labels(CONVERSATION)
    loose = {i: {k: ("yes" if v else "no") for k, v in values.items()} for i, values in wanted.items()}
    text = "```json\n" + reply(loose).replace('"index": 2', '"index": "2"') + "\n```"
    assert parse_labels(text, CONVERSATION) == wanted


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("I think they all look fine.", "no 'labels' list"),
        ('{"labels": [', "not JSON"),
        (reply({0: {"asks_repeat": False, "asks_confirmation": False, "redundant": False}}), "without labels"),
        (
            reply({i: {"asks_repeat": "maybe", "asks_confirmation": 0, "redundant": 0, "restates": 0, "agrees": 0} for i in (0, 1, 2, 3, 4, 5, 8)}),
            "'asks_repeat' of message 0 is 'maybe'",
        ),
    ],
)
def test_a_reply_that_is_not_labels_is_an_error_saying_why(text: str, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        parse_labels(text, CONVERSATION)


def test_agreement_tables_and_kappa() -> None:
    first = {0: {"asks_repeat": True}, 1: {"asks_repeat": False}, 2: {"asks_repeat": True}, 3: {"agrees": True}}
    second = {0: {"asks_repeat": True}, 1: {"asks_repeat": True}, 2: {"asks_repeat": True}, 4: {"agrees": True}}
    table = agreement(first, second)
    assert table["asks_repeat"] == {"yes_yes": 2, "yes_no": 0, "no_yes": 1, "no_no": 0}
    assert sum(table["agrees"].values()) == 0  # message 3 and 4 were labelled by one side only
    # 50 verdicts: observed 0.7, chance 0.5*0.6 + 0.5*0.4 = 0.5, kappa (0.7 - 0.5) / 0.5 = 0.4
    observed, k = kappa({"yes_yes": 20, "yes_no": 5, "no_yes": 10, "no_no": 15})
    assert observed == pytest.approx(0.7) and k == pytest.approx(0.4)


def test_kappa_degenerate_cases() -> None:
    assert kappa({"yes_yes": 0, "yes_no": 0, "no_yes": 0, "no_no": 0}) == (None, None)
    assert kappa({"yes_yes": 0, "yes_no": 0, "no_yes": 0, "no_no": 7}) == (1.0, None)  # one verdict only: chance is 1
    assert kappa({"yes_yes": 0, "yes_no": 3, "no_yes": 3, "no_no": 0}) == (0.0, pytest.approx(-1.0))
