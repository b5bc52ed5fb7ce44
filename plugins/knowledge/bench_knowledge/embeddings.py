"""The embeddings model kind: a backend's `EmbeddingClient` turns texts into vectors, reached through the run's model
hub (`embed`), so each call is checked against the cost cap, priced by its prompt tokens and ledgered.

bench-openai's client serves it (POST /embeddings), as does bench-minilm's local encoder; dense retrieval here and
bench-memory's index call it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import attrs

from bench_kernel import BaseClient

if TYPE_CHECKING:
    from bench_kernel import ConversationModels  # the model hub's module loads when a conversation calls, not at import


@attrs.frozen(kw_only=True)
class EmbeddingRequest:
    """Texts to embed (an `embeddings` role, e.g. a memory evaluator)."""

    texts: list[str]


@attrs.frozen(kw_only=True)
class Embeddings:
    """One vector per text, in order."""

    vectors: list[list[float]]
    prompt_tokens: int | None = None
    latency_ms: int | None = None


class EmbeddingClient(BaseClient):
    """A text embedder."""

    kind = "embeddings"

    async def embed(self, request: EmbeddingRequest) -> Embeddings:
        """Embed texts."""
        raise NotImplementedError


async def embed(models: ConversationModels, role: str, request: EmbeddingRequest | Sequence[str]) -> Embeddings:
    """Embeddings for a role of a conversation's model access: one vector per text of the request (or of a plain list
    of texts), in order; ledgered against the conversation."""
    if not isinstance(request, EmbeddingRequest):
        request = EmbeddingRequest(texts=list(request))
    asked = request
    return await models.call(role, EmbeddingClient, lambda client: client.embed(asked))
