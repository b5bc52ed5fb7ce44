"""Request bodies (orjson's bytes, json's for what orjson refuses), replies read as json reads them, and the TLS context of a session."""

from __future__ import annotations

import asyncio
import json

import pytest
from bench_openai.client import OpenAIClient, _tls_context, encode_body
from bench_openai.parsing import loads

from bench_kernel import ModelConfig


def test_body_is_compact_utf8_json_with_the_payload() -> None:
    payload = {
        "model": "m",
        "messages": [{"role": "user", "content": 'Zoë \u2028 \x01 "quoted"'}],
        "temperature": 0.0,
        "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
        "seed": 2**62,
    }
    body = encode_body(payload)
    assert json.loads(body) == payload
    assert "Zoë".encode() in body and b", " not in body and b": " not in body


def test_what_orjson_refuses_is_written_as_json_writes_it() -> None:
    payload = {"logit_bias": {50256: -100}, "seed": 2**70}
    assert encode_body(payload) == json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_lone_surrogate_is_never_sent() -> None:
    with pytest.raises(UnicodeEncodeError):
        encode_body({"messages": [{"role": "user", "content": "bad \ud800"}]})


@pytest.mark.parametrize(("base_url", "certifi_context"), [("https://api.example.invalid/v1", True), ("http://127.0.0.1:9/v1", False)])
def test_certifi_tls_only_where_tls_is_spoken(base_url: str, certifi_context: bool) -> None:
    async def connector_tls() -> object:
        session = OpenAIClient(ModelConfig(model="m", base_url=base_url)).make_session()
        try:
            return session.connector._ssl  # type: ignore[union-attr]
        finally:
            await session.close()

    assert (asyncio.run(connector_tls()) is _tls_context()) is certifi_context


@pytest.mark.parametrize(
    "text",
    [
        '{"choices": [{"message": {"content": "Zoë \\u2028"}}], "usage": {"prompt_tokens": 10}}',
        '{"a": 18446744073709551616, "b": -9223372036854775809, "c": "12345678901234567890"}',
        '{"a": NaN, "b": Infinity, "c": 1e400}',
        '{"a": "\\ud800"}',
        '{"a": 1, "b": 2, "a": 3}',
        '{"a": -0, "b": 1E2, "c": 0.1}',
    ],
)
def test_replies_are_read_as_json_reads_them(text: str) -> None:
    # orjson reads what it reads as json does; integers past 64 bits, NaN, lone surrogates go through json itself
    value, expected = loads(text), json.loads(text)
    assert repr(value) == repr(expected) and list(value) == list(expected)


@pytest.mark.parametrize("text", ["", "[1,", '{"a": 1} x', '\ufeff{"a": 1}', "[" * 5000 + "]" * 5000])
def test_what_json_refuses_is_refused(text: str) -> None:
    with pytest.raises((ValueError, RecursionError)):
        json.loads(text)
    with pytest.raises((ValueError, RecursionError)):
        loads(text)
