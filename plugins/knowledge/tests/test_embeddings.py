"""The embeddings kind through the run's model hub: a plain list of texts or a request, ledgered and priced under kind
`embeddings`, refused on a role whose backend gives another kind, and counted against the cost cap."""

from __future__ import annotations

import asyncio

import pytest
from bench_knowledge import EmbeddingClient, EmbeddingRequest, Embeddings, embed

from bench_kernel import BudgetExceededError, ConfigError, ConversationModels, Model, ModelClient, ModelConfig, ModelHub, Price


class Lengths(Model, EmbeddingClient):
    """Each text's length as its one-dimensional vector; a token per text."""

    def client(self, config: ModelConfig) -> Lengths:
        return self

    async def embed(self, request: EmbeddingRequest) -> Embeddings:
        return Embeddings(vectors=[[float(len(t))] for t in request.texts], prompt_tokens=len(request.texts))


class ChatOnly(Model, ModelClient):
    def client(self, config: ModelConfig) -> ChatOnly:
        return self


def hub(**fields: object) -> ModelHub:
    configs = {"embeddings": ModelConfig(backend="lengths", model="len"), "agent": ModelConfig(backend="chat", model="c")}
    return ModelHub(configs=configs, backends={"lengths": Lengths(name="lengths"), "chat": ChatOnly(name="chat")}, **fields)  # type: ignore[arg-type]


def test_texts_or_a_request_are_embedded_in_order_and_ledgered_with_their_price() -> None:
    models = ConversationModels(hub(prices={"len": Price(1.0, 0.0)}))
    plain = asyncio.run(embed(models, "embeddings", ["a", "bbb"]))
    asked = asyncio.run(embed(models, "embeddings", EmbeddingRequest(texts=["cc"])))
    assert plain.vectors == [[1.0], [3.0]] and asked.vectors == [[2.0]]
    assert [(e.role, e.kind, e.prompt_tokens, e.cached) for e in models.ledger] == [
        ("embeddings", "embeddings", 2, False),
        ("embeddings", "embeddings", 1, False),
    ]
    assert models.cost("embeddings") == pytest.approx(3e-6)


def test_a_role_of_another_kind_and_a_spent_budget_are_refused() -> None:
    models = ConversationModels(hub(max_cost=1e-6, prices={"len": Price(1.0, 0.0)}))
    with pytest.raises(ConfigError, match="the agent role needs an embeddings model, but backend 'chat' gives chat clients only"):
        asyncio.run(embed(models, "agent", ["a"]))
    asyncio.run(embed(models, "embeddings", ["a"]))
    with pytest.raises(BudgetExceededError):
        asyncio.run(embed(models, "embeddings", ["a"]))
    assert len(models.ledger) == 1


def test_the_embeddings_role_on_a_chat_only_backend_refuses_the_run_at_its_start() -> None:
    wrong = ModelHub(configs={"embeddings": ModelConfig(backend="chat", model="c")}, backends={"chat": ChatOnly(name="chat")})
    with pytest.raises(ConfigError, match="the embeddings role needs an embeddings model, but backend 'chat' gives chat clients only"):
        asyncio.run(wrong.check())
