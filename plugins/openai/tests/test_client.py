"""OpenAIClient against a real HTTP server on 127.0.0.1: replies, retries, errors, parsing, auth, limits."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from bench_openai.client import OpenAIClient, RetryPolicy, parse_retry_after
from structlog.testing import capture_logs

from bench_kernel import (
    ChatRequest,
    ConfigError,
    ContextOverflowError,
    ModelAuthError,
    ModelConfig,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ModelUnavailableError,
    ToolCall,
)
from bench_kernel.testing import Reply

# --------------------------------------------------------------------------- replies


def test_text_reply(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.text("Hi there.", prompt_tokens=12, completion_tokens=3)])
    response = complete(config_for(server))
    assert response.content == "Hi there."
    assert response.tool_calls == []
    assert (response.finish_reason, response.prompt_tokens, response.completion_tokens) == ("stop", 12, 3)
    assert response.attempts == 1 and response.latency_ms is not None and response.latency_ms >= 0
    assert response.raw is not None and response.raw["choices"][0]["message"]["content"] == "Hi there."


def test_tool_call_reply(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.tool_calls([("get_customer", {"customer_id": "C-1"}), ("list_plans", {})])])
    response = complete(config_for(server))
    call_ids = [c["id"] for c in response.raw["choices"][0]["message"]["tool_calls"]]  # type: ignore[index]
    assert response.tool_calls == [
        ToolCall(id=call_ids[0], name="get_customer", arguments={"customer_id": "C-1"}),
        ToolCall(id=call_ids[1], name="list_plans", arguments={}),
    ]
    assert response.content is None and response.finish_reason == "tool_calls"


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_reasoning_is_kept_apart_from_content(serve, config_for, complete, field) -> None:
    server = serve(replies=[Reply.completion({"role": "assistant", "content": "42", field: "6 times 7"})])
    response = complete(config_for(server))
    assert (response.content, response.reasoning) == ("42", "6 times 7")


def test_content_parts_are_joined(serve, config_for, complete) -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "image_url", "image_url": {}}, {"type": "text", "text": "b"}]
    server = serve(replies=[Reply.completion({"role": "assistant", "content": parts})])
    assert complete(config_for(server)).content == "ab"


# --------------------------------------------------------------------------- retries


def test_429_honours_retry_after(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.error(429, "slow down", retry_after="0.5"), Reply.text("ok")])
    started = time.monotonic()
    response = complete(config_for(server, options={"retry_max_s": 5}))
    assert response.attempts == 2 and response.content == "ok"
    assert time.monotonic() - started >= 0.45
    first, second = server.requests
    assert second.received_at - first.received_at >= 0.45


def test_5xx_then_success(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.error(500), Reply.error(503), Reply.text("ok")])
    assert complete(config_for(server)).attempts == 3


def test_5xx_forever_gives_up_after_max_retries(serve, config_for, complete) -> None:
    server = serve(lambda body: Reply.error(502, "bad gateway"))
    with pytest.raises(ModelUnavailableError, match=r"after 3 attempts.*HTTP 502") as caught:
        complete(config_for(server, max_retries=2))
    assert len(server.completions) == 3
    assert isinstance(caught.value.__cause__, ModelHTTPError) and caught.value.__cause__.status == 502


def test_client_timeout_is_retried(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.text("late").after(2.0), Reply.text("ok")])
    response = complete(config_for(server, timeout_s=0.2))
    assert (response.content, response.attempts) == ("ok", 2)


def test_timeouts_forever_give_up_with_the_timeout_as_cause(serve, config_for, complete) -> None:
    server = serve(lambda body: Reply.text("late").after(2.0))
    with pytest.raises(ModelUnavailableError) as caught:
        complete(config_for(server, timeout_s=0.1, max_retries=1))
    assert isinstance(caught.value.__cause__, (httpx.TimeoutException, asyncio.TimeoutError))
    assert len(server.completions) == 2


def test_dropped_connection_is_retried(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.drop_connection(), Reply.text("ok")])
    assert complete(config_for(server)).attempts == 2


def test_unreachable_server_is_retried_then_unavailable(serve, config_for, complete) -> None:
    server = serve()
    server.stop()
    with pytest.raises(ModelUnavailableError, match=r"after 2 attempts.*(ConnectError|ClientConnectorError|ConnectionRefusedError)"):
        complete(config_for(server, max_retries=1))


def test_backoff_is_full_jitter_capped_and_reproducible() -> None:
    import random

    policy = RetryPolicy(max_retries=9, base_s=1.0, max_s=4.0)
    first = [policy.delay(n, random.Random(7)) for n in range(1, 8)]
    assert first == [policy.delay(n, random.Random(7)) for n in range(1, 8)]
    assert all(0 <= d <= min(4.0, 2 ** (n - 1)) for n, d in enumerate(first, start=1))
    assert policy.delay(1, random.Random(7), retry_after=30) == 4.0
    assert policy.delay(1, random.Random(7), retry_after=0.2) == 0.2


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"Retry-After": "2"}, 2.0),
        ({"Retry-After": "0.25"}, 0.25),
        ({"retry-after-ms": "1500", "Retry-After": "9"}, 1.5),
        ({"Retry-After": "soon"}, None),
        ({}, None),
        ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),
    ],
)
def test_parse_retry_after(headers, seconds) -> None:
    assert parse_retry_after(httpx.Headers(headers)) == seconds


@pytest.mark.parametrize("options", [{"retry_base_s": "fast"}, {"retry_max_s": -1}])
def test_bad_retry_options_are_config_errors(options) -> None:
    with pytest.raises(ConfigError, match="retry"):
        OpenAIClient(ModelConfig(model="m", options=options))


# --------------------------------------------------------------------------- errors that are not retried


@pytest.mark.parametrize("status", [400, 404, 422])
def test_other_4xx_are_not_retried(serve, config_for, complete, status) -> None:
    server = serve(lambda body: Reply.error(status, "bad request"))
    with pytest.raises(ModelHTTPError) as caught:
        complete(config_for(server))
    assert type(caught.value) is ModelHTTPError
    assert caught.value.status == status and not caught.value.retryable
    assert len(server.completions) == 1


@pytest.mark.parametrize("status", [401, 403])
def test_auth_errors_are_not_retried_and_hide_the_key(serve, config_for, complete, monkeypatch, status) -> None:
    monkeypatch.setenv("BENCH_TEST_KEY", "sk-wrong-secret")
    server = serve(lambda body: Reply.error(status, "Incorrect API key provided: sk-wrong-secret"))
    with capture_logs() as logs, pytest.raises(ModelAuthError) as caught:
        complete(config_for(server, api_key_env="BENCH_TEST_KEY"))
    assert caught.value.status == status
    assert "sk-wrong-secret" not in str(caught.value) and "sk-wrong-secret" not in repr(logs)
    assert len(server.completions) == 1


@pytest.mark.parametrize(
    "reply",
    [
        Reply.context_overflow(),
        Reply.error(400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."),
    ],
    ids=["openai", "vllm"],
)
def test_context_overflow(serve, config_for, complete, reply) -> None:
    server = serve(replies=[reply])
    with pytest.raises(ContextOverflowError):
        complete(config_for(server))
    assert len(server.completions) == 1


@pytest.mark.parametrize(
    "reply",
    [
        Reply.raw("not json"),
        Reply.raw({"object": "chat.completion"}),
        Reply.raw({"choices": []}),
        Reply.raw([1, 2]),
        Reply.raw({"error": {"message": "upstream failed"}}),
    ],
    ids=["garbage", "no-choices", "empty-choices", "not-an-object", "error-with-200"],
)
def test_unusable_bodies_are_response_errors(serve, config_for, complete, reply) -> None:
    server = serve(replies=[reply])
    with pytest.raises(ModelResponseError):
        complete(config_for(server))
    assert len(server.completions) == 1


@pytest.mark.parametrize("arguments", ['{"customer_id": ', '["C-1"]', "42"])
def test_broken_tool_arguments_name_the_tool(serve, config_for, complete, arguments) -> None:
    server = serve(replies=[Reply.tool_call("get_customer", arguments)])
    with pytest.raises(ModelResponseError, match="get_customer"):
        complete(config_for(server))


def test_tool_call_without_a_name_is_a_response_error(serve, config_for, complete) -> None:
    message = {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {}}]}
    server = serve(replies=[Reply.completion(message)])
    with pytest.raises(ModelResponseError, match="no function name"):
        complete(config_for(server))


@pytest.mark.parametrize(
    "message",
    [
        {"role": "assistant", "content": None},
        {"role": "assistant", "content": ""},
        {"role": "assistant", "content": None, "tool_calls": [], "reasoning_content": "hmm"},
    ],
)
def test_empty_message_is_a_response_error(serve, config_for, complete, message) -> None:
    server = serve(replies=[Reply.completion(message)])
    with pytest.raises(ModelResponseError, match="neither content nor tool calls"):
        complete(config_for(server))


# --------------------------------------------------------------------------- the request


def test_request_body_merges_sampling_and_sends_seed_tools_and_format(serve, config_for, complete) -> None:
    server = serve()
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {}}}}]
    request = ChatRequest(
        messages=[{"role": "user", "content": "hi"}],
        tools=tools,
        tool_choice="auto",
        sampling={"temperature": 0.0, "top_p": 0.5},
        seed=7,
        response_format={"type": "json_object"},
    )
    complete(config_for(server, sampling={"temperature": 0.7, "max_tokens": 100}), request)
    assert server.completions == [
        {
            "model": "fake-model",
            "messages": [{"role": "user", "content": "hi"}],
            "temperature": 0.0,
            "top_p": 0.5,
            "max_tokens": 100,
            "tools": tools,
            "tool_choice": "auto",
            "seed": 7,
            "response_format": {"type": "json_object"},
        }
    ]


def test_request_without_options_sends_only_model_and_messages(serve, config_for, complete) -> None:
    server = serve()
    complete(config_for(server), ChatRequest(messages=[{"role": "user", "content": "hi"}], tool_choice="auto"))
    assert server.completions == [{"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]}]


def test_authorization_comes_from_the_named_variable(serve, config_for, complete, monkeypatch) -> None:
    monkeypatch.setenv("BENCH_TEST_KEY", "sk-test-123")
    server = serve(api_key="sk-test-123")
    complete(config_for(server, api_key_env="BENCH_TEST_KEY"))
    assert server.requests[0].headers["authorization"] == "Bearer sk-test-123"


def test_no_variable_no_authorization_header(serve, config_for, complete) -> None:
    server = serve()
    complete(config_for(server))
    assert "authorization" not in server.requests[0].headers


@pytest.mark.parametrize("value", [None, ""])
def test_missing_key_variable_is_a_config_error_naming_it(monkeypatch, value) -> None:
    if value is None:
        monkeypatch.delenv("BENCH_TEST_MISSING_KEY", raising=False)
    else:
        monkeypatch.setenv("BENCH_TEST_MISSING_KEY", value)
    with pytest.raises(ConfigError, match="BENCH_TEST_MISSING_KEY"):
        OpenAIClient(ModelConfig(model="m", api_key_env="BENCH_TEST_MISSING_KEY"))


def test_concurrency_limit_is_respected(serve, config_for) -> None:
    server = serve(latency_s=0.1)
    config = config_for(server, max_concurrency=3)

    async def go() -> None:
        async with OpenAIClient(config) as client:
            await asyncio.gather(*(client.complete(ChatRequest(messages=[{"role": "user", "content": str(i)}])) for i in range(8)))

    asyncio.run(go())
    assert len(server.completions) == 8
    assert server.max_in_flight == 3


@pytest.mark.parametrize(("max_concurrency", "per_pool", "pools"), [(20, 8, 3), (10, 4, 3), (5, 8, 1)])
def test_every_slot_is_usable_when_connections_are_split_over_pools(serve, config_for, max_concurrency, per_pool, pools) -> None:
    server = serve(latency_s=0.1)
    config = config_for(server, max_concurrency=max_concurrency, options={"connections_per_pool": per_pool, "http": "httpx"})

    async def go() -> int:
        async with OpenAIClient(config) as client:
            await asyncio.gather(*(client.complete(ChatRequest(messages=[{"role": "user", "content": str(i)}])) for i in range(max_concurrency + 3)))
            return len(client.pools)

    assert asyncio.run(go()) == pools
    assert server.max_in_flight == max_concurrency


def test_an_unknown_http_stack_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="option http must be one of plain, aiohttp, httpx, not 'curl'"):
        OpenAIClient(ModelConfig(model="m", options={"http": "curl"}))


@pytest.mark.parametrize("value", [0, "8", True])
def test_bad_connections_per_pool_is_a_config_error(value) -> None:
    with pytest.raises(ConfigError, match="connections_per_pool"):
        OpenAIClient(ModelConfig(model="m", options={"connections_per_pool": value}))


def test_default_base_url_and_timeouts() -> None:
    client = OpenAIClient(ModelConfig(model="m", timeout_s=30))
    assert client.max_in_flight == 64  # a client made outside a run, from a configuration with no limit
    assert client.pools == []  # nothing is built before it is used
    pool = client._pool(0)
    assert client.pools == [pool]
    assert str(pool.base_url) == "https://api.openai.com/v1/"
    assert pool.timeout == httpx.Timeout(30, connect=10)
    asyncio.run(client.aclose())


def test_pools_are_built_as_the_load_needs_them(serve, config_for) -> None:
    server = serve(latency_s=0.0)
    config = config_for(server, max_concurrency=4096, options={"http": "httpx"})

    async def go() -> int:
        async with OpenAIClient(config) as client:
            for i in range(5):  # one at a time: the same warm slot serves each
                await client.complete(ChatRequest(messages=[{"role": "user", "content": str(i)}]))
            return len(client.pools)

    assert asyncio.run(go()) == 1


def test_an_unsupported_url_fails_at_once(complete) -> None:
    with pytest.raises(ModelError, match="request failed") as caught:
        complete(ModelConfig(model="m", base_url="ftp://127.0.0.1/v1"))
    assert not isinstance(caught.value, ModelUnavailableError)


# --------------------------------------------------------------------------- check()


def check(config: ModelConfig) -> None:
    async def go() -> None:
        async with OpenAIClient(config) as client:
            await client.check()

    asyncio.run(go())


def test_check_accepts_a_good_key(serve, config_for, monkeypatch) -> None:
    monkeypatch.setenv("BENCH_TEST_KEY", "sk-good")
    server = serve(api_key="sk-good")
    check(config_for(server, api_key_env="BENCH_TEST_KEY"))
    assert [(r.method, r.path) for r in server.requests] == [("GET", "/v1/models")]


def test_check_refuses_a_bad_key_without_retrying(serve, config_for, monkeypatch) -> None:
    monkeypatch.setenv("BENCH_TEST_KEY", "sk-bad")
    server = serve(api_key="sk-good")
    with pytest.raises(ModelAuthError) as caught:
        check(config_for(server, api_key_env="BENCH_TEST_KEY"))
    assert caught.value.status == 401 and "sk-bad" not in str(caught.value)
    assert len(server.requests) == 1


def test_check_reports_an_unreachable_endpoint(serve, config_for) -> None:
    server = serve()
    server.stop()
    with pytest.raises(ModelUnavailableError, match="unreachable"):
        check(config_for(server))


def test_the_proxy_from_the_environment_is_looked_up_once_and_no_proxy_is_honoured(monkeypatch) -> None:
    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)

    async def proxy_of(base_url: str) -> object:
        client = OpenAIClient(ModelConfig(model="m", base_url=base_url))
        await client.make_session().close()
        return client._proxy

    proxied = asyncio.run(proxy_of("http://models.internal/v1"))
    assert proxied is not None and str(proxied[0]) == "http://127.0.0.1:9"
    monkeypatch.setenv("NO_PROXY", "models.internal")
    assert asyncio.run(proxy_of("http://models.internal/v1")) is None
