"""A real OpenAI HTTP server on 127.0.0.1 (chat completions and the Responses API, plain or streamed), scripted by its test.

    with FakeOpenAIServer(replies=[Reply.error(429, retry_after=1), Reply.text("hi")]) as server:
        ...  # point a client at server.base_url

It is a small asyncio HTTP/1.1 server (keep-alive, Content-Length bodies) so hundreds of
concurrent connections cost one coroutine each. `with` runs it in a background thread with its
own event loop; `async with` runs it on the caller's loop.

Every scripted reply is served in the shape the request asks for: a chat completion, a Responses API
response (`POST /v1/responses`: output items `message` / `function_call`, usage in input/output tokens),
or either one streamed (`"stream": true`: chat chunks ending in `data: [DONE]`, or named Responses events
ending in `response.completed`). Responders always see a chat-completions body: a Responses request is
turned into one first (instructions as the system message, input items as chat messages, function tools
in the chat shape), so one script serves both APIs.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import hashlib
import http
import itertools
import json
import re
import struct
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import attrs

from bench_kernel.testing.background import BackgroundServer

_call_ids = itertools.count()
_PHRASES = {status.value: status.phrase for status in http.HTTPStatus}


@attrs.frozen(kw_only=True)
class Reply:
    """One scripted answer: a completion around `message`, a raw `body`, or a dropped connection."""

    status: int = 200
    message: Mapping[str, Any] | None = None
    """choices[0].message of a completion body (ignored when `body` is set)."""
    finish_reason: str | None = "stop"
    prompt_tokens: int | None = 10
    completion_tokens: int | None = 5
    body: bytes | None = None
    """Sent as is (garbage, an error document, JSON without choices)."""
    content_type: str = "application/json"
    headers: Mapping[str, str] = attrs.field(factory=dict)
    delay_s: float = 0.0
    """Waited before answering, on top of the server's latency_s."""
    drop: bool = False
    """Close the connection after reading the request, without answering."""

    @classmethod
    def completion(cls, message: Mapping[str, Any], **fields: Any) -> Reply:
        """A completion whose choices[0].message is `message` exactly (e.g. an empty one)."""
        return cls(message=dict(message), **fields)

    @classmethod
    def text(cls, content: str, *, reasoning: str | None = None, **fields: Any) -> Reply:
        """An assistant text reply, with `reasoning_content` when given."""
        return cls.completion(_message(content, reasoning), **fields)

    @classmethod
    def tool_calls(
        cls, calls: Iterable[tuple[str, Mapping[str, Any] | str]], *, content: str | None = None, reasoning: str | None = None, **fields: Any
    ) -> Reply:
        """Tool calls from (name, arguments) pairs; a str argument is sent verbatim (to break it on purpose)."""
        message = _message(content, reasoning)
        message["tool_calls"] = [_tool_call(name, arguments) for name, arguments in calls]
        fields.setdefault("finish_reason", "tool_calls")
        return cls.completion(message, **fields)

    @classmethod
    def tool_call(cls, name: str, arguments: Mapping[str, Any] | str, **fields: Any) -> Reply:
        """A single tool call."""
        return cls.tool_calls([(name, arguments)], **fields)

    @classmethod
    def raw(cls, body: str | bytes | Mapping[str, Any] | list[Any], *, status: int = 200, **fields: Any) -> Reply:
        """A raw body: bytes and str as they are, anything else as JSON."""
        data = body.encode() if isinstance(body, str) else body if isinstance(body, bytes) else json.dumps(body).encode()
        return cls(status=status, body=data, **fields)

    @classmethod
    def error(
        cls, status: int, message: str = "scripted error", *, code: str | None = None, retry_after: float | str | None = None, **fields: Any
    ) -> Reply:
        """An OpenAI-style error document, with a Retry-After header when given."""
        headers = dict(fields.pop("headers", {}))
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        document = {"error": {"message": message, "type": "invalid_request_error" if status < 500 else "server_error", "code": code, "param": None}}
        return cls.raw(document, status=status, headers=headers, **fields)

    @classmethod
    def context_overflow(cls) -> Reply:
        """The 400 OpenAI sends when the prompt does not fit the context."""
        return cls.error(
            400, "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.", code="context_length_exceeded"
        )

    @classmethod
    def drop_connection(cls) -> Reply:
        """Close the socket without answering."""
        return cls(drop=True)

    def after(self, delay_s: float) -> Reply:
        """This reply, sent `delay_s` seconds later."""
        return attrs.evolve(self, delay_s=delay_s)


def _message(content: str | None, reasoning: str | None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    return message


def _tool_call(name: str, arguments: Mapping[str, Any] | str) -> dict[str, Any]:
    encoded = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"id": f"call_{next(_call_ids)}", "type": "function", "function": {"name": name, "arguments": encoded}}


@attrs.frozen(kw_only=True)
class ReceivedRequest:
    """A request as the server read it; header names lower-cased, body parsed when it is JSON."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: Any = None
    received_at: float = 0.0
    """time.monotonic() when the request was read."""


Responder = Callable[[dict[str, Any]], "Reply | Mapping[str, Any]"]


def echo_responder(body: dict[str, Any]) -> Reply:
    """Answers with the text of the last message (the default)."""
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content")
    return Reply.text(content if isinstance(content, str) and content else "ok")


EMBEDDING_DIMENSIONS = 64


def hashed_vector(text: str, dimensions: int = EMBEDDING_DIMENSIONS) -> list[float]:
    """A deterministic embedding: each lower-cased word adds +1 or -1 at a position picked by its sha256.

    Texts sharing words get a higher cosine, so a ranking by it is meaningful enough to test with.
    """
    vector = [0.0] * dimensions
    for word in re.findall(r"\w+", text.lower()):
        digest = hashlib.sha256(word.encode()).digest()
        vector[int.from_bytes(digest[:4], "big") % dimensions] += 1.0 if digest[4] & 1 else -1.0
    return vector


class FakeOpenAIServer(BackgroundServer):
    """An OpenAI-protocol server on 127.0.0.1: `POST /v1/chat/completions`, `POST /v1/responses`, `POST /v1/embeddings`
    and `GET /v1/models`.

    Completions are answered from `replies` in order, then by `responder(body)`, which returns a `Reply` or
    a plain assistant message (`choices[0].message`, e.g. from a plugin that does not import this module). With `api_key`
    set, a request without `Authorization: Bearer <api_key>` gets 401. `latency_s` delays every
    completion reply. A long benchmark can pass `record=False`: requests are kept without headers and bodies
    (method, path and time only). With `record` on, `recording()` gives every completion exchange (request body as
    received, key order kept, and the reply document sent) in the JSON-lines shape `write_recording` writes, and
    `replay_responder` answers from such a recording, in order. Embeddings are `embedder(text)` for each input
    (by default `hashed_vector`), sent as lists of numbers or, when asked, as base64 of float32 values; an
    embedder that raises gets a 500.
    """

    thread_name = "fake-openai"

    def __init__(
        self,
        responder: Responder | None = None,
        *,
        replies: Iterable[Reply] = (),
        api_key: str | None = None,
        latency_s: float = 0.0,
        models: Iterable[str] = ("fake-model",),
        record: bool = True,
        embedder: Callable[[str], list[float]] | None = None,
    ) -> None:
        self.responder = responder or echo_responder
        self.embedder = embedder or hashed_vector
        self.api_key = api_key
        self.latency_s = latency_s
        self.models = list(models)
        self.record = record
        self._queue: collections.deque[Reply] = collections.deque(replies)
        self._lock = threading.Lock()
        self._requests: list[ReceivedRequest] = []
        self._exchanges: list[dict[str, Any]] = []
        self._errors: list[BaseException] = []
        self._in_flight = 0
        self._max_in_flight = 0
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()
        self.port = 0

    # ----------------------------------------------------------------------- what tests read

    @property
    def base_url(self) -> str:
        """The URL clients take as their base (`http://127.0.0.1:PORT/v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[ReceivedRequest]:
        """Every request read so far, in order (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def completions(self) -> list[Any]:
        """Bodies of the chat-completion requests read so far."""
        return [r.body for r in self.requests if r.path == "/v1/chat/completions"]

    @property
    def responses(self) -> list[Any]:
        """Bodies of the Responses API requests read so far (as sent, not turned into chat bodies)."""
        return [r.body for r in self.requests if r.path == "/v1/responses"]

    @property
    def embeddings(self) -> list[Any]:
        """Bodies of the embeddings requests read so far."""
        return [r.body for r in self.requests if r.path == "/v1/embeddings"]

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions the responder raised (each was answered with a 500)."""
        with self._lock:
            return list(self._errors)

    @property
    def max_in_flight(self) -> int:
        """The most completion requests the server was answering at once."""
        return self._max_in_flight

    def recording(self) -> list[dict[str, Any]]:
        """Every completion exchange so far: {"n", "path", "body", "reply"}, n from 1 (a copy)."""
        with self._lock:
            return list(self._exchanges)

    def write_recording(self, path: str | Path) -> None:
        """The exchanges as JSON lines, one object per request, in the order received."""
        lines = [json.dumps(exchange, ensure_ascii=False) + "\n" for exchange in self.recording()]
        Path(path).write_text("".join(lines), encoding="utf-8")

    def push(self, *replies: Reply) -> None:
        """Queue more replies (served before the responder)."""
        self._queue.extend(replies)

    # ----------------------------------------------------------------------- life cycle

    async def open(self) -> None:
        """Bind a free port on the running loop."""
        # A large backlog: a benchmark opens hundreds of connections at once, and a dropped SYN costs a second.
        self._server = await asyncio.start_server(self._serve_connection, "127.0.0.1", 0, backlog=2048)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and cancel open connections (delayed replies included)."""
        if self._server is None:
            return
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        await self._server.wait_closed()
        self._server = None

    # ----------------------------------------------------------------------- HTTP

    async def _serve_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            while True:
                request = await _read_request(reader)
                if request is None:
                    return
                response = await self._answer(request)
                if response is None:
                    return
                writer.write(response)
                await writer.drain()
                if request.headers.get("connection", "").lower() == "close":
                    return
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            return
        except asyncio.CancelledError:
            # Only close() cancels a connection; ending quietly keeps asyncio from logging each one as an error.
            return
        finally:
            self._handlers.discard(task)
            writer.close()

    async def _answer(self, request: ReceivedRequest) -> bytes | None:
        kept = request if self.record else ReceivedRequest(method=request.method, path=request.path, headers={}, received_at=request.received_at)
        with self._lock:
            self._requests.append(kept)
        if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return _render(Reply.error(401, "Incorrect API key provided.", code="invalid_api_key"))
        if request.method == "GET" and request.path == "/v1/models":
            data = [{"id": m, "object": "model", "created": 0, "owned_by": "fake"} for m in self.models]
            return _render(Reply.raw({"object": "list", "data": data}))
        if request.method != "POST" or request.path not in ("/v1/chat/completions", "/v1/responses", "/v1/embeddings"):
            return _render(Reply.error(404, f"no route {request.method} {request.path}"))
        if not isinstance(request.body, dict):
            return _render(Reply.error(400, "the request body is not a JSON object"))
        if request.path == "/v1/embeddings":
            return self._embed(request.body)
        return await self._complete(request.body, request.path)

    def _embed(self, body: dict[str, Any]) -> bytes:
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return _render(Reply.error(400, "input must be a text or a non-empty list of texts"))
        try:
            vectors = [self.embedder(text) for text in texts]
        except Exception as exc:  # noqa: BLE001 - reported to the test through .errors and a 500
            with self._lock:
                self._errors.append(exc)
            return _render(Reply.error(500, f"embedder raised {type(exc).__name__}: {exc}"))
        packed = body.get("encoding_format") == "base64"
        data = [
            {"object": "embedding", "index": i, "embedding": base64.b64encode(struct.pack(f"<{len(v)}f", *v)).decode() if packed else v}
            for i, v in enumerate(vectors)
        ]
        tokens = sum(len(text.split()) for text in texts)
        return _render(
            Reply.raw(
                {"object": "list", "data": data, "model": str(body.get("model", "")), "usage": {"prompt_tokens": tokens, "total_tokens": tokens}}
            )
        )

    async def _complete(self, body: dict[str, Any], path: str = "/v1/chat/completions") -> bytes | None:
        self._in_flight += 1
        self._max_in_flight = max(self._max_in_flight, self._in_flight)
        try:
            responses = path == "/v1/responses"
            reply = self._next_reply(responses_as_chat(body) if responses else body)
            if reply.drop:
                return None
            if self.latency_s or reply.delay_s:
                await asyncio.sleep(self.latency_s + reply.delay_s)
            shape = "responses" if responses else "chat"
            document = None if reply.body is not None else _reply_document(reply, str(body.get("model", "")), shape, body)
            rendered = _render(reply, document=document, stream=shape if body.get("stream") else None, request=body)
            if self.record:
                self._keep_exchange(path, body, document if document is not None else _body_json(rendered))
            return rendered
        finally:
            self._in_flight -= 1

    def _keep_exchange(self, path: str, body: dict[str, Any], document: Any) -> None:
        with self._lock:
            self._exchanges.append({"n": len(self._exchanges) + 1, "path": path, "body": body, "reply": document})

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        try:
            return self._queue.popleft()
        except IndexError:
            pass
        try:
            reply = self.responder(body)
            return reply if isinstance(reply, Reply) else Reply.completion(reply)
        except Exception as exc:  # noqa: BLE001 - reported to the test through .errors and a 500
            with self._lock:
                self._errors.append(exc)
            return Reply.error(500, f"responder raised {type(exc).__name__}: {exc}")


def read_recording(path: str | Path) -> list[dict[str, Any]]:
    """A recording's exchanges (JSON lines of {"n", "path", "body", "reply"}), in order."""
    return [json.loads(line) for line in Path(path).read_text(encoding="utf-8").splitlines() if line.strip()]


def replay_responder(exchanges: Iterable[Mapping[str, Any]]) -> Responder:
    """A responder answering the k-th completion request with the k-th recorded reply's message (then an error).

    Exchanges recorded on `/v1/responses` are replayed too (their output items become the message).
    """
    replies = collections.deque(_recorded_reply(e["reply"]) for e in exchanges)

    def respond(body: dict[str, Any]) -> Reply:
        if not replies:
            raise RuntimeError("the recording has no more replies: the client sent more requests than were recorded")
        return replies.popleft()

    return respond


def _recorded_reply(document: Mapping[str, Any]) -> Reply:
    if "output" in document:
        return Reply.completion(_message_of_output(document["output"]), finish_reason="length" if document.get("status") == "incomplete" else None)
    return Reply.completion(document["choices"][0]["message"], finish_reason=document["choices"][0].get("finish_reason"))


def _message_of_output(items: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Responses output items back as one chat message."""
    texts = [part.get("text", "") for item in items if item.get("type") == "message" for part in item.get("content") or []]
    calls = [
        {"id": item["call_id"], "type": "function", "function": {"name": item["name"], "arguments": item["arguments"]}}
        for item in items
        if item.get("type") == "function_call"
    ]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(texts) if texts else None}
    if calls:
        message["tool_calls"] = calls
    return message


# --------------------------------------------------------------------------- the Responses API, as chat


def responses_as_chat(body: Mapping[str, Any]) -> dict[str, Any]:
    """A Responses API request as the chat-completions body responders read (model, messages, tools, tool_choice, stream)."""
    messages: list[dict[str, Any]] = []
    if body.get("instructions"):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input")
    for item in [{"role": "user", "content": items}] if isinstance(items, str) else items or []:
        _append_item(messages, item)
    chat: dict[str, Any] = {"model": body.get("model"), "messages": messages}
    tools = [
        {"type": "function", "function": {k: t[k] for k in ("name", "description", "parameters") if k in t}}
        for t in body.get("tools") or []
        if t.get("type") == "function"
    ]
    if tools:
        chat["tools"] = tools
    for key in ("tool_choice", "temperature", "stream"):
        if key in body:
            chat[key] = body[key]
    return chat


def _append_item(messages: list[dict[str, Any]], item: Mapping[str, Any]) -> None:
    kind = item.get("type", "message")
    if kind == "message":
        role = "system" if item.get("role") == "developer" else item.get("role")
        messages.append({"role": role, "content": _content_text(item.get("content"))})
    elif kind == "function_call":
        call = {"id": item.get("call_id"), "type": "function", "function": {"name": item.get("name"), "arguments": item.get("arguments", "{}")}}
        if messages and messages[-1]["role"] == "assistant":
            messages[-1].setdefault("tool_calls", []).append(call)
        else:
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
    elif kind == "function_call_output":
        messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": _content_text(item.get("output"))})


def _content_text(content: Any) -> Any:
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return content


async def _read_request(reader: asyncio.StreamReader) -> ReceivedRequest | None:
    """The next request on a keep-alive connection, None at a clean end of stream."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as exc:
        if exc.partial:
            raise
        return None
    request_line, *header_lines = head.decode("latin-1").split("\r\n")
    method, target, _version = request_line.split(" ", 2)
    headers = {}
    for line in header_lines:
        if line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    raw = await reader.readexactly(int(headers.get("content-length", "0")))
    return ReceivedRequest(method=method, path=target.split("?", 1)[0], headers=headers, body=_json_or_none(raw), received_at=time.monotonic())


def _json_or_none(raw: bytes) -> Any:
    if not raw:
        return None
    try:
        return json.loads(raw)
    except ValueError:
        return None


def _body_json(rendered: bytes) -> Any:
    return _json_or_none(rendered.partition(b"\r\n\r\n")[2])


def _render(reply: Reply, *, document: dict[str, Any] | None = None, stream: str | None = None, request: Mapping[str, Any] | None = None) -> bytes:
    """The HTTP/1.1 response bytes for a reply: its raw body, or its document as JSON, or streamed ("chat" or "responses")."""
    content_type = reply.content_type
    if reply.body is not None or document is None:
        body = reply.body or b""
    elif stream is not None:
        body = _sse(document, stream, request or {})
        content_type = "text/event-stream"
    else:
        body = json.dumps(document).encode()
    reason = _PHRASES.get(reply.status, "Status")
    lines = [f"HTTP/1.1 {reply.status} {reason}", f"Content-Type: {content_type}", f"Content-Length: {len(body)}"]
    lines += [f"{name}: {value}" for name, value in reply.headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def _reply_document(reply: Reply, model: str, shape: str, request: Mapping[str, Any]) -> dict[str, Any]:
    return _responses_document(reply, model, request) if shape == "responses" else _completion_document(reply, model)


def _completion_document(reply: Reply, model: str) -> dict[str, Any]:
    document: dict[str, Any] = {
        "id": f"chatcmpl-{next(_call_ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": dict(reply.message or {}), "finish_reason": reply.finish_reason}],
    }
    if reply.prompt_tokens is not None or reply.completion_tokens is not None:
        prompt, completion = reply.prompt_tokens or 0, reply.completion_tokens or 0
        document["usage"] = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    return document


def _responses_document(reply: Reply, model: str, request: Mapping[str, Any]) -> dict[str, Any]:
    """The reply's message as a Responses API response: a `message` item for its text, a `function_call` per tool call."""
    message = dict(reply.message or {})
    output: list[dict[str, Any]] = []
    if message.get("content"):
        output.append(
            {
                "type": "message",
                "id": f"msg_{next(_call_ids)}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": message["content"], "annotations": []}],
            }
        )
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{next(_call_ids)}",
                "call_id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments", "{}"),
                "status": "completed",
            }
        )
    incomplete = reply.finish_reason == "length"
    document: dict[str, Any] = {
        "id": f"resp_{next(_call_ids)}",
        "object": "response",
        "created_at": int(time.time()),
        "model": model,
        "status": "incomplete" if incomplete else "completed",
        "output": output,
        "error": None,
        "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
        "instructions": request.get("instructions"),
        "metadata": {},
        "parallel_tool_calls": True,
        "temperature": request.get("temperature"),
        "top_p": request.get("top_p"),
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools") or [],
        "usage": None,
    }
    if reply.prompt_tokens is not None or reply.completion_tokens is not None:
        prompt, completion = reply.prompt_tokens or 0, reply.completion_tokens or 0
        document["usage"] = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        }
    return document


def _sse(document: dict[str, Any], shape: str, request: Mapping[str, Any]) -> bytes:
    """A finished reply document as the Server-Sent Events of a streamed request."""
    if shape == "responses":
        events = [f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in _responses_stream(document)]
        return "".join(events).encode()
    usage = bool((request.get("stream_options") or {}).get("include_usage"))
    chunks = [f"data: {json.dumps(chunk)}\n\n" for chunk in _chat_stream(document, usage)]
    return ("".join(chunks) + "data: [DONE]\n\n").encode()


def _chat_stream(document: dict[str, Any], include_usage: bool) -> list[dict[str, Any]]:
    choice = document["choices"][0]
    message = choice["message"]
    head = {k: document[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if message.get("reasoning_content"):
        deltas.append({"reasoning_content": message["reasoning_content"]})
    if message.get("content"):
        deltas.append({"content": message["content"]})
    for index, call in enumerate(message.get("tool_calls") or []):
        deltas.append({"tool_calls": [{"index": index, **call}]})
    chunks = [{**head, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]} for delta in deltas]
    chunks.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice.get("finish_reason")}]})
    if include_usage and document.get("usage"):
        chunks.append({**head, "choices": [], "usage": document["usage"]})
    return chunks


def _responses_stream(document: dict[str, Any]) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {**document, "status": "in_progress", "output": []}}]
    for index, item in enumerate(document["output"]):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        if item["type"] == "message":
            text = item["content"][0]["text"]
            at = {"item_id": item["id"], "output_index": index, "content_index": 0}
            events += [
                {"type": "response.content_part.added", **at, "part": {**item["content"][0], "text": ""}},
                {"type": "response.output_text.delta", **at, "delta": text},
                {"type": "response.output_text.done", **at, "text": text},
                {"type": "response.content_part.done", **at, "part": item["content"][0]},
            ]
        else:
            at = {"item_id": item["id"], "output_index": index}
            events += [
                {"type": "response.function_call_arguments.delta", **at, "delta": item["arguments"]},
                {"type": "response.function_call_arguments.done", **at, "arguments": item["arguments"]},
            ]
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    events.append({"type": "response.completed" if document["status"] == "completed" else "response.incomplete", "response": document})
    return [{**event, "sequence_number": n} for n, event in enumerate(events)]
