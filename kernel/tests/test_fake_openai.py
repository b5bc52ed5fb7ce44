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
    with (
        FakeOpenAIServer(lambda body: Reply.text(f"echo {body['model']}"), replies=replies) as server,
        httpx.Client(base_url=server.base_url) as http,
    ):
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
    with FakeOpenAIServer(replies=[Reply.raw("not json"), Reply.error(429, retry_after=3)]) as server, httpx.Client(base_url=server.base_url) as http:
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
    with (
        FakeOpenAIServer(replies=[Reply.drop_connection(), Reply.text("late").after(0.2)], latency_s=0.1) as server,
        httpx.Client(base_url=server.base_url) as http,
    ):
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
            replies = await asyncio.gather(*(clients[i % 32].post("/chat/completions", json={"messages": [{"content": str(i)}]}) for i in range(256)))
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


def _events(text: str) -> list[dict]:
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: ") and line != "data: [DONE]"]


def test_every_reply_in_all_four_shapes() -> None:
    """One scripted reply, served as a chat completion, a Responses response, and each streamed."""
    call = Reply.tool_calls([("f", {"a": 1}), ("g", {})], content="Checking.", prompt_tokens=7, completion_tokens=3)
    with FakeOpenAIServer(replies=[call] * 4) as server, httpx.Client(base_url=server.base_url) as http:
        chat = http.post("/chat/completions", json={"model": "m", "messages": []}).json()
        streamed = http.post("/chat/completions", json={"model": "m", "messages": [], "stream": True, "stream_options": {"include_usage": True}})
        response = http.post("/responses", json={"model": "m", "input": "hi"}).json()
        events = http.post("/responses", json={"model": "m", "input": "hi", "stream": True})
    ids = [c["id"] for c in chat["choices"][0]["message"]["tool_calls"]]
    chunks = _events(streamed.text)
    assert streamed.headers["content-type"] == "text/event-stream" and streamed.text.endswith("data: [DONE]\n\n")
    assert [d["content"] for c in chunks[:-1] for d in [c["choices"][0]["delta"]] if "content" in d] == ["", "Checking."]
    assert [d["tool_calls"][0]["function"]["name"] for c in chunks if c["choices"] for d in [c["choices"][0]["delta"]] if "tool_calls" in d] == [
        "f",
        "g",
    ]
    assert chunks[-1]["usage"]["total_tokens"] == 10 and chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    assert [i["type"] for i in response["output"]] == ["message", "function_call", "function_call"]
    assert response["output"][0]["content"][0]["text"] == "Checking." and response["output"][1]["call_id"] == ids[0]
    assert response["usage"]["input_tokens"] == 7 and response["usage"]["output_tokens"] == 3
    kinds = [e["type"] for e in _events(events.text)]
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
    assert kinds.count("response.output_item.done") == 3 and "event: response.output_text.delta" in events.text
    assert [r["path"] for r in server.recording()] == ["/v1/chat/completions"] * 2 + ["/v1/responses"] * 2
    assert server.recording()[3]["reply"]["object"] == "response"


def test_responders_read_responses_requests_as_chat_bodies() -> None:
    seen = []

    def responder(body: dict) -> Reply:
        seen.append(body)
        return Reply.text("ok")

    body = {
        "model": "m",
        "instructions": "Be brief.",
        "tool_choice": "auto",
        "tools": [{"type": "function", "name": "f", "description": "F.", "parameters": {"type": "object"}}],
        "input": [
            {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
            {"type": "function_call", "call_id": "c2", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "one"},
            {"type": "function_call_output", "call_id": "c2", "output": "two"},
        ],
    }
    with FakeOpenAIServer(responder) as server, httpx.Client(base_url=server.base_url) as http:
        http.post("/responses", json=body)
    assert seen[0]["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}},
                {"id": "c2", "type": "function", "function": {"name": "f", "arguments": "{}"}},
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "one"},
        {"role": "tool", "tool_call_id": "c2", "content": "two"},
    ]
    assert seen[0]["tools"] == [{"type": "function", "function": {"name": "f", "description": "F.", "parameters": {"type": "object"}}}]
    assert server.responses == [body] and server.completions == []


def test_a_responses_recording_replays() -> None:
    from bench_kernel.testing.fake_openai import replay_responder

    with FakeOpenAIServer(replies=[Reply.tool_call("f", {"a": 1})]) as server, httpx.Client(base_url=server.base_url) as http:
        http.post("/responses", json={"model": "m", "input": "hi"})
    replay = replay_responder(server.recording())({"messages": []})
    assert isinstance(replay, Reply) and replay.message is not None
    assert replay.message["tool_calls"][0]["function"] == {"name": "f", "arguments": json.dumps({"a": 1})}


def test_the_plan_change_world_plays_agent_and_customer() -> None:
    from bench_kernel.testing import plan_change_world

    world = plan_change_world()
    tools = [{"type": "function", "function": {"name": n}} for n in ("find_customer_by_email", "change_plan")]
    user = {"messages": [{"role": "system", "content": "you are a customer"}, {"role": "user", "content": "Hi!"}]}
    assert "Fiber 1000" in world(user)["content"]
    agent = {"tools": tools, "messages": [{"role": "user", "content": "faster please"}]}
    assert "email" in world(agent)["content"]
    after_email = {
        "tools": tools,
        "messages": [
            *agent["messages"],
            {"role": "assistant", "content": "email?"},
            {"role": "user", "content": "ada"},
            {"role": "assistant", "tool_calls": []},
            {"role": "tool", "content": "{}"},
        ],
    }
    parallel = world(after_email)["tool_calls"]
    assert [c["function"]["name"] for c in parallel] == ["get_customer", "list_plans"]
    assert len({c["id"] for c in parallel}) == 2
