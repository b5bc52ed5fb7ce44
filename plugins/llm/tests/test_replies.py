"""The text agents' reply parser, on replies written the way models write them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from bench_llm.agents import action_text, parse_action
from bench_llm.replies import read_reply

from bench_kernel import ModelResponseError


def test_a_code_fence_inside_the_json_string_is_part_of_the_string() -> None:
    text = (
        'Thought: give the steps\nAction: {"name": "respond", "arguments": {"content": '
        '"Run this:\\n```bash\\nsudo reboot\\n```\\nThen tell me what you see."}}'
    )
    assert parse_action(text) == ("respond", {"content": "Run this:\n```bash\nsudo reboot\n```\nThen tell me what you see."})


def test_a_fenced_action_whose_string_holds_a_fence() -> None:
    text = 'Action:\n```json\n{"name": "respond", "arguments": {"content": "Type ```ls``` please"}}\n```\n'
    reading = read_reply(text)
    assert reading.action is not None and reading.action.arguments == {"content": "Type ```ls``` please"}
    assert reading.action.end == len(text.rstrip())


def test_raw_newlines_and_tabs_inside_json_strings_are_read() -> None:
    text = 'Thought: long answer\nAction: {"name": "respond", "arguments": {"content": "Dear Ada,\n\tyour plan\nis active."}}'
    assert parse_action(text) == ("respond", {"content": "Dear Ada,\n\tyour plan\nis active."})


def test_a_missing_final_brace_completes_the_outer_object_never_an_inner_one() -> None:
    text = 'Thought: update it\nAction: {"name": "update_profile", "arguments": {"name": "Bob Smith"}'
    reading = read_reply(text)
    assert reading.action is not None and (reading.action.name, reading.action.arguments) == ("update_profile", {"name": "Bob Smith"})
    assert reading.action.repaired


def test_a_missing_brace_followed_by_prose_is_completed_too() -> None:
    text = 'Action: {"name": "get_customer", "arguments": {"customer_id": "C-1"}\nI hope that helps.'
    assert parse_action(text) == ("get_customer", {"customer_id": "C-1"})


def test_a_reply_cut_by_the_token_limit_is_not_completed() -> None:
    text = 'Action: {"name": "update_profile", "arguments": {"name": "Bob Smith"}'
    reading = read_reply(text, truncated=True)
    assert reading.action is None and reading.error == "the action is not valid JSON"


def test_an_open_string_is_never_completed() -> None:
    with pytest.raises(ModelResponseError, match="not valid JSON"):
        parse_action('Action: {"name": "respond", "arguments": {"content": "I was cut')


def test_a_draft_action_inside_think_never_runs() -> None:
    text = (
        '<think>\nThe customer wants to cancel.\nAction: {"name": "cancel_order", "arguments": {"order_id": "#W1"}}\n'
        "No: the policy says to look the order up first.\n</think>\n"
        'Thought: look the order up first.\nAction: {"name": "get_order_details", "arguments": {"order_id": "#W1"}}'
    )
    reading = read_reply(text)
    assert reading.action is not None and reading.action.name == "get_order_details"
    assert reading.drafts == 1 and reading.dropped == ()


def test_a_think_block_whose_opening_tag_the_template_ate() -> None:
    text = (
        'Draft: Action: {"name": "a", "arguments": {}}\nAction: {"name": "cancel_order", "arguments": {}}\n</think>\n'
        'Action: {"name": "get_order_details", "arguments": {}}'
    )
    assert parse_action(text) == ("get_order_details", {})


def test_only_a_draft_means_no_action() -> None:
    reading = read_reply('<think>\nAction: {"name": "cancel_order", "arguments": {}}\n</think>\nLet me check.')
    assert reading.action is None and reading.drafts == 1
    assert reading.error == "the only actions are drafts inside think blocks"
    assert reading.said() == "Let me check."


def test_a_second_action_is_reported_dropped_and_cut_from_the_history() -> None:
    first = 'Thought: look up\nAction: {"name": "get_customer", "arguments": {"customer_id": "C-1"}}'
    text = first + '\nObservation: {"id": "C-1"}\nAction: {"name": "change_plan", "arguments": {"plan_id": "p"}}'
    reading = read_reply(text)
    assert reading.action is not None and reading.action.name == "get_customer"
    assert [a.name for a in reading.dropped] == ["change_plan"]
    assert reading.kept() == first


@pytest.mark.parametrize("arguments", ['"arguments": null', '"arguments": ""', '"arguments": "{}"', '"parameters": {}'])
def test_empty_arguments_in_every_spelling(arguments: str) -> None:
    assert parse_action(f'Action: {{"name": "list_plans", {arguments}}}') == ("list_plans", {})


@pytest.mark.parametrize("marker", ["### Action:", "**Action:**", "**Action**:", "## **Action:**", "action:", "Action :"])
def test_markdown_dressed_markers(marker: str) -> None:
    # The thought holds a JSON object: without the marker the parser would take it for the action.
    text = f'Thought: the customer said {{"email": "ada@example.net"}}\n{marker}\n{{"name": "find", "arguments": {{"email": "a"}}}}'
    assert parse_action(text) == ("find", {"email": "a"})


def test_a_marker_inside_a_json_string_is_text() -> None:
    text = 'Action: {"name": "respond", "arguments": {"content": "Say:\nAction: {\\"name\\": \\"x\\"}"}}'
    reading = read_reply(text)
    assert reading.action is not None and reading.action.name == "respond" and reading.dropped == ()


@pytest.mark.parametrize(
    "arguments",
    [
        {"content": 'Use ```json\n{"a": 1}\n``` here'},
        {"content": 'Line\n\tTab, braces } { ] [ and a quote " and a backslash \\'},
        {"content": '<think>not a thought</think> Action: {"name": "x"}'},
        {"content": "Ünïcödé — 東京 🚀"},
        {"nested": {"deep": [1, {"x": None}]}, "empty": {}},
    ],
)
def test_the_agents_read_their_own_formatted_actions(arguments: dict[str, Any]) -> None:
    text = "Thought: again\n" + action_text("respond", arguments)
    assert parse_action(text) == ("respond", arguments)
    assert parse_action(action_text("respond", arguments)) == ("respond", arguments)


def test_a_bare_or_fenced_object_without_a_marker() -> None:
    body = json.dumps({"name": "get_customer", "arguments": {"customer_id": "C-1"}})
    assert parse_action(body) == ("get_customer", {"customer_id": "C-1"})
    assert parse_action(f"Here it is:\n```json\n{body}\n```") == ("get_customer", {"customer_id": "C-1"})


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("Sure, let me check that for you!", "Sure, let me check that for you!"),
        ("Thought: greet\nAction: Hello there, how can I help?", "Hello there, how can I help?"),
        ("<think>hmm</think>\nHello!", "Hello!"),
        ("<think>unfinished thinking", ""),
    ],
)
def test_what_goes_to_the_user_when_no_action_is_readable(text: str, said: str) -> None:
    reading = read_reply(text)
    assert reading.action is None and reading.said() == said


def test_prose_braces_without_a_marker_are_not_an_action() -> None:
    reading = read_reply('I will look up {"customer_id": "C-1"} now.')
    assert reading.action is None


def test_nesting_deeper_than_any_action_is_an_unreadable_reply_not_a_crash() -> None:
    deep = 'Action: {"name": "x", "arguments": ' + '{"a": ' * 5000 + "1" + "}" * 5001
    assert read_reply(deep).error == "the action is not valid JSON"
    assert read_reply(deep[:-1]).error == "the action is not valid JSON"


def test_a_flood_of_candidates_is_bounded() -> None:
    reading = read_reply('Action: {"name": "a", "arguments": {}}\n' * 1000)
    assert reading.action is not None and len(reading.dropped) == 63
    assert read_reply("{\n" * 40000).error == 'the action needs a "name"'
