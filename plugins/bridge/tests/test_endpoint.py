"""The endpoint alone: the four shapes (chat and Responses, plain and streamed), auth by token, errors, ledger rows."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import httpx
import pytest
from bench_bridge.endpoint import Endpoint
from bench_llm.testing import ScriptedModel

from bench_kernel import (
    ChatRequest,
    ChatResponse,
    ConversationModels,
    ModelConfig,
    ModelHub,
    ModelResponseError,
    ModelUnavailableError,
    ToolCall,
)

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_customer",
            "description": "Get a customer.",
            "parameters": {"type": "object", "properties": {"customer_id": {"type": "string"}}, "required": ["customer_id"]},
        },
    }
]


@attrs.define
class Served:
    """A conversation as the endpoint sees it: the agent role's model access."""

    models: ConversationModels
    model: str = "agent-m"

    async def complete(self, request: ChatRequest) -> ChatResponse:
        return await self.models.complete("agent", request)


def reply(request: ChatRequest) -> ChatResponse:
    """Calls get_customer twice (parallel) until a tool result is in the history, then answers."""
    if any(m["role"] == "tool" for m in request.messages):
        return ChatResponse(content="Ada is on Home 300.", prompt_tokens=40, completion_tokens=7)
    if request.messages[-1].get("content") == "fail":
        raise ModelResponseError("scripted failure")
    if request.messages[-1].get("content") == "down":
        raise ModelUnavailableError("scripted outage")
    calls = [
        ToolCall(id="call_a", name="get_customer", arguments={"customer_id": "C-1001"}),
        ToolCall(id="call_b", name="get_customer", arguments={"customer_id": "C-1002"}),
    ]
    return ChatResponse(content=None, tool_calls=calls, prompt_tokens=30, completion_tokens=12)


def serve(test: Callable[[Endpoint, str, ScriptedModel, ConversationModels], Awaitable[None]]) -> None:
    """Run `test` with an endpoint serving one conversation over a scripted agent model."""

    async def go() -> None:
        backend = ScriptedModel(scripts={"agent-m": reply})
        hub = ModelHub(configs={"agent": ModelConfig(backend="scripted", model="agent-m")}, backends={"scripted": backend})
        models = ConversationModels(hub)
        endpoint = Endpoint.shared()
        token = endpoint.register(Served(models))
        try:
            await test(endpoint, token, backend, models)
        finally:
            endpoint.unregister(token)
            await endpoint.close()

    asyncio.run(go())


async def post(endpoint: Endpoint, token: str, path: str, body: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(trust_env=False) as client:
        return await client.post(endpoint.base_url + path, json=body, headers={"Authorization": f"Bearer {token}"})


def events(response: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: ") and line != "data: [DONE]"]


def test_chat_completions_plain_and_streamed() -> None:
    async def test(endpoint: Endpoint, token: str, backend: ScriptedModel, models: ConversationModels) -> None:
        body = {"model": "whatever", "messages": [{"role": "user", "content": "hi"}], "tools": TOOLS, "temperature": 0.2}
        plain = (await post(endpoint, token, "/chat/completions", body)).json()
        message = plain["choices"][0]["message"]
        assert [c["id"] for c in message["tool_calls"]] == ["call_a", "call_b"]
        assert json.loads(message["tool_calls"][1]["function"]["arguments"]) == {"customer_id": "C-1002"}
        assert plain["choices"][0]["finish_reason"] == "tool_calls" and plain["model"] == "agent-m"
        assert plain["usage"] == {"prompt_tokens": 30, "completion_tokens": 12, "total_tokens": 42}
        sent = backend.requests["agent-m"][0]
        assert sent.tools == TOOLS and sent.sampling == {"temperature": 0.2} and sent.messages == body["messages"]

        streamed = await post(endpoint, token, "/chat/completions", {**body, "stream": True, "stream_options": {"include_usage": True}})
        assert streamed.headers["content-type"].startswith("text/event-stream")
        assert streamed.text.rstrip().endswith("data: [DONE]")
        chunks = events(streamed)
        calls = [d for c in chunks for choice in c["choices"] for d in choice["delta"].get("tool_calls", [])]
        assert [(c["index"], c["id"]) for c in calls] == [(0, "call_a"), (1, "call_b")]
        assert chunks[-1]["usage"]["total_tokens"] == 42
        assert [e.prompt_tokens for e in models.ledger] == [30, 30] and {e.role for e in models.ledger} == {"agent"}

    serve(test)


def test_responses_plain_and_streamed() -> None:
    async def test(endpoint: Endpoint, token: str, backend: ScriptedModel, models: ConversationModels) -> None:
        tools = [
            {
                "type": "function",
                "name": "get_customer",
                "description": "Get a customer.",
                "parameters": TOOLS[0]["function"]["parameters"],
                "strict": True,
            }
        ]
        body = {"model": "m", "instructions": "Be brief.", "input": [{"role": "user", "content": "hi"}], "tools": tools}
        document = (await post(endpoint, token, "/responses", body)).json()
        assert document["object"] == "response" and document["status"] == "completed"
        assert [(i["type"], i["call_id"]) for i in document["output"]] == [("function_call", "call_a"), ("function_call", "call_b")]
        assert document["usage"]["input_tokens"] == 30 and document["usage"]["output_tokens"] == 12
        first = backend.requests["agent-m"][0]
        assert first.messages == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}]
        assert first.tools == [
            {
                "type": "function",
                "function": {"name": "get_customer", "description": "Get a customer.", "parameters": TOOLS[0]["function"]["parameters"]},
            }
        ]

        # The framework sends the calls back with their outputs: one assistant message with both calls, then two results.
        follow = {
            **body,
            "stream": True,
            "input": [
                {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
                *document["output"],
                {"type": "function_call_output", "call_id": "call_a", "output": '{"plan": "home-300"}'},
                {"type": "function_call_output", "call_id": "call_b", "output": "No customer C-1002."},
            ],
        }
        streamed = await post(endpoint, token, "/responses", follow)
        kinds = [e["type"] for e in events(streamed)]
        assert kinds[0] == "response.created" and kinds[-1] == "response.completed"
        assert "response.output_text.delta" in kinds
        assert [e["sequence_number"] for e in events(streamed)] == list(range(len(kinds)))
        assert events(streamed)[-1]["response"]["output"][0]["content"][0]["text"] == "Ada is on Home 300."
        second = backend.requests["agent-m"][1].messages
        assert [m["role"] for m in second] == ["system", "user", "assistant", "tool", "tool"]
        assert [c["id"] for c in second[2]["tool_calls"]] == ["call_a", "call_b"]
        assert len(models.ledger) == 2 and models.ledger[1].completion_tokens == 7

    serve(test)


def test_auth_by_token_and_errors() -> None:
    async def test(endpoint: Endpoint, token: str, backend: ScriptedModel, models: ConversationModels) -> None:
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
        refused = await post(endpoint, "not-a-token", "/chat/completions", body)
        assert refused.status_code == 401 and refused.json()["error"]["code"] == "invalid_api_key"
        async with httpx.AsyncClient(trust_env=False) as client:
            listed = await client.get(endpoint.base_url + "/models", headers={"Authorization": f"Bearer {token}"})
            assert listed.json()["data"][0]["id"] == "agent-m"
            assert (await client.post(endpoint.base_url + "/chat/completions", content=b"{")).status_code == 401
        bad = await post(endpoint, token, "/chat/completions", {"messages": "nope"})
        assert bad.status_code == 400 and bad.json()["error"]["type"] == "invalid_request_error"
        hosted = await post(endpoint, token, "/responses", {"input": "hi", "tools": [{"type": "web_search"}]})
        assert hosted.status_code == 400 and "function tools only" in hosted.json()["error"]["message"]
        failed = await post(endpoint, token, "/chat/completions", {"messages": [{"role": "user", "content": "fail"}]})
        assert failed.status_code == 502 and "scripted failure" in failed.json()["error"]["message"]
        down = await post(endpoint, token, "/responses", {"input": "down"})
        assert down.status_code == 503
        assert [e.error is not None for e in models.ledger] == [True, True]
        assert not backend.requests["agent-m"][0].tools

    serve(test)


def test_openai_sdk_parses_every_shape() -> None:
    openai = pytest.importorskip("openai", reason="pip install openai")

    async def test(endpoint: Endpoint, token: str, backend: ScriptedModel, models: ConversationModels) -> None:
        client = openai.AsyncOpenAI(
            base_url=endpoint.base_url, api_key=token, max_retries=0, http_client=openai.DefaultAsyncHttpxClient(trust_env=False)
        )
        chat = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS)
        assert [c.function.name for c in chat.choices[0].message.tool_calls] == ["get_customer", "get_customer"]
        stream = await client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], stream=True)
        assert [c async for c in stream][-1].choices[0].finish_reason == "tool_calls"
        response = await client.responses.create(model="m", input="hi")
        assert [item.call_id for item in response.output] == ["call_a", "call_b"] and response.usage.total_tokens == 42
        async with client.responses.stream(model="m", input="hi") as events:
            final = await events.get_final_response()
        assert final.output[1].name == "get_customer"
        models_page = await client.models.list()
        assert [m.id for m in models_page.data] == ["agent-m"]
        await client.close()

    serve(test)
