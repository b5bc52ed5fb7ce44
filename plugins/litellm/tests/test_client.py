"""LiteLLMClient through real litellm against a real HTTP server on 127.0.0.1 (`openai/...` models at its base_url)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from bench_litellm import INSTALL
from bench_litellm.client import import_litellm

from bench_kernel import (
    ChatRequest,
    ConfigError,
    ContextOverflowError,
    ModelAuthError,
    ModelConfig,
    ModelHTTPError,
    ModelResponseError,
    ModelUnavailableError,
    ToolCall,
)
from bench_kernel.testing import Reply

try:
    import_litellm()  # as the backend imports it (offline); a plain import would download litellm's price map
except ConfigError:
    pytest.skip(f"the litellm backend's tests need litellm: {INSTALL}", allow_module_level=True)

LOOKUP_TOOL = {
    "type": "function",
    "function": {
        "name": "get_customer",
        "description": "Find a customer.",
        "parameters": {"type": "object", "properties": {"customer_id": {"type": "string"}}},
    },
}

# --------------------------------------------------------------------------- replies


def test_text_reply_with_tokens_latency_and_the_raw_reply(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.text("Hi there.", prompt_tokens=12, completion_tokens=3)])
    response = complete(config_for(server))
    assert (response.content, response.tool_calls, response.finish_reason) == ("Hi there.", [], "stop")
    assert (response.prompt_tokens, response.completion_tokens, response.attempts) == (12, 3, 1)
    assert response.latency_ms is not None and response.latency_ms >= 0
    assert response.raw is not None and response.raw["choices"][0]["message"]["content"] == "Hi there."
    assert server.completions[0]["model"] == "fake"  # litellm takes the provider prefix off


def test_tool_calls_are_parsed(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.tool_calls([("get_customer", {"customer_id": "C-1"}), ("list_plans", {})])])
    response = complete(config_for(server))
    call_ids = [c["id"] for c in response.raw["choices"][0]["message"]["tool_calls"]]  # type: ignore[index]
    assert response.tool_calls == [
        ToolCall(id=call_ids[0], name="get_customer", arguments={"customer_id": "C-1"}),
        ToolCall(id=call_ids[1], name="list_plans", arguments={}),
    ]
    assert response.content is None and response.finish_reason == "tool_calls"


def test_reasoning_is_kept_apart_from_the_content(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.text("42", reasoning="6 times 7")])
    response = complete(config_for(server))
    assert (response.content, response.reasoning) == ("42", "6 times 7")


def test_the_request_reaches_the_provider_whole(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.text("ok")])
    request = ChatRequest(
        messages=[{"role": "user", "content": "find C-1"}],
        tools=[LOOKUP_TOOL],
        tool_choice="auto",
        sampling={"temperature": 0.5},
        seed=7,
        response_format={"type": "json_object"},
    )
    complete(config_for(server, sampling={"temperature": 0.0, "top_p": 0.9}), request)
    [body] = server.completions
    assert body["messages"] == request.messages and body["tools"] == [LOOKUP_TOOL] and body["tool_choice"] == "auto"
    assert (body["temperature"], body["top_p"], body["seed"]) == (0.5, 0.9, 7)  # the request's sampling over the role's
    assert body["response_format"] == {"type": "json_object"}
    assert server.requests[0].headers["authorization"].startswith("Bearer sk-litellm-test")


@pytest.mark.parametrize("arguments", ["{not json", "[1, 2]"])
def test_broken_tool_arguments_are_a_response_error_naming_the_tool(serve, config_for, complete, arguments) -> None:
    server = serve(replies=[Reply.tool_call("get_customer", arguments)])
    with pytest.raises(ModelResponseError, match="get_customer") as caught:
        complete(config_for(server))
    assert caught.value.attempts == 1 == len(server.completions)  # garbage is not retried


def test_an_empty_message_is_a_response_error(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.completion({"role": "assistant", "content": None})])
    with pytest.raises(ModelResponseError, match="neither content nor tool calls"):
        complete(config_for(server))


# --------------------------------------------------------------------------- retries: bench's, counted once


def test_429_is_retried_by_bench_honouring_retry_after(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.error(429, "slow down", retry_after="0.3"), Reply.text("ok")])
    response = complete(config_for(server, options={"retry_max_s": 5}))
    assert (response.content, response.attempts) == ("ok", 2)
    assert len(server.completions) == 2  # neither litellm nor the OpenAI SDK retried on its own
    first, second = server.requests
    assert second.received_at - first.received_at >= 0.25


def test_5xx_forever_gives_up_after_max_retries_with_every_attempt_counted(serve, config_for, complete) -> None:
    server = serve(lambda body: Reply.error(503, "overloaded"))
    with pytest.raises(ModelUnavailableError, match="gave up after 3 attempts") as caught:
        complete(config_for(server, max_retries=2))
    assert caught.value.attempts == 3 == len(server.completions)
    assert isinstance(caught.value.__cause__, ModelHTTPError) and caught.value.__cause__.status == 503


def test_a_timeout_is_retried(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.text("late").after(2.0), Reply.text("ok")])
    response = complete(config_for(server, timeout_s=0.3))
    assert (response.content, response.attempts) == ("ok", 2)


def test_a_dropped_connection_is_retried(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.drop_connection(), Reply.text("ok")])
    assert complete(config_for(server)).attempts == 2


# --------------------------------------------------------------------------- errors that are not retried


def test_a_refused_key_is_an_auth_error_at_once(serve, config_for, complete, monkeypatch) -> None:
    server = serve(replies=[Reply.text("never")])
    monkeypatch.setenv("WRONG_KEY", "sk-wrong-0000")
    with pytest.raises(ModelAuthError) as caught:
        complete(config_for(server, api_key_env="WRONG_KEY"))
    assert caught.value.status == 401 and caught.value.attempts == 1 == len(server.completions)
    assert "sk-wrong-0000" not in str(caught.value)


def test_a_context_overflow_is_not_retried(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.context_overflow()])
    with pytest.raises(ContextOverflowError) as caught:
        complete(config_for(server))
    assert caught.value.status == 400 and len(server.completions) == 1


def test_another_4xx_is_an_http_error_not_retried(serve, config_for, complete) -> None:
    server = serve(lambda body: Reply.error(400, "bad request"))
    with pytest.raises(ModelHTTPError) as caught:
        complete(config_for(server))
    assert (caught.value.status, caught.value.retryable, len(server.completions)) == (400, False, 1)


# --------------------------------------------------------------------------- cost


def test_an_unpriced_model_has_no_cost_and_a_priced_one_litellms_price(serve, config_for, complete) -> None:
    server = serve(lambda body: Reply.text("ok", prompt_tokens=1000, completion_tokens=1000))
    assert complete(config_for(server)).cost is None  # openai/fake: left to bench's price table, so unknown
    import litellm

    priced = complete(config_for(server, model="openai/gpt-4o-mini")).cost
    info = litellm.get_model_info("openai/gpt-4o-mini")
    assert priced == pytest.approx(1000 * info["input_cost_per_token"] + 1000 * info["output_cost_per_token"])
    assert priced is not None and priced > 0


# --------------------------------------------------------------------------- the credential check


def test_check_accepts_a_good_key_without_a_completion(serve, config_for, check) -> None:
    server = serve()
    check(config_for(server))
    assert [r.path for r in server.requests] == ["/v1/models"]


def test_check_refuses_a_wrong_key(serve, config_for, check, monkeypatch) -> None:
    server = serve()
    monkeypatch.setenv("WRONG_KEY", "sk-wrong-0000")
    with pytest.raises(ModelAuthError) as caught:
        check(config_for(server, api_key_env="WRONG_KEY"))
    assert caught.value.status == 401 and server.completions == []


def test_check_refuses_an_unreachable_endpoint(serve, config_for, check) -> None:
    server = serve()
    server.stop()
    with pytest.raises(ModelUnavailableError, match="unreachable"):
        check(config_for(server))


def test_check_refuses_a_provider_whose_key_variable_is_unset(check, monkeypatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"litellm needs ANTHROPIC_API_KEY .*--ROLE-api-key-env"):
        check(ModelConfig(backend="litellm", model="anthropic/claude-sonnet-4-20250514"))


# --------------------------------------------------------------------------- configuration


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"model": "no-provider-here"}, "cannot tell its provider"),
        ({"model": "openai/fake", "options": {"colour": "blue"}}, "no option 'colour'"),
        ({"model": "openai/fake", "options": {"litellm_params": {"num_retries": 3}}}, "may not set num_retries"),
        ({"model": "openai/fake", "options": {"retry_base_s": "fast"}}, "retry"),
        ({"model": "openai/fake", "api_key_env": "BENCH_LITELLM_UNSET"}, "BENCH_LITELLM_UNSET is not set"),
    ],
)
def test_a_bad_configuration_is_a_config_error(fields, message, monkeypatch) -> None:
    from bench_litellm import LiteLLMModel

    monkeypatch.delenv("BENCH_LITELLM_UNSET", raising=False)
    with pytest.raises(ConfigError, match=message):
        LiteLLMModel(name="litellm").client(ModelConfig(backend="litellm", **fields))


def test_litellm_params_reach_acompletion(serve, config_for, complete) -> None:
    server = serve(replies=[Reply.text("ok")])
    complete(config_for(server, options={"litellm_params": {"extra_body": {"top_k": 5}}}))
    assert server.completions[0]["top_k"] == 5


@pytest.mark.parametrize(("given", "kept"), [(None, "True"), ("true", "true")])  # "False" would try a download
def test_litellm_is_imported_with_its_bundled_price_map_unless_the_user_said_otherwise(given, kept) -> None:
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    if given is not None:
        env["LITELLM_LOCAL_MODEL_COST_MAP"] = given
    code = "import os; from bench_litellm.client import import_litellm; import_litellm(); print(os.environ['LITELLM_LOCAL_MODEL_COST_MAP'])"
    if given is None:
        env["HTTPS_PROXY"] = env["HTTP_PROXY"] = "http://127.0.0.1:9"  # a download would fail, and log it
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True, timeout=120)
    assert result.stdout.strip() == kept
    if given is None:
        assert "cost map" not in result.stderr.lower(), result.stderr
