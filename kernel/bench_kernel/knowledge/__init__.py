"""Knowledge retrieval any domain can add to its agent's toolkit (docs/knowledge.md).

Documents (`Document`, `KnowledgeBase`), tau2's retrieval variants by name (`VARIANTS`, `resolve_variant`),
the tools a variant adds (`knowledge_toolkit`: BM25 equal to rank_bm25's, grep, dense search through the
`embeddings` model role, an LLM reranker through a judge role, a shell in a bubblewrap sandbox), and
`refusal`, which says why a variant cannot run here.
"""

from __future__ import annotations

from bench_kernel.knowledge.bm25 import BM25Index, tokenize
from bench_kernel.knowledge.dense import QWEN_QUERY_INSTRUCTION, query_text
from bench_kernel.knowledge.documents import Document, KnowledgeBase
from bench_kernel.knowledge.sandbox import export_documents, file_name, index_text
from bench_kernel.knowledge.toolkit import format_hits, knowledge_toolkit, refusal
from bench_kernel.knowledge.variants import (
    DEFAULT_VARIANT,
    OPTIONS,
    VARIANTS,
    RetrievalSettings,
    RetrievalVariant,
    resolve_variant,
)

RETRIEVAL_VARIANTS = VARIANTS
"""`VARIANTS` under the name the package root exports it by."""
retrieval_refusal = refusal
"""`refusal` under the name the package root exports it by."""

__all__ = [
    "DEFAULT_VARIANT",
    "OPTIONS",
    "QWEN_QUERY_INSTRUCTION",
    "RETRIEVAL_VARIANTS",
    "VARIANTS",
    "BM25Index",
    "Document",
    "KnowledgeBase",
    "RetrievalSettings",
    "RetrievalVariant",
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
