"""Dense search through the embeddings role and the LLM reranker through a judge role, against the test suite's
OpenAI-protocol server on 127.0.0.1 (bench-openai as the backend): vectors, caching, ledger, ratings, failures."""

from __future__ import annotations

import asyncio
import inspect
import json
import math
from collections.abc import Callable, Iterator
from typing import Any

import attrs
import pytest
from bench_knowledge import QWEN_QUERY_INSTRUCTION, Document, KnowledgeBase, knowledge_toolkit, resolve_variant
from bench_knowledge.dense import DENSE, cosine_ranking, normalized, query_text
from bench_knowledge.texts import packaged

from bench_kernel import (
    ConversationModels,
    ModelConfig,
    ModelHub,
    State,
    ToolContext,
    ToolError,
    Toolkit,
    collect,
    get_plugin_manager,
    load_profile,
)
from bench_kernel.testing import FakeOpenAIServer, Reply, hashed_vector

KB = KnowledgeBase.of(
    [
        Document(id="fees", title="Fees", content="annual fee card fee schedule"),
        Document(id="lost", title="Lost cards", content="lost card replacement shipping"),
        Document(id="wire", title="Wires", content="wire transfer limits international wire"),
        Document(id="empty", title="Empty", content=""),
        Document(id="save", title="Savings", content="savings account interest rate"),
    ]
)
Serve = Callable[..., FakeOpenAIServer]


@pytest.fixture(autouse=True)
def fresh_vectors() -> Iterator[None]:
    DENSE.clear()
    yield
    DENSE.clear()


def openai_backend() -> Any:
    """bench-openai's backend (this distribution's test extra), reached through its entry point."""
    return collect(get_plugin_manager(["openai"])).get("model", "openai")


def models_for(server: FakeOpenAIServer, **roles: dict[str, Any]) -> ConversationModels:
    configs = {
        role: ModelConfig(base_url=server.base_url, options={"retry_base_s": 0.001, "retry_max_s": 0.01}, max_retries=2, **fields)
        for role, fields in roles.items()
    }
    return ConversationModels(hub=ModelHub(configs=configs, backends={"openai": openai_backend()}))


def toolkit(models: ConversationModels, variant: str, profile: Any = None, **options: Any) -> Toolkit:
    cls = knowledge_toolkit(Toolkit, KB, resolve_variant(variant, options))
    return cls(State.from_records({}), context=ToolContext(models=models, profile=profile))


def search(tools: Toolkit, name: str = "KB_search", **arguments: Any) -> str:
    async def go() -> str:
        try:
            result = tools.call_tool(name, arguments)
            return str(await result if inspect.isawaitable(result) else result)
        finally:
            await tools.context.models.hub.aclose()

    return asyncio.run(go())


def ids(text: str) -> list[str]:
    return [line.split("ID: ", 1)[1] for line in text.splitlines() if line.startswith("   ID: ")]


def expected_ranking(query: str, k: int = 10) -> list[str]:
    docs = [normalized(hashed_vector(doc.content)) for doc in KB.documents]
    return [KB.documents[i].id for i, _ in cosine_ranking(hashed_vector(query), docs, k)]


# --------------------------------------------------------------------------- dense


def test_dense_search_ranks_by_cosine_and_embeds_documents_once(fake_openai_server: Serve) -> None:
    server = fake_openai_server()
    models = models_for(server, embeddings={"model": "text-embedding-3-large"})
    tools = toolkit(models, "openai_embeddings", top_k=3)

    async def searches() -> list[str]:
        try:
            return [await tools.call_tool("KB_search", {"query": q}) for q in ("lost card", "wire limits", "lost card")]
        finally:
            await models.hub.aclose()

    first, second, again = asyncio.run(searches())
    assert ids(first) == expected_ranking("lost card", 3) and ids(first)[0] == "lost"
    assert ids(second)[0] == "wire" and again == first
    inputs = [body["input"] for body in server.embeddings]
    assert inputs == [["lost card"], [d.content for d in KB.documents], ["wire limits"]]  # queries cached, documents once
    assert all(body["encoding_format"] == "base64" for body in server.embeddings)
    assert [(e.role, e.kind, e.prompt_tokens) for e in models.ledger] == [
        ("embeddings", "embeddings", 2),
        ("embeddings", "embeddings", 18),
        ("embeddings", "embeddings", 2),
    ]
    score = float(first.split("Score: ", 1)[1].split()[0])
    query, doc = normalized(hashed_vector("lost card")), normalized(hashed_vector(KB.documents[1].content))
    assert score == pytest.approx(sum(a * b for a, b in zip(query, doc, strict=True)), abs=5e-5)


def test_qwen_models_get_tau2s_query_instruction_and_documents_none(fake_openai_server: Serve) -> None:
    server = fake_openai_server()
    search(toolkit(models_for(server, embeddings={"model": "qwen/qwen3-embedding-8b"}), "qwen_embeddings"), query="fee")
    assert server.embeddings[0]["input"] == [f"Instruct: {QWEN_QUERY_INSTRUCTION}\nQuery:fee"]
    assert server.embeddings[1]["input"] == [d.content for d in KB.documents]
    assert query_text("fee", "Qwen3-Embedding-8B", None).startswith("Instruct: ")
    assert query_text("fee", "text-embedding-3-large", None) == "fee"
    assert query_text("fee", "qwen3", "") == "fee" and query_text("fee", "any", "Find rules") == "Instruct: Find rules\nQuery:fee"


def test_the_query_instruction_option_and_float_vectors(fake_openai_server: Serve) -> None:
    server = fake_openai_server()
    models = models_for(server, embeddings={"model": "m", "sampling": {"encoding_format": "float", "dimensions": 64}})
    text = search(toolkit(models, "openai_embeddings", query_instruction="Find bank rules"), query="savings interest")
    assert server.embeddings[0] == {
        "model": "m",
        "input": ["Instruct: Find bank rules\nQuery:savings interest"],
        "dimensions": 64,
        "encoding_format": "float",
    }
    assert ids(text)[0] == "save"


def test_conversations_searching_at_once_share_one_document_request(fake_openai_server: Serve) -> None:
    server = fake_openai_server(latency_s=0.0)
    models = models_for(server, embeddings={"model": "m"})
    tools = [toolkit(models, "openai_embeddings") for _ in range(6)]

    async def together() -> list[str]:
        try:
            return list(await asyncio.gather(*(t.call_tool("KB_search", {"query": f"card {n}"}) for n, t in enumerate(tools))))
        finally:
            await models.hub.aclose()

    results = asyncio.run(together())
    assert len(results) == 6
    assert sum(len(body["input"]) == len(KB.documents) for body in server.embeddings) == 1


def test_alltools_dense_search_takes_k_and_a_blank_query_is_an_error(fake_openai_server: Serve) -> None:
    server = fake_openai_server()
    text = search(toolkit(models_for(server, embeddings={"model": "m"}), "alltools"), "KB_search_dense", query="wire", k=2)
    assert ids(text) == expected_ranking("wire", 2)
    with pytest.raises(ToolError, match="the query is empty"):
        search(toolkit(models_for(server, embeddings={"model": "m"}), "alltools"), "KB_search_dense", query="  ")


def test_a_server_that_fails_or_miscounts_vectors_fails_the_search(fake_openai_server: Serve) -> None:
    from bench_kernel import ModelError

    def broken(text: str) -> list[float]:
        raise RuntimeError("no vectors today")

    server = fake_openai_server(embedder=broken)
    with pytest.raises(ModelError):
        search(toolkit(models_for(server, embeddings={"model": "m"}), "openai_embeddings"), query="fee")
    calls = iter(range(100))
    flaky = fake_openai_server(embedder=lambda text: hashed_vector(text) if next(calls) else _raise())
    assert ids(search(toolkit(models_for(flaky, embeddings={"model": "m"}), "openai_embeddings"), query="fee"))  # retried


def _raise() -> list[float]:
    raise RuntimeError("once")


def test_a_missing_embeddings_role_names_the_option() -> None:
    from bench_kernel import ConfigError

    models = ConversationModels(hub=ModelHub(configs={}, backends={}))
    with pytest.raises(ConfigError, match="--embeddings-model"):
        asyncio.run(toolkit(models, "openai_embeddings").call_tool("KB_search", {"query": "fee"}))


def test_cosine_ranking_handles_ties_zero_and_odd_vectors() -> None:
    docs = [normalized([1.0, 0.0]), normalized([1.0, 0.0]), normalized([0.0, 0.0]), [1.0, 0.0, 0.0]]
    assert cosine_ranking([2.0, 0.0], docs, 10) == [(0, 1.0), (1, 1.0), (2, 0.0), (3, 0.0)]
    assert cosine_ranking([0.0, 0.0], docs, 2) == [(0, 0.0), (1, 0.0)]
    assert math.isclose(sum(x * x for x in normalized([3.0, 4.0])), 1.0)


# --------------------------------------------------------------------------- reranker


def rater(scores: dict[str, Any], seen: list[dict[str, Any]] | None = None) -> Callable[[dict[str, Any]], Reply]:
    """A judge whose answer depends on which document the prompt holds: a score, "fail" (HTTP 500) or "junk"."""

    def answer(body: dict[str, Any]) -> Reply:
        if seen is not None:
            seen.append(body)
        prompt = body["messages"][-1]["content"]
        doc = next(d for d in KB.documents if d.content and d.content in prompt)
        score = scores.get(doc.id, 0)
        if score == "fail":
            return Reply.error(400, "no")
        if score == "junk":
            return Reply.text("I think it is relevant")
        return Reply.text(json.dumps({"relevance_score": score}))

    return answer


def test_the_reranker_keeps_documents_rated_at_least_the_threshold_best_first(fake_openai_server: Serve) -> None:
    seen: list[dict[str, Any]] = []
    server = fake_openai_server(rater({"fees": 6, "lost": 9, "wire": 5, "save": 4}, seen))
    models = models_for(server, judge={"model": "gpt-5.2"})
    text = search(toolkit(models, "bm25_reranker"), query="card fee")
    assert ids(text) == ["lost", "fees", "wire"] and "Score: 9.0000" in text and "Score: 5.0000" in text
    assert len(seen) == 4  # the empty document is not rated
    body = seen[0]
    assert body["response_format"]["type"] == "json_schema" and body["reasoning_effort"] == "low"
    assert "card fee" in body["messages"][0]["content"] and body["messages"][0]["role"] == "user"
    assert [e.role for e in models.ledger] == ["judge"] * 4


def test_failed_or_unreadable_ratings_drop_the_document_and_scores_are_clamped(fake_openai_server: Serve) -> None:
    server = fake_openai_server(rater({"fees": "fail", "lost": 42, "wire": "junk", "save": 7}))
    text = search(toolkit(models_for(server, judge={"model": "small-judge"}), "bm25_reranker", reranker_min_score="7"), query="card fee wire savings")
    assert ids(text) == ["lost", "save"] and "Score: 10.0000" in text
    assert all("reasoning_effort" not in body for body in server.completions)


def test_nothing_kept_gives_the_no_results_text(fake_openai_server: Serve) -> None:
    server = fake_openai_server(rater({}))
    assert search(toolkit(models_for(server, judge={"model": "j"}), "bm25_reranker"), query="fee") == packaged("knowledge_no_results")


def test_rating_calls_in_flight_are_bounded(fake_openai_server: Serve) -> None:
    server = fake_openai_server(rater({"fees": 8, "lost": 8, "wire": 8, "save": 8}), latency_s=0.05)
    text = search(toolkit(models_for(server, judge={"model": "j"}), "bm25_reranker", reranker_concurrency="2"), query="fee")
    assert server.max_in_flight <= 2 and len(ids(text)) == 4
    retrieved = ids(search(toolkit(models_for(server, judge={"model": "j"}), "bm25"), query="fee"))
    assert ids(text) == [doc_id for doc_id in retrieved if doc_id != "empty"]  # equal scores keep the retrieval order


def test_dense_then_rerank_uses_both_roles_and_the_profiles_prompt(fake_openai_server: Serve) -> None:
    server = fake_openai_server(rater({"lost": 10, "fees": 3}))
    profile = attrs.evolve(load_profile(None), texts={**load_profile(None).texts, "knowledge_rerank": "Q={{query}} D={{document}} answer JSON"})
    models = models_for(server, embeddings={"model": "m"}, rater={"model": "j"})
    text = search(toolkit(models, "openai_embeddings_reranker_grep", profile, reranker_role="rater", top_k=2), query="lost card")
    assert ids(text) == ["lost"]
    assert server.completions[0]["messages"][0]["content"].startswith("Q=lost card D=")
    assert {e.role for e in models.ledger} == {"embeddings", "rater"}
