"""tools_in_prompt: tools in the system prompt and the history as plain chat, and the model's reply read back."""

from __future__ import annotations

import json

from bench_vllm.parsing import parse_text
from bench_vllm.prompting import call_as_text, history_as_text, inline_tools, tools_instructions, with_system_note

from bench_kernel import ChatRequest

from .conftest import LOOKUP_TOOL

HISTORY = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "I am C-1 and C-2."},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "two lookups",
        "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "get_customer", "arguments": '{"customer_id": "C-1"}'}},
            {"id": "b", "type": "function", "function": {"name": "get_customer", "arguments": '{"customer_id": "C-2"}'}},
        ],
    },
    {"role": "tool", "tool_call_id": "a", "content": '{"name": "Ada"}'},
    {"role": "tool", "tool_call_id": "b", "content": "not found"},
    {"role": "assistant", "content": "Ada is C-1; C-2 does not exist."},
]


def test_the_instructions_list_every_tool_and_the_call_format() -> None:
    text = tools_instructions([LOOKUP_TOOL])
    assert json.dumps(LOOKUP_TOOL["function"]) in text
    assert "<tool_call>" in text and "</tool_call>" in text and "<tool_response>" in text
    assert "plain text" in text and "must call" not in text
    assert "must call at least one function" in tools_instructions([LOOKUP_TOOL], "required")


def test_the_example_in_the_instructions_is_a_call_we_read_back() -> None:
    example = call_as_text("function_name", {"parameter": "value"})
    assert example in tools_instructions([LOOKUP_TOOL])
    assert [(c.name, c.arguments) for c in parse_text(example).tool_calls] == [("function_name", {"parameter": "value"})]


def test_history_calls_become_blocks_and_results_one_user_message() -> None:
    rewritten = history_as_text(HISTORY)
    assert [m["role"] for m in rewritten] == ["system", "user", "assistant", "user", "assistant"]
    assistant = rewritten[2]
    assert "tool_calls" not in assistant and assistant["reasoning_content"] == "two lookups"
    assert [(c.name, c.arguments) for c in parse_text(assistant["content"]).tool_calls] == [
        ("get_customer", {"customer_id": "C-1"}),
        ("get_customer", {"customer_id": "C-2"}),
    ]
    results = '<tool_response>\n{"name": "Ada"}\n</tool_response>\n<tool_response>\nnot found\n</tool_response>'
    assert rewritten[3]["content"] == results
    assert rewritten[4] == HISTORY[5] and HISTORY[2]["tool_calls"]  # the input is not changed


def test_text_beside_calls_is_kept_and_unparsable_arguments_are_passed_on() -> None:
    message = {
        "role": "assistant",
        "content": "Checking.",
        "tool_calls": [{"id": "x", "type": "function", "function": {"name": "f", "arguments": "{oops"}}],
    }
    [rewritten] = history_as_text([message])
    assert rewritten["content"] == 'Checking.\n<tool_call>\n{"name": "f", "arguments": "{oops"}\n</tool_call>'


def test_the_note_joins_the_first_system_message_or_leads_a_new_one() -> None:
    assert with_system_note([{"role": "system", "content": "A"}], "N") == [{"role": "system", "content": "A\n\nN"}]
    assert with_system_note([{"role": "user", "content": "hi"}], "N") == [{"role": "system", "content": "N"}, {"role": "user", "content": "hi"}]
    assert with_system_note([], "N") == [{"role": "system", "content": "N"}]


def test_inline_tools_drops_the_tool_fields() -> None:
    request = inline_tools(ChatRequest(messages=HISTORY, tools=[LOOKUP_TOOL], tool_choice="auto", seed=3))
    assert request.tools is None and request.tool_choice is None and request.seed == 3
    assert request.messages[0]["content"].startswith("Be brief.\n\n# Tools")
    assert not any(m["role"] == "tool" or "tool_calls" in m for m in request.messages)


def test_tool_choice_none_describes_no_tools_but_still_rewrites_the_history() -> None:
    request = inline_tools(ChatRequest(messages=HISTORY, tools=[LOOKUP_TOOL], tool_choice="none"))
    assert request.messages[0] == HISTORY[0]
    assert not any(m["role"] == "tool" for m in request.messages)
