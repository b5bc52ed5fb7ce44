"""Actions as messages: OpenAI chat assistant messages (dicts or their JSON text), short tool calls, plain text."""

from __future__ import annotations

import json

import pytest
from bench_gym.actions import ActionError, action_message, call_ids

from bench_kernel import AssistantMessage, ToolCall, UserMessage


def test_an_openai_message_with_text_and_tool_calls() -> None:
    message = {
        "role": "assistant",
        "content": "Looking it up.",
        "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "get_customer", "arguments": '{"customer_id": "C-1"}'}}],
    }
    assert action_message(message, "agent", call_ids()) == AssistantMessage(
        content="Looking it up.", tool_calls=[ToolCall(id="call_1", name="get_customer", arguments={"customer_id": "C-1"})]
    )
    assert action_message(json.dumps(message), "agent", call_ids()) == action_message(message, "agent", call_ids())


def test_short_tool_calls_get_ids_and_content_parts_are_text() -> None:
    ids = call_ids()
    message = action_message(
        {"content": [{"type": "text", "text": "ok"}], "tool_calls": [{"name": "a", "arguments": {"x": 1}}, {"name": "b"}]}, "agent", ids
    )
    assert message.content == "ok"
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls or []] == [("gym-1", "a", {"x": 1}), ("gym-2", "b", {})]


def test_plain_text_and_text_that_only_looks_like_json() -> None:
    assert action_message("hello", "agent", call_ids()) == AssistantMessage(content="hello")
    assert action_message("{not json} really", "user", call_ids()) == UserMessage(content="{not json} really")
    assert action_message('["a list"]', "agent", call_ids()) == AssistantMessage(content='["a list"]')


def test_the_user_side_may_name_its_role_either_way() -> None:
    for role in ("assistant", "user"):
        assert action_message({"role": role, "content": "hi"}, "user", call_ids()) == UserMessage(content="hi")
    with pytest.raises(ActionError, match="role 'user'"):
        action_message({"role": "user", "content": "hi"}, "agent", call_ids())


@pytest.mark.parametrize(
    ("action", "problem"),
    [
        ({"tool_calls": {"name": "a"}}, "tool_calls is not a list"),
        ({"tool_calls": [{"function": {"arguments": "{}"}}]}, "no function name"),
        ({"tool_calls": [{"name": "a", "arguments": "[1]"}]}, "not a JSON object"),
        ({"content": 5}, "neither text nor content parts"),
    ],
)
def test_malformed_messages_are_the_policys_error(action: dict[str, object], problem: str) -> None:
    with pytest.raises(ActionError, match=problem):
        action_message(action, "agent", call_ids())


def test_other_types_are_a_programming_error() -> None:
    with pytest.raises(TypeError, match="not list"):
        action_message(["hi"], "agent", call_ids())
