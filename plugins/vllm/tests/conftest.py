"""Fixtures: real fake OpenAI servers on 127.0.0.1, and the registered `vllm` backend pointed at them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from bench_kernel import ChatRequest, ChatResponse, ModelConfig, collect, get_plugin_manager
from bench_kernel.testing import FakeOpenAIServer

HELLO = ChatRequest(messages=[{"role": "user", "content": "hello"}])
LOOKUP_TOOL = {
    "type": "function",
    "function": {
        "name": "get_customer",
        "description": "Find a customer by id.",
        "parameters": {"type": "object", "properties": {"customer_id": {"type": "string"}}, "required": ["customer_id"]},
    },
}
WITH_TOOLS = ChatRequest(
    messages=[{"role": "system", "content": "You are a helpdesk agent."}, {"role": "user", "content": "I am C-1."}],
    tools=[LOOKUP_TOOL],
    tool_choice="auto",
)


@pytest.fixture
def serve(fake_openai_server: Callable[..., FakeOpenAIServer]) -> Callable[..., FakeOpenAIServer]:
    """The kernel's fake_openai_server fixture, under the short name these tests use."""
    return fake_openai_server


@pytest.fixture
def vllm_config() -> Callable[..., ModelConfig]:
    """A `vllm` ModelConfig for Qwen/Qwen3-8B at a server, with the given backend options and no retries."""

    def make(server: FakeOpenAIServer, **options: Any) -> ModelConfig:
        return ModelConfig(backend="vllm", model="Qwen/Qwen3-8B", base_url=server.base_url, max_retries=0, options=options)

    return make


@pytest.fixture
def complete() -> Callable[..., list[ChatResponse]]:
    """Open the registered `vllm` backend's client for a config, make the requests in order, close it."""
    registry = collect(get_plugin_manager(["vllm", "openai"]))

    def run(config: ModelConfig, *requests: ChatRequest) -> list[ChatResponse]:
        async def go() -> list[ChatResponse]:
            async with registry.get("model", "vllm").client(config) as client:
                return [await client.complete(request) for request in requests or (HELLO,)]

        return asyncio.run(go())

    return run
