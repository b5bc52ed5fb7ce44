"""bench-openai: the OpenAI chat-completions backend (api.openai.com and compatible servers)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from bench_kernel import Model, ModelConfig, hookimpl

if TYPE_CHECKING:
    from .client import OpenAIClient

__all__ = ["OpenAIModel", "register_models"]


@attrs.define(kw_only=True)
class OpenAIModel(Model):
    """Reaches an OpenAI-protocol endpoint; `client(config)` opens no connection until used."""

    description: str = "OpenAI chat completions (api.openai.com or any compatible server)"

    def client(self, config: ModelConfig) -> OpenAIClient:
        """An OpenAIClient for this configuration; reads the key variable now."""
        from .client import OpenAIClient  # httpx is imported where the work happens, not at registration

        return OpenAIClient(config)


@hookimpl
def register_models(register: Callable[[Model], None]) -> None:
    """Register the `openai` backend."""
    register(OpenAIModel(name="openai"))
