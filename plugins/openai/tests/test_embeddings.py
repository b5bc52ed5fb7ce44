"""Embeddings requests (POST /embeddings): the body, base64 float32 or number vectors, order, usage, errors and retries."""

from __future__ import annotations

import asyncio
import base64
import struct
from typing import Any

import pytest
from bench_knowledge import EmbeddingClient, EmbeddingRequest, Embeddings
from bench_openai.client import OpenAIClient
from bench_openai.parsing import embeddings_of

from bench_kernel import ModelConfig, ModelResponseError
from bench_kernel.testing import Reply, hashed_vector


def embed(config: ModelConfig, texts: list[str]) -> Embeddings:
    async def go() -> Embeddings:
        async with OpenAIClient(config) as client:
            return await client.embed(EmbeddingRequest(texts=texts))

    return asyncio.run(go())


def test_the_client_serves_embeddings_roles_too(serve, config_for) -> None:
    server = serve()
    client = OpenAIClient(config_for(server))
    assert isinstance(client, EmbeddingClient) and client.kind == "chat"


def test_vectors_come_as_base64_float32_like_the_sdks_and_in_order(serve, config_for, monkeypatch) -> None:
    server = serve(api_key="sk-test", embedder=lambda text: [0.1, -2.5, float(len(text))])
    monkeypatch.setenv("BENCH_TEST_EMBED_KEY", "sk-test")
    vectors = embed(config_for(server, api_key_env="BENCH_TEST_EMBED_KEY", sampling={"dimensions": 3}), ["a", "bbb"])
    float32 = struct.unpack("<f", struct.pack("<f", 0.1))[0]
    assert vectors.vectors == [[float32, -2.5, 1.0], [float32, -2.5, 3.0]]
    assert vectors.prompt_tokens == 2 and vectors.latency_ms is not None
    assert server.embeddings == [{"model": "fake-model", "input": ["a", "bbb"], "dimensions": 3, "encoding_format": "base64"}]
    assert server.requests[-1].headers["authorization"] == "Bearer sk-test"


def test_a_role_may_ask_for_numbers(serve, config_for) -> None:
    server = serve()
    vectors = embed(config_for(server, sampling={"encoding_format": "float"}), ["wire transfer"])
    assert vectors.vectors == [hashed_vector("wire transfer")] and server.embeddings[0]["encoding_format"] == "float"


def test_a_failing_embedder_is_retried_then_given_up(serve, config_for) -> None:
    failures = iter([True, False])

    def flaky(text: str) -> list[float]:
        if next(failures, False):
            raise RuntimeError("busy")
        return [1.0]

    assert embed(config_for(serve(embedder=flaky)), ["x"]).vectors == [[1.0]]

    def broken(text: str) -> list[float]:
        raise RuntimeError("down")

    server = serve(embedder=broken)
    with pytest.raises(Exception, match="gave up after 3 attempts") as caught:
        embed(config_for(server, max_retries=2), ["x"])
    assert caught.value.attempts == 3 == len(server.embeddings)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"data": []}, "expected 1 embeddings"),
        ({"data": [{"embedding": "***"}]}, "not base64"),
        ({"data": [{"embedding": base64.b64encode(b"abc").decode()}]}, "whole number of float32"),
        ({"data": [{"embedding": ["x"]}]}, "neither a list of numbers nor base64"),
        ({"data": [{"embedding": []}]}, "neither a list of numbers nor base64"),
        ({"data": [{"embedding": base64.b64encode(struct.pack("<f", float("nan"))).decode()}]}, "not a finite number"),
        ({"data": ["vector"]}, "not an object"),
    ],
)
def test_malformed_replies_are_response_errors(body: dict[str, Any], message: str) -> None:
    with pytest.raises(ModelResponseError, match=message):
        embeddings_of(body, 1, "m at u")


def test_items_are_put_in_index_order_and_usage_is_optional() -> None:
    body = {"data": [{"index": 1, "embedding": [2.0]}, {"index": 0, "embedding": [1.0]}]}
    assert embeddings_of(body, 2, "w") == ([[1.0], [2.0]], None)


def test_a_reply_with_an_error_status_is_an_http_error(serve, config_for) -> None:
    server = serve(replies=[Reply.error(400, "unused")])  # scripted replies are for completions, not embeddings
    assert embed(config_for(server), ["x"]).vectors == [hashed_vector("x")]
    from bench_kernel import ModelAuthError

    locked = serve(api_key="right")
    with pytest.raises(ModelAuthError):
        embed(config_for(locked), ["x"])
