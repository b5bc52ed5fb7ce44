"""Tools described in the prompt instead of the `tools` field, for servers whose chat template knows no tools.

With the option `tools_in_prompt`, a request's tools become an addition to its system prompt that
asks for Hermes-style `<tool_call>` blocks (which parsing.py reads back), and the history is
rewritten into plain chat: earlier tool calls become `<tool_call>` blocks in the assistant's text,
and tool results become a user message of `<tool_response>` blocks. Pure functions, no HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import ChatRequest

from .parsing import HERMES_CLOSE, HERMES_OPEN

TOOLS_HEADING = "# Tools"
TOOLS_TAG_OPEN, TOOLS_TAG_CLOSE = "<tools>", "</tools>"
RESPONSE_OPEN, RESPONSE_CLOSE = "<tool_response>", "</tool_response>"


def inline_tools(request: ChatRequest) -> ChatRequest:
    """The request with its tools in the system prompt and its history as plain chat (no `tools` field)."""
    messages = history_as_text(request.messages)
    if request.tools and request.tool_choice != "none":
        messages = with_system_note(messages, tools_instructions(request.tools, request.tool_choice))
    return attrs.evolve(request, messages=messages, tools=None, tool_choice=None)


def tools_instructions(tools: Sequence[dict[str, Any]], tool_choice: str | None = None) -> str:
    """Our system-prompt addition: the tools as JSON lines and how to call them."""
    lines = "\n".join(json.dumps(_function_of(tool), ensure_ascii=False) for tool in tools)
    example = call_as_text("function_name", {"parameter": "value"})
    when = (
        "You must call at least one function in this reply."
        if tool_choice == "required"
        else "When no function is needed, answer in plain text, without any tags."
    )
    return (
        f"{TOOLS_HEADING}\n\n"
        f"You can use the functions listed between {TOOLS_TAG_OPEN} and {TOOLS_TAG_CLOSE}, one JSON description per line "
        "(its name, what it does, and a JSON schema of its parameters):\n"
        f"{TOOLS_TAG_OPEN}\n{lines}\n{TOOLS_TAG_CLOSE}\n\n"
        f'To call a function, write a JSON object with its "name" and its "arguments" between {HERMES_OPEN} and '
        f"{HERMES_CLOSE}, and nothing else between the tags:\n{example}\n"
        "Write one such block per call; a reply may hold several. "
        f"Each result comes back to you between {RESPONSE_OPEN} and {RESPONSE_CLOSE}. {when}"
    )


def call_as_text(name: str, arguments: Any) -> str:
    """One call as the `<tool_call>` block the model is asked to write."""
    return f"{HERMES_OPEN}\n{json.dumps({'name': name, 'arguments': arguments}, ensure_ascii=False)}\n{HERMES_CLOSE}"


def history_as_text(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages without tool fields: assistant calls as text, each run of tool results as one user message."""
    rewritten: list[dict[str, Any]] = []
    in_results = False
    for message in messages:
        if message.get("role") == "tool":
            block = f"{RESPONSE_OPEN}\n{_text_of(message.get('content'))}\n{RESPONSE_CLOSE}"
            if in_results:
                rewritten[-1] = {**rewritten[-1], "content": rewritten[-1]["content"] + "\n" + block}
            else:
                rewritten.append({"role": "user", "content": block})
            in_results = True
            continue
        in_results = False
        rewritten.append(_assistant_as_text(message) if message.get("tool_calls") else message)
    return rewritten


def with_system_note(messages: Sequence[dict[str, Any]], note: str) -> list[dict[str, Any]]:
    """The note appended to the first system message, or a new system message in front."""
    first = messages[0] if messages else None
    if first is not None and first.get("role") == "system" and isinstance(first.get("content"), str):
        content = f"{first['content']}\n\n{note}" if first["content"].strip() else note
        return [{**first, "content": content}, *messages[1:]]
    return [{"role": "system", "content": note}, *messages]


def _assistant_as_text(message: dict[str, Any]) -> dict[str, Any]:
    content = message.get("content")
    parts = [content] if isinstance(content, str) and content.strip() else []
    for call in message.get("tool_calls") or []:
        function = call.get("function") if isinstance(call, dict) else None
        function = function if isinstance(function, dict) else {}
        parts.append(call_as_text(str(function.get("name", "")), _decoded(function.get("arguments"))))
    rest = {key: value for key, value in message.items() if key != "tool_calls"}
    return {**rest, "content": "\n".join(parts)}


def _function_of(tool: dict[str, Any]) -> Any:
    """The function description of an OpenAI tool ({"type": "function", "function": {...}})."""
    return tool.get("function", tool) if isinstance(tool, dict) else tool


def _decoded(arguments: Any) -> Any:
    """Arguments as an object when they are a JSON string, else as they are."""
    if isinstance(arguments, str):
        try:
            return json.loads(arguments)
        except ValueError:
            return arguments
    return {} if arguments is None else arguments


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "" if content is None else json.dumps(content, ensure_ascii=False)
