"""Actions: what a policy sends (an OpenAI chat assistant message, as a dict or its JSON text, or plain text) as a message.

A malformed action is the policy's own mistake, as an unreadable reply is a model agent's: it ends the episode as an
`agent_error` (`user_error` on the user side), with the reason in `info["error"]`. An action of another type than a
string or a mapping is a programming error and raises TypeError at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from bench_openai.parsing import snippet, text_of, tool_call_of

from bench_kernel import AssistantMessage, ModelResponseError, ParticipantError, ParticipantMessage, ToolCall, UserMessage

from .config import Side

ROLES = {"agent": ("assistant",), "user": ("assistant", "user")}
"""The roles an action may name: its own chat's `assistant`, or, on the user side, the conversation's `user`."""


class ActionError(ParticipantError):
    """An action that is not a message: ends the episode as the policy's error."""


def action_message(action: Any, side: Side, call_ids: Iterator[str]) -> ParticipantMessage:
    """The conversation message for an action; tool calls without an id get one from `call_ids`."""
    if isinstance(action, str):
        message = _json_object(action)
        if message is None:
            return _message(side, action, [])
    elif isinstance(action, Mapping):
        message = dict(action)
    else:
        raise TypeError(f"an action is an assistant message (a dict or its JSON text) or plain text, not {type(action).__name__}")
    return _from_dict(message, side, call_ids)


def _json_object(text: str) -> dict[str, Any] | None:
    """The JSON object a text holds, or None when it is plain text (which the policy says as it is)."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _from_dict(message: dict[str, Any], side: Side, call_ids: Iterator[str]) -> ParticipantMessage:
    role = message.get("role", "assistant")
    if role not in ROLES[side]:
        raise ActionError(f"action: role {role!r} is not the policy's ({' or '.join(ROLES[side])}): {snippet(message)}")
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise ActionError(f"action: tool_calls is not a list: {snippet(calls)}")
    try:
        content = text_of(message.get("content"))
        parsed = [_tool_call(call, call_ids) for call in calls]
    except ModelResponseError as exc:
        raise ActionError(str(exc)) from None
    return _message(side, content, parsed)


def _tool_call(call: Any, call_ids: Iterator[str]) -> ToolCall:
    """An OpenAI tool call, or the short form {"name": ..., "arguments": {...}} (arguments as an object or JSON text)."""
    if isinstance(call, Mapping) and "function" not in call and "name" in call:
        call = {"id": call.get("id"), "function": {"name": call.get("name"), "arguments": call.get("arguments")}}
    parsed = tool_call_of(call, "action")
    return parsed if parsed.id else ToolCall(id=next(call_ids), name=parsed.name, arguments=parsed.arguments)


def _message(side: Side, content: str | None, calls: list[ToolCall]) -> ParticipantMessage:
    if side == "agent":
        return AssistantMessage(content=content, tool_calls=calls or None)
    return UserMessage(content=content, tool_calls=calls or None)


def call_ids(prefix: str = "gym") -> Iterator[str]:
    """Ids for the tool calls of one episode: gym-1, gym-2, ..."""
    n = 0
    while True:
        n += 1
        yield f"{prefix}-{n}"
