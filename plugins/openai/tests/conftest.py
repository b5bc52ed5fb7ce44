"""Fixtures: real fake servers on 127.0.0.1 and a one-call way to drive a client against them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest
from bench_openai.client import OpenAIClient

from bench_kernel import ChatRequest, ChatResponse, ModelConfig
from bench_kernel.testing import FakeOpenAIServer

HELLO = ChatRequest(messages=[{"role": "user", "content": "hello"}])


@pytest.fixture
def serve(fake_openai_server: Callable[..., FakeOpenAIServer]) -> Callable[..., FakeOpenAIServer]:
    """The kernel's fake_openai_server fixture, under the short name these tests use."""
    return fake_openai_server


@pytest.fixture(params=["plain", "aiohttp", "httpx"])
def stack(request: pytest.FixtureRequest) -> str:
    """Each HTTP stack the client can use (the `http` option)."""
    return str(request.param)


@pytest.fixture
def config_for(stack: str) -> Callable[..., ModelConfig]:
    """A ModelConfig pointing at a server, with tiny retry delays unless overridden, on each HTTP stack."""

    def make(server: FakeOpenAIServer, **fields: Any) -> ModelConfig:
        options = {"retry_base_s": 0.001, "retry_max_s": 0.01, "http": stack, **fields.pop("options", {})}
        fields.setdefault("max_retries", 3)
        return ModelConfig(model="fake-model", base_url=server.base_url, options=options, **fields)

    return make


@pytest.fixture
def complete() -> Callable[..., ChatResponse]:
    """Open a client for a config, make one request (HELLO by default), close the client."""

    def run(config: ModelConfig, request: ChatRequest = HELLO) -> ChatResponse:
        async def go() -> ChatResponse:
            async with OpenAIClient(config) as client:
                return await client.complete(request)

        return asyncio.run(go())

    return run
