"""Conversations in OpenAI's chat format, both ways; `OpenAIChat` plugs in `async def my_agent(messages, tools)` (docs/frameworks.md)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel.conversation.participants import ConversationSetup
from bench_kernel.conversation.prompts import agent_instructions, done_tool_name
from bench_kernel.errors import ParticipantError
from bench_kernel.profiles.profile import MessageStyle
from bench_kernel.schema.messages import AssistantMessage, Message, Mode, ToolCall, ToolMessage, UserMessage

OPENAI = MessageStyle()
"""The plain OpenAI chat format (bench's own profile's)."""


def openai_tool_calls(calls: Sequence[ToolCall], style: MessageStyle = OPENAI) -> list[dict[str, Any]]:
    """Tool calls in the chat format (arguments as a JSON string), with the style's fields in its order."""
    out = []
    for c in calls:
        arguments = json.dumps(c.arguments, ensure_ascii=style.ascii_arguments)
        fields = {"id": c.id, "type": "function", "name": c.name, "function": {"name": c.name, "arguments": arguments}}
        out.append({key: fields[key] for key in style.tool_call_fields})
    return out


def openai_message(role: str, content: str | None, calls: Sequence[ToolCall] | None = None, style: MessageStyle = OPENAI) -> dict[str, Any]:
    """One chat message; tool calls are added only when there are some."""
    message: dict[str, Any] = {"role": role}
    if content is not None or style.null_content or not calls:
        message["content"] = content
    if calls:
        message["tool_calls"] = openai_tool_calls(calls, style)
    return message


def openai_tool_result(message: ToolMessage, style: MessageStyle = OPENAI) -> dict[str, Any]:
    """A tool result answering the call with the same id."""
    fields = {"role": "tool", "tool_call_id": message.id, "content": message.content or ""}
    return {key: fields[key] for key in style.tool_message_fields}


def openai_messages(messages: Sequence[Message], style: MessageStyle = OPENAI) -> list[dict[str, Any]]:
    """The conversation as the agent sees it: its own messages, the user's words, its own tool results."""
    view = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            view.append(openai_message("assistant", m.content, m.tool_calls, style))
        elif isinstance(m, UserMessage) and m.has_text():
            # The user's device actions happen off-stage: the agent only hears what the user says.
            view.append(openai_message("user", m.content, style=style))
        elif isinstance(m, ToolMessage) and m.requestor == "assistant":
            view.append(openai_tool_result(m, style))
    return view


def openai_user_messages(messages: Sequence[Message], style: MessageStyle = OPENAI) -> list[dict[str, Any]]:
    """The conversation as the simulated user sees it: roles flipped, only its own tool calls and results."""
    view = []
    for m in messages:
        if isinstance(m, AssistantMessage) and m.has_text() and not m.tool_calls:
            view.append(openai_message("user", m.content, style=style))
        elif isinstance(m, UserMessage):
            view.append(openai_message("assistant", m.content, m.tool_calls, style))
        elif isinstance(m, ToolMessage) and m.requestor == "user":
            view.append(openai_tool_result(m, style))
    return view


def unseen_messages(setup: ConversationSetup, incoming: Sequence[Message], first: bool) -> list[Message]:
    """What a session has not taken in yet: on its first turn the history too, without the tail the orchestrator re-delivers."""
    if not first:
        return list(incoming)
    history = list(setup.history)
    # The orchestrator hands the last history messages to whoever answers them first; they are already in the history.
    if incoming and history[-len(incoming) :] == list(incoming):
        return history
    return history + list(incoming)


def assistant_message(reply: Any, *, first_call: int = 1) -> AssistantMessage:
    """An assistant reply in any OpenAI shape (docs/frameworks.md) as an AssistantMessage; ParticipantError when empty."""
    if isinstance(reply, AssistantMessage):
        return reply
    if isinstance(reply, str):
        return AssistantMessage(content=reply)
    if hasattr(reply, "model_dump"):
        reply = reply.model_dump()
    if isinstance(reply, Mapping) and isinstance(reply.get("choices"), list) and reply["choices"]:
        reply = reply["choices"][0].get("message")
    if not isinstance(reply, Mapping):
        raise ParticipantError(f"the agent's reply is not an OpenAI assistant message: {reply!r:.200}")
    entries = reply.get("tool_calls") or []
    if not isinstance(entries, list):
        raise ParticipantError(f"the agent's reply has tool_calls that is not a list: {entries!r:.200}")
    calls = [_tool_call(entry, f"call-{first_call + n}") for n, entry in enumerate(entries)]
    content = _text(reply.get("content"))
    if not content and not calls:
        raise ParticipantError(f"the agent's reply has neither content nor tool calls: {dict(reply)!r:.200}")
    return AssistantMessage(content=content, tool_calls=calls or None)


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: their text
        return "".join(p.get("text") or "" for p in content if isinstance(p, Mapping) and p.get("type") == "text") or None
    raise ParticipantError(f"the agent's reply has content that is neither text nor content parts: {content!r:.200}")


def _tool_call(entry: Any, fallback_id: str) -> ToolCall:
    """An OpenAI tool call, or the short form {"name", "arguments"}."""
    function = entry.get("function", entry) if isinstance(entry, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    if not isinstance(function, Mapping) or not isinstance(name, str) or not name:
        raise ParticipantError(f"a tool call in the agent's reply has no function name: {entry!r:.200}")
    arguments = function.get("arguments") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            raise ParticipantError(f"the arguments of {name!r} are not JSON: {arguments[:200]!r}") from None
    if not isinstance(arguments, dict):
        raise ParticipantError(f"the arguments of {name!r} are not a JSON object: {arguments!r:.200}")
    return ToolCall(id=str(entry.get("id") or fallback_id), name=name, arguments=arguments)


@attrs.define
class OpenAIChat:
    """One agent's side of a conversation as OpenAI chat: `messages` and `tools` to send, replies read back."""

    setup: ConversationSetup
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]
    tool_choice: str
    started: bool = False
    calls: int = 0

    @classmethod
    def start(cls, setup: ConversationSetup) -> OpenAIChat:
        """A chat for a new conversation."""
        system = {"role": "system", "content": agent_instructions(setup)}
        return cls(setup, [system], setup.agent_request_tools(), setup.agent_tool_choice())

    def take(self, incoming: Sequence[Message]) -> list[dict[str, Any]]:
        """Add what arrived since the agent last spoke (on its first turn, the conversation's opening) and return `messages`."""
        first, self.started = not self.started, True
        if first and self.setup.mode is Mode.NO_USER and self.setup.task.ticket:
            self.messages.append({"role": "user", "content": self.setup.task.ticket})
        self.messages += openai_messages(unseen_messages(self.setup, incoming, first), self.setup.profile.messages)
        return self.messages

    def reply(self, reply: Any) -> AssistantMessage:
        """The agent's reply (any shape `assistant_message` reads) as the message bench plays, kept in `messages`."""
        message = assistant_message(reply, first_call=self.calls + 1)
        self.calls += len(message.tool_calls or [])
        if self.setup.mode is Mode.NO_USER:
            done = done_tool_name(self.setup.profile)
            if not message.tool_calls or any(c.name == done for c in message.tool_calls):
                return AssistantMessage(
                    content=self.setup.profile.solo_stop_token, raw_data={"final_output": message.content} if message.content else None
                )
        self.messages.append(openai_message("assistant", message.content, message.tool_calls, self.setup.profile.messages))
        return message

    def is_stop(self, message: AssistantMessage) -> bool:
        """True for the message that ends the work in the no-user mode (an AgentSession's `is_stop`)."""
        return self.setup.mode is Mode.NO_USER and not message.tool_calls and self.setup.profile.solo_stop_token in (message.content or "")
