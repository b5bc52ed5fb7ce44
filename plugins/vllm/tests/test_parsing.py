"""Reading tool calls and thinking from a reply's text, without HTTP: every format and its edge cases."""

from __future__ import annotations

import json

import pytest
from bench_vllm.parsing import ParsedText, call_id, parse_text, split_thinking

from bench_kernel import ConfigError, ModelResponseError, ToolCall


def calls(parsed: ParsedText) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in parsed.tool_calls]


def hermes(name: str, arguments: object, *, inside: str | None = None) -> str:
    body = inside if inside is not None else json.dumps({"name": name, "arguments": arguments})
    return f"<tool_call>\n{body}\n</tool_call>"


# --------------------------------------------------------------------------- plain text


def test_plain_text_is_left_exactly_as_it_is() -> None:
    assert parse_text("  Hello there.\n") == ParsedText(content="  Hello there.\n")


def test_no_text_stays_none() -> None:
    assert parse_text(None) == ParsedText(content=None)


# --------------------------------------------------------------------------- Hermes / Qwen


def test_one_hermes_call_leaves_no_content() -> None:
    parsed = parse_text(hermes("get_customer", {"customer_id": "C-1"}))
    assert calls(parsed) == [("get_customer", {"customer_id": "C-1"})]
    assert parsed.content is None and parsed.reasoning is None


def test_several_hermes_calls_keep_their_order_and_the_text_around_them() -> None:
    text = "Let me check both.\n" + hermes("get_customer", {"id": 1}) + "\n" + hermes("list_plans", {}) + "\nOne moment."
    parsed = parse_text(text)
    assert calls(parsed) == [("get_customer", {"id": 1}), ("list_plans", {})]
    assert parsed.content == "Let me check both.\nOne moment."


def test_whitespace_and_a_json_fence_inside_a_block_are_tolerated() -> None:
    fenced = '<tool_call>  \n```json\n  {"name": "lookup", "arguments": {"q": "x"}}\n```\n  </tool_call>'
    bare_fence = '<tool_call>```\n{"name": "lookup", "arguments": {}}\n```</tool_call>'
    assert calls(parse_text(fenced)) == [("lookup", {"q": "x"})]
    assert calls(parse_text(bare_fence)) == [("lookup", {})]


def test_arguments_may_be_a_json_string_holding_an_object() -> None:
    text = hermes("", None, inside=json.dumps({"name": "lookup", "arguments": json.dumps({"q": "x"})}))
    assert calls(parse_text(text)) == [("lookup", {"q": "x"})]


def test_missing_arguments_mean_none_and_parameters_is_read_too() -> None:
    text = hermes("", None, inside='{"name": "list_plans"}') + hermes("", None, inside='{"name": "f", "parameters": {"a": 1}}')
    assert calls(parse_text(text)) == [("list_plans", {}), ("f", {"a": 1})]


def test_a_last_block_without_its_closing_tag_is_still_read() -> None:
    parsed = parse_text('Checking.\n<tool_call>\n{"name": "lookup", "arguments": {"q": "x"}}')
    assert calls(parsed) == [("lookup", {"q": "x"})] and parsed.content == "Checking."


def test_a_block_holding_a_list_gives_each_call() -> None:
    text = hermes("", None, inside='[{"name": "a", "arguments": {}}, {"name": "b", "arguments": {"k": 2}}]')
    assert calls(parse_text(text)) == [("a", {}), ("b", {"k": 2})]


@pytest.mark.parametrize(
    ("inside", "named"),
    [
        ('{"name": "get_customer", "arguments": {"id": }}', "tool call 'get_customer'"),
        ("not json at all", "a tool call"),
        ('{"name": "refund", "arguments": {"amount": 5}', "tool call 'refund'"),
    ],
)
def test_broken_json_in_a_block_is_an_error_naming_the_tool_or_the_block(inside: str, named: str) -> None:
    with pytest.raises(ModelResponseError) as caught:
        parse_text("Sure.\n" + hermes("", None, inside=inside))
    assert named in str(caught.value) and "<tool_call> block" in str(caught.value)


@pytest.mark.parametrize(
    ("inside", "message"),
    [
        ("", "empty <tool_call> block"),
        ('{"arguments": {}}', "no function name"),
        ('{"name": "lookup", "arguments": [1, 2]}', "tool call 'lookup': arguments are not a JSON object"),
        ('{"name": "lookup", "arguments": "{broken"}', "tool call 'lookup': arguments are not valid JSON"),
        ("[]", "holds no call"),
    ],
)
def test_unusable_blocks_are_errors_never_dropped(inside: str, message: str) -> None:
    with pytest.raises(ModelResponseError, match=message):
        parse_text(hermes("", None, inside=inside))


# --------------------------------------------------------------------------- Mistral


def test_mistral_list_form_with_several_calls() -> None:
    text = '[TOOL_CALLS] [{"name": "get_customer", "arguments": {"id": "C-1"}}, {"name": "list_plans", "arguments": "{}"}]'
    parsed = parse_text(text)
    assert calls(parsed) == [("get_customer", {"id": "C-1"}), ("list_plans", {})]
    assert parsed.content is None


def test_mistral_list_form_keeps_the_text_before_and_after() -> None:
    parsed = parse_text('I will look it up. [TOOL_CALLS][{"name": "lookup", "arguments": {"q": "x"}}] (done)')
    assert calls(parsed) == [("lookup", {"q": "x"})]
    assert parsed.content == "I will look it up.\n(done)"


def test_mistral_name_args_form_one_and_several_calls() -> None:
    one = parse_text('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}')
    several = parse_text('[TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}[TOOL_CALLS]list_plans[ARGS]{}')
    assert calls(one) == [("get_weather", {"city": "Paris"})] and one.content is None
    assert calls(several) == [("get_weather", {"city": "Paris"}), ("list_plans", {})]


def test_mistral_name_args_form_tolerates_a_call_id_and_a_string_of_arguments() -> None:
    parsed = parse_text('[TOOL_CALLS]lookup[CALL_ID]a1b2c3d4e[ARGS]"{\\"q\\": \\"x\\"}"')
    assert calls(parsed) == [("lookup", {"q": "x"})]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('[TOOL_CALLS][{"name": "refund", "arguments": {"amount": }}]', "tool call 'refund' after \\[TOOL_CALLS\\]"),
        ('[TOOL_CALLS]refund[ARGS]{"amount": 5', "tool call 'refund': the arguments after \\[ARGS\\]"),
        ("[TOOL_CALLS]just some words", "neither a JSON list nor name\\[ARGS\\]"),
        ("[TOOL_CALLS]", "neither a JSON list nor name\\[ARGS\\]"),
        ("[TOOL_CALLS][]", "empty list"),
        ('[TOOL_CALLS][{"arguments": {}}]', "no function name"),
    ],
)
def test_broken_mistral_calls_are_errors(text: str, message: str) -> None:
    with pytest.raises(ModelResponseError, match=message):
        parse_text(text)


# --------------------------------------------------------------------------- ids


def test_ids_are_deterministic_distinct_and_end_in_nine_alphanumerics() -> None:
    text = hermes("lookup", {"q": "x"}) + hermes("lookup", {"q": "x"})
    first, second = parse_text(text).tool_calls
    assert [c.id for c in parse_text(text).tool_calls] == [first.id, second.id]
    assert first.id != second.id and first.id[-9:] != second.id[-9:]
    assert first.id.startswith("call_0_") and second.id.startswith("call_1_")
    assert all(c.id[-9:].isalnum() for c in (first, second))
    assert first.id == call_id(0, "lookup", {"q": "x"})


def test_ids_count_across_formats_and_think_blocks() -> None:
    text = hermes("a", {}) + "<think>x</think>" + hermes("b", {}) + '[TOOL_CALLS][{"name": "c", "arguments": {}}]'
    assert [c.id.split("_")[1] for c in parse_text(text).tool_calls] == ["0", "1", "2"]


# --------------------------------------------------------------------------- thinking


def test_think_block_goes_to_reasoning_and_is_stripped() -> None:
    parsed = parse_text("<think>\nThe user wants a refund.\n</think>\n\nI can help with that.")
    assert parsed == ParsedText(content="I can help with that.", reasoning="The user wants a refund.")


def test_a_reply_that_starts_inside_a_think_block() -> None:
    parsed = parse_text("The template opened the block.\n</think>\n\nHello!")
    assert (parsed.content, parsed.reasoning) == ("Hello!", "The template opened the block.")


def test_several_think_blocks_are_joined() -> None:
    parsed = parse_text("<think>one</think>A<think>two</think>B")
    assert (parsed.content, parsed.reasoning) == ("A\nB", "one\n\ntwo")


def test_an_empty_think_block_gives_no_reasoning() -> None:
    assert parse_text("<think>\n\n</think>\n\nHi") == ParsedText(content="Hi", reasoning=None)


def test_an_unclosed_think_block_runs_to_the_end() -> None:
    parsed = parse_text("Hmm.<think>still thinking when max_tokens struck")
    assert (parsed.content, parsed.reasoning) == ("Hmm.", "still thinking when max_tokens struck")


def test_only_thinking_leaves_no_content() -> None:
    assert parse_text("<think>only this</think>") == ParsedText(content=None, reasoning="only this")


def test_an_unclosed_think_block_ends_at_a_tool_call() -> None:
    parsed = parse_text("<think>I need the customer first.\n" + hermes("get_customer", {"id": 1}))
    assert calls(parsed) == [("get_customer", {"id": 1})]
    assert (parsed.content, parsed.reasoning) == (None, "I need the customer first.")


def test_tool_calls_written_inside_closed_thinking_are_not_calls() -> None:
    text = "<think>Maybe " + hermes("refund", {"amount": 5}) + " no.</think>Which order do you mean?"
    parsed = parse_text(text)
    assert parsed.tool_calls == [] and parsed.content == "Which order do you mean?"
    assert parsed.reasoning is not None and "refund" in parsed.reasoning


def test_broken_json_inside_thinking_is_not_an_error() -> None:
    assert parse_text("<think><tool_call>{oops</tool_call></think>Hi").content == "Hi"


def test_thinking_and_a_tool_call_together() -> None:
    parsed = parse_text("<think>Look up first.</think>\n\n" + hermes("get_customer", {"id": 7}))
    assert calls(parsed) == [("get_customer", {"id": 7})]
    assert (parsed.content, parsed.reasoning) == (None, "Look up first.")


def test_keep_leaves_thinking_in_the_content_too() -> None:
    text = "<think>why</think>\nHello"
    assert parse_text(text, reasoning="keep") == ParsedText(content=text, reasoning="why")


def test_keep_with_a_tool_call_removes_only_the_call() -> None:
    parsed = parse_text("<think>why</think>\n" + hermes("lookup", {}), reasoning="keep")
    assert calls(parsed) == [("lookup", {})]
    assert (parsed.content, parsed.reasoning) == ("<think>why</think>", "why")


def test_split_thinking_keeps_every_character() -> None:
    text = "a</think>b<think>c</think>d<think>e"
    segments = split_thinking(text)
    assert "".join(s.text for s in segments) == text
    assert [s.thought for s in segments] == ["a", None, "c", None, "e"]


# --------------------------------------------------------------------------- tool_parser


MIXED = "Hi " + hermes("from_hermes", {}) + ' [TOOL_CALLS][{"name": "from_mistral", "arguments": {}}]'


def test_auto_reads_both_formats() -> None:
    assert [c.name for c in parse_text(MIXED).tool_calls] == ["from_hermes", "from_mistral"]


def test_hermes_only_leaves_mistral_text_alone() -> None:
    parsed = parse_text(MIXED, tool_parser="hermes")
    assert [c.name for c in parsed.tool_calls] == ["from_hermes"]
    assert parsed.content is not None and "[TOOL_CALLS]" in parsed.content


def test_mistral_only_leaves_hermes_text_alone() -> None:
    parsed = parse_text(MIXED, tool_parser="mistral")
    assert [c.name for c in parsed.tool_calls] == ["from_mistral"]
    assert parsed.content is not None and "<tool_call>" in parsed.content


def test_none_reads_no_calls_but_still_reads_thinking() -> None:
    text = "<think>t</think>" + hermes("lookup", {})
    parsed = parse_text(text, tool_parser="none")
    assert parsed.tool_calls == [] and parsed.content == hermes("lookup", {}) and parsed.reasoning == "t"


def test_none_does_not_complain_about_broken_blocks() -> None:
    assert parse_text("<tool_call>{oops", tool_parser="none").content == "<tool_call>{oops"


def test_an_unclosed_think_block_ends_only_at_markers_of_parsed_formats() -> None:
    text = "<think>plan " + hermes("lookup", {})
    assert parse_text(text, tool_parser="mistral") == ParsedText(content=None, reasoning="plan " + hermes("lookup", {}))


@pytest.mark.parametrize(("option", "value"), [("tool_parser", "qwen"), ("reasoning", "drop")])
def test_unknown_modes_are_config_errors(option: str, value: str) -> None:
    with pytest.raises(ConfigError, match=option):
        parse_text("hi", **{option: value})


def test_a_custom_argument_parser_is_used_for_text_calls() -> None:
    def upper(name: str, arguments: object) -> dict:
        return {"seen": name.upper()}

    parsed = parse_text(hermes("lookup", {"q": 1}), parse_arguments=upper)
    arguments = {"seen": "LOOKUP"}
    assert parsed.tool_calls == [ToolCall(id=call_id(0, "lookup", arguments), name="lookup", arguments=arguments)]
