"""bench-knowledge: knowledge retrieval any domain can add to its agent's toolkit (docs/knowledge.md).

A library, not a plugin: it registers nothing (no `bench` entry point); a domain imports it and depends on it.

Documents (`Document`, `KnowledgeBase`), tau2's retrieval variants by name (`VARIANTS`, `resolve_variant`),
the tools a variant adds (`knowledge_toolkit`: BM25 equal to rank_bm25's, grep, dense search through the
`embeddings` model role, an LLM reranker through a judge role, a shell in a bubblewrap sandbox), and
`refusal`, which says why a variant cannot run here. It also defines the embeddings model kind (`EmbeddingClient`,
`EmbeddingRequest`, `Embeddings`; `embed(models, role, texts)` calls it through the run's model hub), which
backends (bench-openai, bench-minilm) serve and evaluators (bench-memory) call.
"""

from __future__ import annotations

from .bm25 import BM25Index, tokenize
from .dense import QWEN_QUERY_INSTRUCTION, query_text
from .documents import Document, KnowledgeBase
from .embeddings import EmbeddingClient, EmbeddingRequest, Embeddings, embed
from .sandbox import export_documents, file_name, index_text
from .toolkit import format_hits, knowledge_toolkit, refusal
from .variants import (
    DEFAULT_VARIANT,
    OPTIONS,
    VARIANTS,
    RetrievalSettings,
    RetrievalVariant,
    resolve_variant,
)

RETRIEVAL_VARIANTS = VARIANTS
"""`VARIANTS` under a name that says what it holds (the name domains import it by)."""
retrieval_refusal = refusal
"""`refusal` under a name that says what it refuses (the name domains import it by)."""

__all__ = [
    "DEFAULT_VARIANT",
    "OPTIONS",
    "QWEN_QUERY_INSTRUCTION",
    "RETRIEVAL_VARIANTS",
    "VARIANTS",
    "BM25Index",
    "Document",
    "EmbeddingClient",
    "EmbeddingRequest",
    "Embeddings",
    "KnowledgeBase",
    "RetrievalSettings",
    "RetrievalVariant",
    "embed",
    "export_documents",
    "file_name",
    "format_hits",
    "index_text",
    "knowledge_toolkit",
    "query_text",
    "refusal",
    "resolve_variant",
    "retrieval_refusal",
    "tokenize",
]
