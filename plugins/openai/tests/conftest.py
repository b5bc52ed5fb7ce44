"""Fixtures: real fake servers on 127.0.0.1 and a one-call way to drive a client against them."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from bench_kernel import ChatRequest, ChatResponse, ModelConfig
from bench_kernel.fake_openai import FakeOpenAIServer
from bench_openai.client import OpenAIClient

HELLO = ChatRequest(messages=[{"role": "user", "content": "hello"}])


@pytest.fixture
def serve() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """Start a FakeOpenAIServer (arguments as its constructor); every one is stopped after the test."""
    started: list[FakeOpenAIServer] = []

    def start(*args: Any, **kwargs: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(*args, **kwargs).start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def config_for() -> Callable[..., ModelConfig]:
    """A ModelConfig pointing at a server, with tiny retry delays unless overridden."""

    def make(server: FakeOpenAIServer, **fields: Any) -> ModelConfig:
        options = {"retry_base_s": 0.001, "retry_max_s": 0.01, **fields.pop("options", {})}
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
