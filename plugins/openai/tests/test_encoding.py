"""Request bodies (orjson's bytes, json's for what orjson refuses) and the TLS context of a session."""

from __future__ import annotations

import asyncio
import json

import pytest
from bench_openai.client import OpenAIClient, _tls_context, encode_body

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
