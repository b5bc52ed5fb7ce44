"""bench-vllm: a model backend for vLLM's OpenAI-compatible server, with or without its tool-call parser."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from bench_kernel import Model, ModelConfig, hookimpl

if TYPE_CHECKING:
    from .client import VLLMClient

__all__ = ["VLLMModel", "register_models"]


@attrs.define(kw_only=True)
class VLLMModel(Model):
    """Reaches a vLLM server; `client(config)` opens no connection until used."""

    description: str = "vLLM's OpenAI-compatible server; reads tool calls and thinking from the text when the server does not"

    def client(self, config: ModelConfig) -> VLLMClient:
        """A VLLMClient for this configuration; checks the options now."""
        from .client import VLLMClient  # httpx is imported where the work happens, not at registration

        return VLLMClient(config)


@hookimpl
def register_models(register: Callable[[Model], None]) -> None:
    """Register the `vllm` backend."""
    register(VLLMModel(name="vllm"))
