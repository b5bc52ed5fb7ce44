"""Fixtures: real fake OpenAI servers on 127.0.0.1, and the registered `litellm` backend pointed at them as `openai/...`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from bench_kernel import ChatRequest, ChatResponse, ModelConfig, collect, get_plugin_manager
from bench_kernel.testing import FakeOpenAIServer

KEY = "sk-litellm-test-0123456789"
KEY_VARIABLE = "BENCH_LITELLM_TEST_KEY"
HELLO = ChatRequest(messages=[{"role": "user", "content": "hello"}])


@pytest.fixture
def serve(fake_openai_server: Callable[..., FakeOpenAIServer]) -> Callable[..., FakeOpenAIServer]:
    """The kernel's fake_openai_server fixture (requests need the key KEY)."""

    def start(*args: Any, **kwargs: Any) -> FakeOpenAIServer:
        kwargs.setdefault("api_key", KEY)
        return fake_openai_server(*args, **kwargs)

    return start


@pytest.fixture
def config_for(monkeypatch: pytest.MonkeyPatch) -> Callable[..., ModelConfig]:
    """A `litellm` ModelConfig for openai/fake at a server, its key in KEY_VARIABLE, with tiny retry delays."""
    monkeypatch.setenv(KEY_VARIABLE, KEY)

    def make(server: FakeOpenAIServer, **fields: Any) -> ModelConfig:
        options = {"retry_base_s": 0.001, "retry_max_s": 0.01, **fields.pop("options", {})}
        fields.setdefault("max_retries", 3)
        fields.setdefault("model", "openai/fake")
        fields.setdefault("api_key_env", KEY_VARIABLE)
        return ModelConfig(backend="litellm", base_url=server.base_url, options=options, **fields)

    return make


@pytest.fixture
def complete() -> Callable[..., ChatResponse]:
    """Open the registered `litellm` backend's client for a config, make one request (HELLO by default), close it."""
    registry = collect(get_plugin_manager(["litellm"]))

    def run(config: ModelConfig, request: ChatRequest = HELLO) -> ChatResponse:
        async def go() -> ChatResponse:
            client = registry.get("model", "litellm").client(config)
            try:
                return await client.complete(request)
            finally:
                await client.aclose()

        return asyncio.run(go())

    return run


@pytest.fixture
def check() -> Callable[[ModelConfig], None]:
    """Run the backend's credential check for a config."""
    registry = collect(get_plugin_manager(["litellm"]))

    def run(config: ModelConfig) -> None:
        asyncio.run(registry.get("model", "litellm").client(config).check())

    return run
