"""OpenAI-shaped messages in and out (bench_kernel.OpenAIChat and its functions), and the plain-function agent of
docs/frameworks.md played on the practice domain."""

from __future__ import annotations

import re
import types
from pathlib import Path
from typing import Any

import pytest

from bench_kernel import (
    AssistantMessage,
    Message,
    Mode,
    ParticipantError,
    RunConfig,
    Store,
    ToolCall,
    ToolMessage,
    UserMessage,
    assistant_message,
    get_plugin_manager,
    openai_messages,
    openai_user_messages,
    run,
)

FRAMEWORKS = Path(__file__).resolve().parents[2] / "docs" / "frameworks.md"
CALL = ToolCall(id="c1", name="list_items", arguments={"shelf": "top"})
DEVICE = ToolCall(id="u1", name="unlock_door", arguments={}, requestor="user")
CONVERSATION: list[Message] = [
    AssistantMessage(content="Hi!"),
    UserMessage(content="What is there?"),
    AssistantMessage(tool_calls=[CALL]),
    ToolMessage(id="c1", content="Blue Kettle"),
    AssistantMessage(content="Please do this on your device: unlock_door({})"),
    UserMessage(tool_calls=[DEVICE]),
    ToolMessage(id="u1", content="unlocked", requestor="user"),
    UserMessage(content="Done, it is open."),
]


def test_the_agent_sees_its_own_side_and_never_the_customers_device() -> None:
    assert openai_messages(CONVERSATION) == [
        {"role": "assistant", "content": "Hi!"},
        {"role": "user", "content": "What is there?"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "list_items", "arguments": '{"shelf": "top"}'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "Blue Kettle"},
        {"role": "assistant", "content": "Please do this on your device: unlock_door({})"},
        {"role": "user", "content": "Done, it is open."},
    ]


def test_the_user_sees_roles_flipped_and_its_own_calls() -> None:
    view = openai_user_messages(CONVERSATION)
    assert [m["role"] for m in view] == ["user", "assistant", "user", "assistant", "tool", "assistant"]
    assert view[3]["tool_calls"][0]["function"]["name"] == "unlock_door"


class SdkMessage:
    """What the OpenAI SDK returns: a pydantic object read with model_dump()."""

    def model_dump(self) -> dict[str, Any]:
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_9", "type": "function", "function": {"name": "take_item", "arguments": '{"item_id": "I-1"}'}}],
        }


@pytest.mark.parametrize(
    "reply",
    [
        SdkMessage(),
        {"choices": [{"message": SdkMessage().model_dump(), "finish_reason": "tool_calls"}]},
        {"role": "assistant", "tool_calls": [{"id": "call_9", "name": "take_item", "arguments": {"item_id": "I-1"}}]},
    ],
)
def test_replies_in_every_openai_shape_read_the_same(reply: Any) -> None:
    assert assistant_message(reply) == AssistantMessage(tool_calls=[ToolCall(id="call_9", name="take_item", arguments={"item_id": "I-1"})])


def test_text_content_parts_and_missing_ids() -> None:
    assert assistant_message("Hello").content == "Hello"
    assert assistant_message({"content": [{"type": "text", "text": "Hel"}, {"type": "text", "text": "lo"}]}).content == "Hello"
    calls = assistant_message({"tool_calls": [{"function": {"name": "a"}}, {"function": {"name": "b", "arguments": ""}}]}, first_call=4).tool_calls
    assert [(c.id, c.arguments) for c in calls or []] == [("call-4", {}), ("call-5", {})]


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        ({"role": "assistant", "content": ""}, "neither content nor tool calls"),
        ({"tool_calls": [{"function": {"name": "a", "arguments": "{not json"}}]}, "are not JSON"),
        ({"tool_calls": [{"function": {"arguments": "{}"}}]}, "no function name"),
        (42, "not an OpenAI assistant message"),
    ],
)
def test_unreadable_replies_are_participant_errors(reply: Any, message: str) -> None:
    with pytest.raises(ParticipantError, match=message):
        assistant_message(reply)


@pytest.fixture
def documented_agent() -> types.ModuleType:
    """The plain-function agent of docs/frameworks.md, as a plugin module."""
    if not FRAMEWORKS.is_file():
        pytest.skip(f"the workspace's docs are not at {FRAMEWORKS} (kernel tested outside the repository)")
    block = next(b for b in re.findall(r"```python\n(.*?)```", FRAMEWORKS.read_text(encoding="utf-8"), re.S) if "async def my_agent" in b)
    module = types.ModuleType("my_agent_module")
    exec(compile(block, str(FRAMEWORKS), "exec"), module.__dict__)
    return module


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        (Mode.DEFAULT, {"which_items": ("user_stop", 1.0), "take_kettle": ("user_stop", 0.0)}),
        # Alone it works from the ticket and ends with its answer (kept beside the stop, so COMMUNICATE does not count it).
        (Mode.NO_USER, {"which_items": ("agent_stop", 0.0), "take_kettle": ("agent_stop", 0.0)}),
    ],
)
def test_the_documented_function_agent_plays_the_practice_domain(
    documented_agent: types.ModuleType, mode: Mode, expected: dict[str, tuple[str, float]], tmp_path: Path
) -> None:
    plugins = get_plugin_manager(["practice"], extra=[("mine", documented_agent)])
    config = RunConfig(domain="practice", plugins=["practice"], agent="my-agent", mode=mode, task_ids=list(expected), baseline=False)
    summary = run(config, tmp_path / "b.db", plugins=plugins)
    store = Store(tmp_path / "b.db")
    try:
        rows = store.conversations(summary.run_id)
        last = store.db.execute(
            "select content, message_json from messages where role = 'assistant' and conversation_id = ? order by idx desc limit 1", [rows[0]["id"]]
        ).fetchone()
    finally:
        store.close()
    assert {r["task_id"]: (r["termination_reason"], r["reward"]) for r in rows} == expected
    if mode is Mode.NO_USER:
        assert last[0] == "###STOP###" and "Here is what I found" in last[1]
