"""FakeOpenAIServer: a real HTTP server on 127.0.0.1 that answers as scripted."""

from __future__ import annotations

import asyncio
import json
import time

import httpx
import pytest

from bench_kernel.testing.fake_openai import FakeOpenAIServer, Reply


def test_scripted_replies_then_the_responder() -> None:
    replies = [Reply.text("first", reasoning="why"), Reply.tool_call("f", {"a": 1})]
    with FakeOpenAIServer(lambda body: Reply.text(f"echo {body['model']}"), replies=replies) as server, \
            httpx.Client(base_url=server.base_url) as http:
        bodies = [http.post("/chat/completions", json={"model": "m", "messages": []}).json() for _ in range(3)]
    assert server.base_url == f"http://127.0.0.1:{server.port}/v1"
    messages = [b["choices"][0]["message"] for b in bodies]
    assert messages[0] == {"role": "assistant", "content": "first", "reasoning_content": "why"}
    call = messages[1]["tool_calls"][0]
    assert call["function"] == {"name": "f", "arguments": json.dumps({"a": 1})} and call["type"] == "function"
    assert messages[2]["content"] == "echo m"
    assert bodies[0]["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert server.completions == [{"model": "m", "messages": []}] * 3
    assert server.requests[0].headers["content-type"] == "application/json"


def test_raw_bodies_errors_and_retry_after() -> None:
    with FakeOpenAIServer(replies=[Reply.raw("not json"), Reply.error(429, retry_after=3)]) as server, \
            httpx.Client(base_url=server.base_url) as http:
        garbage = http.post("/chat/completions", json={})
        limited = http.post("/chat/completions", json={})
        missing = http.get("/nowhere")
    assert (garbage.status_code, garbage.text) == (200, "not json")
    assert limited.status_code == 429 and limited.headers["retry-after"] == "3" and "error" in limited.json()
    assert missing.status_code == 404


def test_api_key_guards_both_endpoints() -> None:
    with FakeOpenAIServer(api_key="sk-good", models=["a", "b"]) as server, httpx.Client(base_url=server.base_url) as http:
        bad = [http.get("/models"), http.post("/chat/completions", json={}, headers={"Authorization": "Bearer sk-bad"})]
        good = http.get("/models", headers={"Authorization": "Bearer sk-good"})
    assert [r.status_code for r in bad] == [401, 401]
    assert [m["id"] for m in good.json()["data"]] == ["a", "b"]


def test_dropped_connection_and_delays() -> None:
    with FakeOpenAIServer(replies=[Reply.drop_connection(), Reply.text("late").after(0.2)], latency_s=0.1) as server, \
            httpx.Client(base_url=server.base_url) as http:
        with pytest.raises(httpx.RemoteProtocolError):
            http.post("/chat/completions", json={})
        started = time.monotonic()
        http.post("/chat/completions", json={})
        assert time.monotonic() - started >= 0.3


def test_a_failing_responder_answers_500_and_is_recorded() -> None:
    with FakeOpenAIServer(lambda body: 1 / 0) as server, httpx.Client(base_url=server.base_url) as http:
        assert http.post("/chat/completions", json={}).status_code == 500
    assert [type(e) for e in server.errors] == [ZeroDivisionError]


def test_serves_hundreds_of_concurrent_connections_on_the_callers_loop() -> None:
    async def go() -> FakeOpenAIServer:
        async with FakeOpenAIServer(latency_s=0.2) as server:
            # Many small pools, as bench-openai does: one httpx pool of 256 connections is slow on the client side.
            tls = httpx.create_ssl_context()
            clients = [httpx.AsyncClient(base_url=server.base_url, verify=tls) for _ in range(32)]
            replies = await asyncio.gather(*(clients[i % 32].post("/chat/completions", json={"messages": [{"content": str(i)}]})
                                             for i in range(256)))
            for client in clients:
                await client.aclose()
        assert [r.json()["choices"][0]["message"]["content"] for r in replies] == [str(i) for i in range(256)]
        return server

    assert asyncio.run(go()).max_in_flight == 256


def test_record_false_keeps_no_bodies() -> None:
    with FakeOpenAIServer(record=False) as server, httpx.Client(base_url=server.base_url) as http:
        reply = http.post("/chat/completions", json={"messages": [{"content": "hi"}]}).json()
    assert reply["choices"][0]["message"]["content"] == "hi"
    [request] = server.requests
    assert (request.method, request.path, request.headers, request.body) == ("POST", "/v1/chat/completions", {}, None)
    assert request.received_at > 0 and server.completions == [None] and server.max_in_flight == 1
