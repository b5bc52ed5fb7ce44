"""The OpenAI wire shapes the bridge speaks: request bodies to bench ChatRequests, ChatResponses to reply bodies.

Chat Completions (`/v1/chat/completions`) and the Responses API (`/v1/responses`), each plain or streamed
(`stream: true`: Server-Sent Events, chat chunks or Responses events). Pure functions over plain JSON
data: no HTTP here (see endpoint.py), so every shape is testable on its own.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from bench_kernel import AssistantMessage, ChatRequest, ChatResponse, Message, ToolCall, ToolMessage, UserMessage

CHAT_SAMPLING = (
    "temperature",
    "top_p",
    "max_tokens",
    "max_completion_tokens",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "logit_bias",
    "parallel_tool_calls",
    "reasoning_effort",
)
"""Chat request fields passed on as sampling; the rest (store, metadata, user, stream_options, ...) stay here."""
RESPONSES_SAMPLING = {"temperature": "temperature", "top_p": "top_p", "max_output_tokens": "max_tokens", "parallel_tool_calls": "parallel_tool_calls"}
"""Responses request fields and the chat sampling key each becomes."""


class BadRequest(ValueError):
    """A request body the bridge cannot serve (answered 400 with an OpenAI-style error)."""


# --------------------------------------------------------------------------- requests


def chat_request(body: Mapping[str, Any], *, seed: int | None) -> ChatRequest:
    """A Chat Completions body as a bench ChatRequest (the conversation's seed unless the body has its own)."""
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or not all(isinstance(m, dict) for m in messages):
        raise BadRequest("'messages' must be a non-empty list of message objects")
    if body.get("n") not in (None, 1):
        raise BadRequest("the bridge serves one choice per request ('n' must be 1)")
    tools = _list_or_none(body.get("tools"), "tools")
    sampling = {key: body[key] for key in CHAT_SAMPLING if body.get(key) is not None}
    return _request(messages, tools, body.get("tool_choice"), sampling, body.get("seed", seed), body.get("response_format"))


def responses_request(body: Mapping[str, Any], *, seed: int | None) -> ChatRequest:
    """A Responses API body (instructions, input items, function tools) as a bench ChatRequest."""
    for field in ("previous_response_id", "conversation"):
        if body.get(field):
            raise BadRequest(f"the bridge keeps no server-side state: send the whole input instead of {field!r}")
    messages = responses_messages(body.get("instructions"), body.get("input"))
    if not messages:
        raise BadRequest("'input' is empty")
    tools = [_chat_tool(tool) for tool in _list_or_none(body.get("tools"), "tools") or []]
    sampling = {chat: body[key] for key, chat in RESPONSES_SAMPLING.items() if body.get(key) is not None}
    reasoning = body.get("reasoning")
    effort = reasoning.get("effort") if isinstance(reasoning, dict) else None
    if effort is not None:
        sampling["reasoning_effort"] = effort
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "function":
        choice = {"type": "function", "function": {"name": choice.get("name")}}
    text = body.get("text")
    form = text.get("format") if isinstance(text, dict) else None
    return _request(messages, tools or None, choice, sampling, body.get("seed", seed), _response_format(form))


def _request(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, choice: Any, sampling: dict[str, Any], seed: Any, response_format: Any
) -> ChatRequest:
    if choice is not None and not isinstance(choice, str | dict):
        raise BadRequest("'tool_choice' must be a string or an object")
    if isinstance(choice, dict):
        # ChatRequest.tool_choice is a string: a forced function travels with the sampling fields, which backends send as is.
        sampling = {**sampling, "tool_choice": choice}
        choice = None
    if seed is not None and not isinstance(seed, int):
        raise BadRequest("'seed' must be an integer")
    if response_format is not None and not isinstance(response_format, dict):
        raise BadRequest("'response_format' must be an object")
    return ChatRequest(
        messages=messages, tools=tools, tool_choice=choice if tools else None, sampling=sampling, seed=seed, response_format=response_format
    )


def _list_or_none(value: Any, field: str) -> list[dict[str, Any]] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise BadRequest(f"{field!r} must be a list of objects")
    return value or None


def _chat_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses function tool ({"type", "name", "description", "parameters"}) in the chat shape."""
    if tool.get("type") != "function" or not isinstance(tool.get("name"), str):
        raise BadRequest(f"the bridge serves function tools only, not {tool.get('type')!r}")
    function = {"name": tool["name"]}
    if tool.get("description"):
        function["description"] = tool["description"]
    function["parameters"] = tool.get("parameters") or {"type": "object", "properties": {}}
    return {"type": "function", "function": function}


def _response_format(form: Any) -> dict[str, Any] | None:
    if not isinstance(form, dict) or form.get("type") in (None, "text"):
        return None
    if form["type"] == "json_schema":
        return {"type": "json_schema", "json_schema": {k: form[k] for k in ("name", "schema", "strict", "description") if k in form}}
    return {"type": form["type"]}


def responses_messages(instructions: Any, items: Any) -> list[dict[str, Any]]:
    """Responses input (a string or items: messages, function calls and their outputs) as chat messages."""
    messages: list[dict[str, Any]] = []
    if isinstance(instructions, str) and instructions:
        messages.append({"role": "system", "content": instructions})
    if isinstance(items, str):
        return [*messages, {"role": "user", "content": items}]
    if not isinstance(items, list):
        raise BadRequest("'input' must be a string or a list of items")
    for item in items:
        if not isinstance(item, dict):
            raise BadRequest("every input item must be an object")
        _add_item(messages, item)
    return messages


def _add_item(messages: list[dict[str, Any]], item: Mapping[str, Any]) -> None:
    kind = item.get("type") or ("message" if "role" in item else None)
    if kind == "message":
        role = {"developer": "system"}.get(item.get("role", ""), item.get("role"))
        if role not in ("system", "user", "assistant"):
            raise BadRequest(f"an input message has the role {item.get('role')!r}")
        messages.append({"role": role, "content": _text(item.get("content"))})
    elif kind == "function_call":
        call = {"id": item.get("call_id"), "type": "function", "function": {"name": item.get("name"), "arguments": item.get("arguments") or "{}"}}
        last = messages[-1] if messages else None
        if last is not None and last["role"] == "assistant":
            # Calls of one model turn (and the text before them) make one chat message, as the model sent them.
            last.setdefault("tool_calls", []).append(call)
        else:
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
    elif kind == "function_call_output":
        messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": _text(item.get("output"))})
    elif kind != "reasoning":  # the model's own reasoning is not sent back to a chat endpoint
        raise BadRequest(f"the bridge does not serve input items of type {kind!r}")


def _text(content: Any) -> str:
    """A content string, or the text of content parts (input_text, output_text, text)."""
    if content is None or isinstance(content, str):
        return content or ""
    if not isinstance(content, list):
        raise BadRequest("a message content must be a string or a list of parts")
    texts = []
    for part in content:
        if not isinstance(part, dict) or part.get("type") not in ("input_text", "output_text", "text"):
            kind = part.get("type") if isinstance(part, dict) else type(part).__name__
            raise BadRequest(f"the bridge serves text only, not content parts of type {kind!r}")
        texts.append(str(part.get("text") or ""))
    return "".join(texts)


# --------------------------------------------------------------------------- the opening history


def opening_messages(history: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation's opening as the agent sees it, as chat messages: the profile's greeting, or the task's history.

    The user messages that close it are left out: they are what the framework's first turn is started with.
    """
    kept = list(history)
    while kept and isinstance(kept[-1], UserMessage):
        kept.pop()
    messages: list[dict[str, Any]] = []
    for m in kept:
        if isinstance(m, AssistantMessage):
            message: dict[str, Any] = {"role": "assistant", "content": m.content}
            if m.tool_calls:
                message["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _arguments(c)}} for c in m.tool_calls
                ]
            messages.append(message)
        elif isinstance(m, UserMessage) and m.has_text():
            messages.append({"role": "user", "content": m.content})  # the user's device actions are not the agent's to see
        elif isinstance(m, ToolMessage) and m.requestor == "assistant":
            messages.append({"role": "tool", "tool_call_id": m.id, "content": m.content or ""})
    return messages


# --------------------------------------------------------------------------- replies


def usage_tokens(response: ChatResponse) -> tuple[int, int]:
    """Prompt and completion tokens (0 when the backend did not say)."""
    return response.prompt_tokens or 0, response.completion_tokens or 0


def _arguments(call: ToolCall) -> str:
    return json.dumps(call.arguments, ensure_ascii=False)


def _finish_reason(response: ChatResponse) -> str:
    return response.finish_reason or ("tool_calls" if response.tool_calls else "stop")


def chat_completion(response: ChatResponse, model: str) -> dict[str, Any]:
    """A Chat Completions reply body."""
    message: dict[str, Any] = {"role": "assistant", "content": response.content}
    if response.tool_calls:
        message["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": _arguments(c)}} for c in response.tool_calls
        ]
    if response.reasoning:
        message["reasoning_content"] = response.reasoning
    prompt, completion = usage_tokens(response)
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": _finish_reason(response), "logprobs": None}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
    }


def chat_chunks(response: ChatResponse, model: str, *, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The same reply as `chat.completion.chunk` objects: role, text, each tool call, the finish, then usage if asked."""
    base = {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion.chunk", "created": int(time.time()), "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}]}

    yield chunk({"role": "assistant", "content": ""})
    if response.reasoning:
        yield chunk({"reasoning_content": response.reasoning})
    if response.content:
        yield chunk({"content": response.content})
    for index, call in enumerate(response.tool_calls):
        yield chunk(
            {"tool_calls": [{"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": _arguments(call)}}]}
        )
    yield chunk({}, _finish_reason(response))
    if include_usage:
        prompt, completion = usage_tokens(response)
        yield {**base, "choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}}


def response_items(response: ChatResponse) -> list[dict[str, Any]]:
    """The Responses output items of a reply: a message for the text, a function_call per tool call."""
    items: list[dict[str, Any]] = []
    if response.content:
        items.append(
            {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": response.content, "annotations": []}],
            }
        )
    for call in response.tool_calls:
        items.append(
            {
                "type": "function_call",
                "id": f"fc_{call.id}",
                "call_id": call.id,
                "name": call.name,
                "arguments": _arguments(call),
                "status": "completed",
            }
        )
    return items


def responses_body(response: ChatResponse, model: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses API reply body (status, output items, usage), echoing the request's settings as OpenAI does."""
    prompt, completion = usage_tokens(response)
    truncated = response.finish_reason == "length"
    return {
        "id": f"resp_{uuid.uuid4().hex}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if truncated else "completed",
        "model": model,
        "output": response_items(response),
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "instructions": request.get("instructions"),
        "metadata": request.get("metadata") or {},
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "temperature": request.get("temperature"),
        "top_p": request.get("top_p"),
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools") or [],
        "max_output_tokens": request.get("max_output_tokens"),
        "previous_response_id": None,
        "text": request.get("text") or {"format": {"type": "text"}},
        "truncation": "disabled",
        "reasoning": None,
        "usage": {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        },
    }


def responses_events(body: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """A finished Responses body as the stream of events a streaming request gets, numbered in order."""
    started = {**body, "status": "in_progress", "output": [], "usage": None}
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started}, {"type": "response.in_progress", "response": started}]
    for index, item in enumerate(body["output"]):
        events += _item_events(index, item)
    events.append({"type": "response.completed" if body["status"] == "completed" else "response.incomplete", "response": dict(body)})
    for number, event in enumerate(events):
        yield {**event, "sequence_number": number}


def _item_events(index: int, item: Mapping[str, Any]) -> list[dict[str, Any]]:
    where = {"output_index": index, "item_id": item["id"]}
    if item["type"] == "function_call":
        return [
            {"type": "response.output_item.added", "output_index": index, "item": {**item, "arguments": "", "status": "in_progress"}},
            {"type": "response.function_call_arguments.delta", **where, "delta": item["arguments"]},
            {"type": "response.function_call_arguments.done", **where, "arguments": item["arguments"], "name": item["name"]},
            {"type": "response.output_item.done", "output_index": index, "item": dict(item)},
        ]
    part = item["content"][0]
    empty = {**part, "text": ""}
    at = {**where, "content_index": 0}
    return [
        {"type": "response.output_item.added", "output_index": index, "item": {**item, "content": [], "status": "in_progress"}},
        {"type": "response.content_part.added", **at, "part": empty},
        {"type": "response.output_text.delta", **at, "delta": part["text"], "logprobs": []},
        {"type": "response.output_text.done", **at, "text": part["text"], "logprobs": []},
        {"type": "response.content_part.done", **at, "part": dict(part)},
        {"type": "response.output_item.done", "output_index": index, "item": dict(item)},
    ]


def sse(events: Sequence[Mapping[str, Any]] | Iterator[Mapping[str, Any]], *, named: bool, done: bool) -> bytes:
    """Server-Sent Events: `event:` lines for the Responses stream (named), `data: [DONE]` at the end of a chat stream."""
    out = []
    for event in events:
        head = f"event: {event['type']}\n" if named else ""
        out.append(f"{head}data: {json.dumps(event, ensure_ascii=False)}\n\n")
    if done:
        out.append("data: [DONE]\n\n")
    return "".join(out).encode()


def error_body(message: str, *, kind: str, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error document."""
    return {"error": {"message": message, "type": kind, "code": code, "param": None}}
