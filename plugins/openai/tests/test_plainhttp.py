"""bench-openai's plain-http stack against a raw TCP server on 127.0.0.1 that answers with scripted bytes."""

from __future__ import annotations

import asyncio
import gzip
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from bench_openai.client import OpenAIClient
from bench_openai.plainhttp import MAX_HEAD_BYTES, PlainHTTP, PlainHTTPError, ServerDisconnected

from bench_kernel import ChatRequest, ConfigError, ModelConfig, ModelError

REPLY = json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": {"prompt_tokens": 1}}).encode()
Answer = Callable[[bytes, asyncio.StreamWriter], Awaitable[bool]]
"""Given one request (head and body), write a reply; False closes the connection afterwards."""


def with_length(body: bytes = REPLY, status: str = "200 OK", extra: str = "") -> bytes:
    """A reply with a Content-Length."""
    return f"HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{extra}Content-Length: {len(body)}\r\n\r\n".encode() + body


def chunked(body: bytes = REPLY, size: int = 7) -> bytes:
    """A chunked reply, in chunks of `size` bytes, with a chunk extension and a trailer."""
    pieces = b"".join(f"{len(body[i : i + size]):x};ext=1\r\n".encode() + body[i : i + size] + b"\r\n" for i in range(0, len(body), size))
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + pieces + b"0\r\nX-Trailer: yes\r\n\r\n"


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """One request: its head, then as many body bytes as its Content-Length says."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")), 0)
    return head + await reader.readexactly(length)


def serve(answer: Answer, requests: list[bytes], connections: list[int]) -> Callable[[], Awaitable[asyncio.Server]]:
    """A server that reads requests one by one on each connection and answers each through `answer`."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connections.append(1)
        try:
            while True:
                request = await read_request(reader)
                requests.append(request)
                if not await answer(request, writer):
                    break
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass  # the client hung up, or the test is over
        finally:
            writer.close()

    return lambda: asyncio.start_server(handle, "127.0.0.1", 0)


def exchange(answer: Answer, count: int = 1, **client: Any) -> tuple[list[Any], list[bytes], int]:
    """`count` GET requests in a row through one PlainHTTP: each reply (or the error it raised), the requests, the connections."""
    requests: list[bytes] = []
    connections: list[int] = []

    async def go() -> list[Any]:
        server = await serve(answer, requests, connections)()
        port = server.sockets[0].getsockname()[1]
        http = PlainHTTP("127.0.0.1", port, {"Authorization": "Bearer k"}, **{"connect_timeout_s": 2.0, "read_timeout_s": 2.0, **client})
        found: list[Any] = []
        try:
            for _ in range(count):
                try:
                    found.append(await http.request("POST", "/v1/chat/completions", b'{"a": 1}'))
                except Exception as exc:  # noqa: BLE001 - the test looks at what was raised
                    found.append(exc)
        finally:
            await http.aclose()
            server.close()
            await server.wait_closed()
        return found

    return asyncio.run(go()), requests, len(connections)


def writes(*replies: bytes, keep: bool = True) -> Answer:
    """Answer the n-th request with the n-th reply (the last one again after that)."""
    sent = []

    async def answer(request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(replies[min(len(sent), len(replies) - 1)])
        sent.append(request)
        return keep

    return answer


def test_the_request_carries_the_headers_and_the_body() -> None:
    [reply], [request], _ = exchange(writes(with_length()))
    head, body = request.split(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /v1/chat/completions HTTP/1.1" and body == b'{"a": 1}'
    assert {"Authorization: Bearer k", "Content-Length: 8", "Accept-Encoding: identity"} <= set(lines)
    assert any(line.startswith("Host: 127.0.0.1:") for line in lines)
    assert (reply.status, reply.body, reply.headers["content-TYPE"]) == (200, REPLY, "application/json")


def test_connections_are_kept_alive_and_reused() -> None:
    replies, requests, connections = exchange(writes(with_length()), count=5)
    assert [r.status for r in replies] == [200] * 5 and len(requests) == 5 and connections == 1


@pytest.mark.parametrize("size", [1, 7, 4096])
def test_a_chunked_reply_is_read_whole_with_extensions_and_trailers(size: int) -> None:
    replies, _, connections = exchange(writes(chunked(size=size)), count=2)
    assert [r.body for r in replies] == [REPLY, REPLY] and connections == 1


def test_a_reply_without_a_length_runs_to_the_end_of_the_connection() -> None:
    reply = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + REPLY
    replies, _, connections = exchange(writes(reply, keep=False), count=2)
    assert [r.body for r in replies] == [REPLY, REPLY] and connections == 2


def test_connection_close_and_http_1_0_are_not_reused() -> None:
    replies, _, connections = exchange(writes(with_length(extra="Connection: close\r\n"), keep=False), count=2)
    assert [r.status for r in replies] == [200, 200] and connections == 2
    old = b"HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}"
    replies, _, connections = exchange(writes(old, keep=False), count=2)
    assert [r.body for r in replies] == [b"{}", b"{}"] and connections == 2


def test_connections_the_server_closed_while_idle_are_forgotten() -> None:
    async def go() -> tuple[int, int]:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await read_request(reader)
            writer.write(with_length())  # keep-alive promised, then closed at once (as an idle timeout would)
            await writer.drain()
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        http = PlainHTTP("127.0.0.1", server.sockets[0].getsockname()[1], {}, connect_timeout_s=2.0, read_timeout_s=2.0)
        try:
            for _ in range(20):
                await http.request("GET", "/v1/models")
                await asyncio.sleep(0.01)  # idle long enough for the close to arrive
            return len(http._open), len(http._idle)
        finally:
            await http.aclose()
            server.close()
            await server.wait_closed()

    assert asyncio.run(go()) <= (1, 1)


def test_a_kept_connection_the_server_closed_is_replaced_without_an_error() -> None:
    async def answer(request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(with_length())  # says keep-alive, then hangs up once the reply is out: the next request needs a new one
        return False

    replies, requests, connections = exchange(answer, count=3)
    assert [r.status for r in replies] == [200] * 3 and len(requests) == 3 and connections == 3


def test_a_server_hanging_up_mid_reply_is_a_retryable_disconnect() -> None:
    [error], _, _ = exchange(writes(with_length()[:-5], keep=False))
    assert isinstance(error, ServerDisconnected) and not error.before_reply and isinstance(error, ConnectionError)


def test_a_reply_that_never_comes_times_out() -> None:
    async def silent(request: bytes, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(5)
        return False

    [error], _, _ = exchange(silent, read_timeout_s=0.2)
    assert isinstance(error, TimeoutError)


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "not an HTTP/1.x status line"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "not a header line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -4\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not a chunk size"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\nContent-Length: 2\r\n\r\n{}", "encoding this client does not read"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\r\n{}", "does not decompress"),
        (b"HTTP/1.1 200 OK\r\n" + b"X-Pad: " + b"a" * MAX_HEAD_BYTES, "no end of the reply's headers"),
    ],
)
def test_what_is_not_http_is_a_clear_error(reply: bytes, message: str) -> None:
    [error], _, _ = exchange(writes(reply, keep=False))
    assert isinstance(error, PlainHTTPError) and message in str(error)


def test_compressed_interim_and_empty_replies() -> None:
    packed = gzip.compress(REPLY)
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" + with_length(packed, extra="Content-Encoding: gzip\r\n")
    empty = b"HTTP/1.1 204 No Content\r\n\r\n"
    replies, _, connections = exchange(writes(interim, empty, with_length()), count=3)
    assert [(r.status, r.body) for r in replies] == [(200, REPLY), (204, b""), (200, REPLY)] and connections == 1


def test_the_charset_a_reply_names_decodes_its_text() -> None:
    body = "Zoë".encode("latin-1")
    [reply], _, _ = exchange(writes(with_length(body, extra="Content-Type: text/plain; charset=ISO-8859-1\r\n")))
    assert reply.text() == "Zoë"
    [reply], _, _ = exchange(writes(with_length(body, extra="Content-Type: text/plain; charset=no-such-charset\r\n")))
    assert reply.text() == body.decode("utf-8", errors="replace")


def test_the_client_picks_plain_for_http_without_a_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    assert OpenAIClient(ModelConfig(model="m", base_url="http://127.0.0.1:9/v1")).http == "plain"
    assert OpenAIClient(ModelConfig(model="m", base_url="https://api.example.invalid/v1")).http == "aiohttp"
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    assert OpenAIClient(ModelConfig(model="m", base_url="http://models.internal/v1")).http == "aiohttp"
    with pytest.raises(ConfigError, match="http = plain speaks to http://HOST URLs only"):
        OpenAIClient(ModelConfig(model="m", base_url="https://api.example.invalid/v1", options={"http": "plain"}))


def test_a_garbled_reply_through_the_client_is_a_model_error_not_a_crash() -> None:
    requests: list[bytes] = []
    connections: list[int] = []

    async def go() -> Exception:
        server = await serve(writes(b"HTTP/1.1 OK maybe\r\n\r\n", keep=False), requests, connections)()
        port = server.sockets[0].getsockname()[1]
        config = ModelConfig(model="m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1, options={"http": "plain"})
        try:
            async with OpenAIClient(config) as client:
                await client.complete(ChatRequest(messages=[{"role": "user", "content": "hi"}]))
        except ModelError as exc:
            return exc
        finally:
            server.close()
            await server.wait_closed()
        raise AssertionError("no error")

    error = asyncio.run(go())
    assert "request failed: PlainHTTPError: not an HTTP/1.x status line" in str(error) and len(requests) == 1
