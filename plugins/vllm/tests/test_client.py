"""The registered `vllm` backend against a real HTTP server on 127.0.0.1: servers with and without their parsers."""

from __future__ import annotations

import asyncio
import json

import pytest
from bench_vllm.client import DEFAULT_BASE_URL, VLLMClient
from bench_vllm.parsing import call_id
from structlog.testing import capture_logs

from bench_kernel import (
    ChatRequest,
    ConfigError,
    ModelConfig,
    ModelHTTPError,
    ModelResponseError,
    ToolCall,
    collect,
    get_plugin_manager,
)
from bench_kernel.testing import Reply

from .conftest import WITH_TOOLS

QWEN_CALL = '<tool_call>\n{"name": "get_customer", "arguments": {"customer_id": "C-1"}}\n</tool_call>'
NO_AUTO = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'


# --------------------------------------------------------------------------- tool calls in the text


def test_qwen_text_tool_call(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.text("Let me look you up.\n" + QWEN_CALL)])
    [response] = complete(vllm_config(server), WITH_TOOLS)
    assert response.tool_calls == [
        ToolCall(id=call_id(0, "get_customer", {"customer_id": "C-1"}), name="get_customer", arguments={"customer_id": "C-1"})
    ]
    assert response.content == "Let me look you up."
    assert response.raw is not None and QWEN_CALL in response.raw["choices"][0]["message"]["content"]


def test_mistral_text_tool_calls_in_both_forms(serve, vllm_config, complete) -> None:
    listed = '[TOOL_CALLS][{"name": "get_customer", "arguments": {"customer_id": "C-1"}}, {"name": "list_plans", "arguments": {}}]'
    named = '[TOOL_CALLS]get_customer[ARGS]{"customer_id": "C-2"}'
    server = serve(replies=[Reply.text(listed), Reply.text(named)])
    first, second = complete(vllm_config(server), WITH_TOOLS, WITH_TOOLS)
    assert [(c.name, c.arguments) for c in first.tool_calls] == [("get_customer", {"customer_id": "C-1"}), ("list_plans", {})]
    assert [(c.name, c.arguments) for c in second.tool_calls] == [("get_customer", {"customer_id": "C-2"})]
    assert first.content is None and second.content is None


def test_a_broken_block_is_a_model_response_error(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.text('<tool_call>{"name": "get_customer", "arguments": {"customer_id": }</tool_call>')])
    with pytest.raises(ModelResponseError, match="tool call 'get_customer' in a <tool_call> block is not valid JSON"):
        complete(vllm_config(server), WITH_TOOLS)


def test_tool_parser_none_leaves_the_text_alone(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.text(QWEN_CALL)])
    [response] = complete(vllm_config(server, tool_parser="none"), WITH_TOOLS)
    assert response.tool_calls == [] and response.content == QWEN_CALL


# --------------------------------------------------------------------------- native tool calls


def test_native_tool_calls_are_used_as_they_are(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.tool_calls([("get_customer", {"customer_id": "C-1"})], content="<think>first look up</think>")])
    [response] = complete(vllm_config(server), WITH_TOOLS)
    native_id = response.raw["choices"][0]["message"]["tool_calls"][0]["id"]  # type: ignore[index]
    assert response.tool_calls == [ToolCall(id=native_id, name="get_customer", arguments={"customer_id": "C-1"})]
    assert (response.content, response.reasoning, response.finish_reason) == (None, "first look up", "tool_calls")


def test_with_native_calls_the_text_is_not_read_for_more(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.tool_calls([("list_plans", {})], content="Also " + QWEN_CALL)])
    [response] = complete(vllm_config(server), WITH_TOOLS)
    assert [c.name for c in response.tool_calls] == ["list_plans"] and response.content == "Also " + QWEN_CALL


def test_native_calls_with_broken_arguments_are_refused_by_the_parent(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.tool_call("get_customer", '{"customer_id": ')])
    with pytest.raises(ModelResponseError, match="tool call 'get_customer': arguments are not valid JSON"):
        complete(vllm_config(server), WITH_TOOLS)


# --------------------------------------------------------------------------- reasoning


def test_reasoning_content_from_the_servers_reasoning_parser(serve, vllm_config, complete) -> None:
    server = serve(
        replies=[Reply.text("42", reasoning="6 times 7"), Reply.completion({"role": "assistant", "content": "ok", "reasoning": "newer field name"})]
    )
    first, second = complete(vllm_config(server), ChatRequest(messages=[{"role": "user", "content": "6*7?"}]), WITH_TOOLS)
    assert (first.content, first.reasoning) == ("42", "6 times 7")
    assert (second.content, second.reasoning) == ("ok", "newer field name")


def test_think_in_content_is_stripped_by_default(serve, vllm_config, complete) -> None:
    server = serve(
        replies=[Reply.text("<think>\nThey want a refund.\n</think>\n\nI can help."), Reply.text("They opened it in the prompt.</think>\n\nHello.")]
    )
    first, second = complete(vllm_config(server), WITH_TOOLS, WITH_TOOLS)
    assert (first.content, first.reasoning) == ("I can help.", "They want a refund.")
    assert (second.content, second.reasoning) == ("Hello.", "They opened it in the prompt.")


def test_think_in_content_is_kept_when_asked(serve, vllm_config, complete) -> None:
    text = "<think>why</think>\n\nI can help."
    server = serve(replies=[Reply.text(text)])
    [response] = complete(vllm_config(server, reasoning="keep"), WITH_TOOLS)
    assert (response.content, response.reasoning) == (text, "why")


def test_reasoning_field_and_think_block_are_joined(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.text("<think>second</think>Answer", reasoning="first")])
    [response] = complete(vllm_config(server), WITH_TOOLS)
    assert (response.content, response.reasoning) == ("Answer", "first\n\nsecond")


def test_a_reply_that_is_only_thinking_is_refused(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.text("<think>cut off by max_tokens", finish_reason="length")])
    with pytest.raises(ModelResponseError, match="neither content nor tool calls"):
        complete(vllm_config(server), WITH_TOOLS)


# --------------------------------------------------------------------------- a server without a tool parser


def test_refused_auto_tool_choice_falls_back_to_none_for_good(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.error(400, NO_AUTO), Reply.text(QWEN_CALL), Reply.text("Anything else?")])
    with capture_logs() as logs:
        first, second = complete(vllm_config(server), WITH_TOOLS, WITH_TOOLS)
    assert [body["tool_choice"] for body in server.completions] == ["auto", "none", "none"]
    assert all(body["tools"] == [WITH_TOOLS.tools[0]] for body in server.completions)  # type: ignore[index]
    assert [c.name for c in first.tool_calls] == ["get_customer"] and first.attempts == 2
    assert second.content == "Anything else?" and second.attempts == 1
    assert [entry["event"] for entry in logs] == ["vllm.no_tool_parser"]


def test_requests_in_flight_when_the_fallback_starts_fall_back_too(serve, vllm_config) -> None:
    def no_parser(body: dict) -> Reply:
        # The refusal comes late, so every first request is sent before any refusal arrives.
        return Reply.error(400, NO_AUTO).after(0.2) if body.get("tool_choice") == "auto" else Reply.text(QWEN_CALL)

    server = serve(no_parser)
    model = collect(get_plugin_manager(["vllm"])).get("model", "vllm")

    async def go() -> list:
        async with model.client(vllm_config(server)) as client:
            return await asyncio.gather(*(client.complete(WITH_TOOLS) for _ in range(4)))

    responses = asyncio.run(go())
    assert [len(r.tool_calls) for r in responses] == [1, 1, 1, 1]
    assert sorted(body["tool_choice"] for body in server.completions) == ["auto"] * 4 + ["none"] * 4


def test_tools_without_a_tool_choice_fall_back_too(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.error(400, NO_AUTO), Reply.text(QWEN_CALL)])
    [response] = complete(vllm_config(server), ChatRequest(messages=WITH_TOOLS.messages, tools=WITH_TOOLS.tools))
    assert ["tool_choice" in body for body in server.completions] == [False, True]
    assert server.completions[1]["tool_choice"] == "none" and len(response.tool_calls) == 1


def test_other_400s_are_not_retried(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.error(400, "messages: field required")])
    with pytest.raises(ModelHTTPError, match="field required"):
        complete(vllm_config(server), WITH_TOOLS)
    assert len(server.completions) == 1


def test_required_is_never_downgraded(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.error(400, NO_AUTO)])
    with pytest.raises(ModelHTTPError):
        complete(vllm_config(server), ChatRequest(messages=WITH_TOOLS.messages, tools=WITH_TOOLS.tools, tool_choice="required"))
    assert len(server.completions) == 1


def test_tools_in_prompt_sends_no_tools_field(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.text(QWEN_CALL)])
    [response] = complete(vllm_config(server, tools_in_prompt=True), WITH_TOOLS)
    [body] = server.completions
    assert "tools" not in body and "tool_choice" not in body
    system = body["messages"][0]
    assert system["role"] == "system" and system["content"].startswith("You are a helpdesk agent.\n\n# Tools")
    assert json.dumps(WITH_TOOLS.tools[0]["function"]) in system["content"]  # type: ignore[index]
    assert [c.name for c in response.tool_calls] == ["get_customer"]


def test_tool_parser_mistral_keeps_special_tokens_unless_sampling_says_otherwise(serve, vllm_config, complete) -> None:
    server = serve(replies=[Reply.text("a"), Reply.text("b"), Reply.text("c")])
    complete(vllm_config(server, tool_parser="mistral"), WITH_TOOLS, ChatRequest(messages=WITH_TOOLS.messages))
    overridden = ModelConfig(
        backend="vllm", model="m", base_url=server.base_url, sampling={"skip_special_tokens": True}, options={"tool_parser": "mistral"}
    )
    complete(overridden, WITH_TOOLS)
    assert [body.get("skip_special_tokens") for body in server.completions] == [False, None, True]


# --------------------------------------------------------------------------- configuration


def test_default_base_url_is_a_local_vllm() -> None:
    client = VLLMClient(ModelConfig(backend="vllm", model="Qwen/Qwen3-8B"))
    assert client.base_url == DEFAULT_BASE_URL
    asyncio.run(client.aclose())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"tool_parser": "qwen"}, "tool_parser must be one of auto, hermes, mistral, none"),
        ({"reasoning": "hide"}, "reasoning must be one of strip, keep"),
        ({"tools_in_prompt": "yes"}, "tools_in_prompt must be true or false"),
        ({"tools_in_prompt": True, "tool_parser": "mistral"}, "tool_parser must be auto or hermes"),
    ],
)
def test_bad_options_are_config_errors_naming_the_model(options, message) -> None:
    model = collect(get_plugin_manager(["vllm"])).get("model", "vllm")
    with pytest.raises(ConfigError, match=message) as caught:
        model.client(ModelConfig(backend="vllm", model="Qwen/Qwen3-8B", base_url="http://127.0.0.1:9/v1", options=options))
    assert "Qwen/Qwen3-8B" in str(caught.value)
