"""Dense retrieval through the run's `embeddings` model role: cosine ranking of whole documents.

Document vectors are computed once per process for each (endpoint, model, sampling, knowledge base) and kept
in memory, normalised; conversations that search at the same time wait for the one request. Query vectors
are kept in memory too, by (endpoint, model, sampling, instructed query text). Nothing is written to disk.
"""

from __future__ import annotations

import array
import asyncio
import math
import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bench_kernel import ModelConfig, ModelResponseError, canonical_json

from .documents import KnowledgeBase
from .embeddings import embed

if TYPE_CHECKING:
    from bench_kernel import ConversationModels

QWEN_QUERY_INSTRUCTION = "Given a web search query, retrieve relevant passages that answer the query"
"""The retrieval instruction of the Qwen3-Embedding model card, which tau2 puts before queries (never documents)."""


def query_text(query: str, model: str, instruction: str | None) -> str:
    """The text embedded for a query: Qwen models get `Instruct: <instruction>\\nQuery:<query>` (tau2's format)."""
    if instruction is None:
        instruction = QWEN_QUERY_INSTRUCTION if "qwen" in model.lower() else ""
    return f"Instruct: {instruction}\nQuery:{query}" if instruction else query


def normalized(vector: Sequence[float]) -> list[float]:
    """The vector scaled to length 1 (a zero vector stays zero, so every cosine with it is 0)."""
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm else [float(x) for x in vector]


def cosine_ranking(query: Sequence[float], documents: Sequence[Sequence[float]], k: int) -> list[tuple[int, float]]:
    """The k documents closest to the query as (index, cosine), best first, ties in document order.

    `documents` are normalised already; a vector of another length than the query's scores nothing.
    """
    unit = normalized(query)
    scores = [sum(map(operator.mul, unit, doc)) if len(doc) == len(unit) else 0.0 for doc in documents]
    order = sorted(range(len(scores)), key=scores.__getitem__, reverse=True)
    return [(index, scores[index]) for index in order[: max(0, k)]]


def endpoint_identity(config: ModelConfig) -> str:
    """What decides the vectors a role gives: backend, base URL, model and the request's extra settings."""
    return canonical_json(
        {"backend": config.backend, "base_url": config.base_url, "model": config.model, "sampling": config.sampling, "options": config.options}
    )


class DenseIndex:
    """A process-wide cache of document and query vectors, shared by every toolkit of a knowledge base."""

    def __init__(self) -> None:
        self._documents: dict[tuple[str, str], list[array.array[float]]] = {}
        self._pending: dict[tuple[str, str, int], asyncio.Task[list[array.array[float]]]] = {}
        self._queries: dict[tuple[str, str], list[float]] = {}

    def clear(self) -> None:
        """Forget every vector (tests)."""
        self._documents.clear()
        self._queries.clear()

    async def document_vectors(self, models: ConversationModels, role: str, kb: KnowledgeBase, batch_size: int = 0) -> list[array.array[float]]:
        """The normalised vectors of the knowledge base's contents, in document order, computed once (as arrays of
        doubles: a third of the memory of lists of floats)."""
        key = (endpoint_identity(models.config(role)), kb.content_hash)
        found = self._documents.get(key)
        if found is not None:
            return found
        # One request for all conversations that ask at once; tasks belong to a loop, so they are kept per loop.
        pending_key = (*key, id(asyncio.get_running_loop()))
        task = self._pending.get(pending_key)
        if task is None:
            task = asyncio.ensure_future(self._embed_documents(models, role, kb, batch_size))
            self._pending[pending_key] = task
            task.add_done_callback(lambda _: self._pending.pop(pending_key, None))
        vectors = await asyncio.shield(task)
        self._documents[key] = vectors
        return vectors

    async def _embed_documents(self, models: ConversationModels, role: str, kb: KnowledgeBase, batch_size: int) -> list[array.array[float]]:
        texts = [doc.content for doc in kb.documents]
        size = batch_size or len(texts) or 1
        vectors: list[list[float]] = []
        for start in range(0, len(texts), size):
            vectors += await _embed(models, role, texts[start : start + size])
        return [array.array("d", normalized(vector)) for vector in vectors]

    async def query_vector(self, models: ConversationModels, role: str, text: str) -> list[float]:
        """The vector of one (instructed) query text, from memory when it was embedded before."""
        key = (endpoint_identity(models.config(role)), text)
        found = self._queries.get(key)
        if found is None:
            found = self._queries[key] = (await _embed(models, role, [text]))[0]
        return found


async def _embed(models: ConversationModels, role: str, texts: list[str]) -> list[list[float]]:
    answer = await embed(models, role, texts)
    vectors: Any = answer.vectors
    if len(vectors) != len(texts):
        raise ModelResponseError(f"the {role} role returned {len(vectors)} vectors for {len(texts)} texts")
    return [list(vector) for vector in vectors]


DENSE = DenseIndex()
"""The process's vectors (every run in this process shares them: they depend only on endpoint, model and text)."""
