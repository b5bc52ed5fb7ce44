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

import importlib
from typing import TYPE_CHECKING, Any

# Names load with their module on first use: a backend that imports the embeddings kind (bench-openai, in every run)
# does not load the retrieval tools, sandbox and variants with it.
_MODULE_OF = {
    "BM25Index": "bm25",
    "tokenize": "bm25",
    "QWEN_QUERY_INSTRUCTION": "dense",
    "query_text": "dense",
    "Document": "documents",
    "KnowledgeBase": "documents",
    "EmbeddingClient": "embeddings",
    "EmbeddingRequest": "embeddings",
    "Embeddings": "embeddings",
    "embed": "embeddings",
    "export_documents": "sandbox",
    "file_name": "sandbox",
    "index_text": "sandbox",
    "format_hits": "toolkit",
    "knowledge_toolkit": "toolkit",
    "refusal": "toolkit",
    "retrieval_refusal": "toolkit",
    "DEFAULT_VARIANT": "variants",
    "OPTIONS": "variants",
    "VARIANTS": "variants",
    "RETRIEVAL_VARIANTS": "variants",
    "RetrievalSettings": "variants",
    "RetrievalVariant": "variants",
    "resolve_variant": "variants",
}
_ALIASES = {"RETRIEVAL_VARIANTS": "VARIANTS", "retrieval_refusal": "refusal"}
"""`VARIANTS` and `refusal` under names that say what they hold (the names domains import them by)."""

if TYPE_CHECKING:
    from .bm25 import BM25Index, tokenize
    from .dense import QWEN_QUERY_INSTRUCTION, query_text
    from .documents import Document, KnowledgeBase
    from .embeddings import EmbeddingClient, EmbeddingRequest, Embeddings, embed
    from .sandbox import export_documents, file_name, index_text
    from .toolkit import format_hits, knowledge_toolkit, refusal
    from .toolkit import refusal as retrieval_refusal
    from .variants import DEFAULT_VARIANT, OPTIONS, VARIANTS, RetrievalSettings, RetrievalVariant, resolve_variant
    from .variants import VARIANTS as RETRIEVAL_VARIANTS


def __getattr__(name: str) -> Any:
    """Import an exported name's module on first use and keep the name here."""
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), _ALIASES.get(name, name))
    globals()[name] = value
    return value


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
