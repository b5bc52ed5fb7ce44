"""bench-litellm: a model backend that reaches any provider litellm knows (`anthropic/...`, `gemini/...`, `bedrock/...`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from bench_kernel import Model, ModelConfig, hookimpl

from .install import INSTALL

if TYPE_CHECKING:
    from .client import LiteLLMClient

__all__ = ["INSTALL", "LiteLLMModel", "register_models"]


@attrs.define(kw_only=True)
class LiteLLMModel(Model):
    """Reaches a model through litellm's `acompletion`; `client(config)` imports litellm and opens no connection."""

    description: str = "litellm: any provider by its prefix (anthropic/, gemini/, bedrock/, openai/, ...); needs " + INSTALL

    def client(self, config: ModelConfig) -> LiteLLMClient:
        """A LiteLLMClient for this configuration; imports litellm (offline) and reads the key variable now."""
        from .client import LiteLLMClient  # litellm takes about 2 s to import: only where the work happens

        return LiteLLMClient(config)


@hookimpl
def register_models(register: Callable[[Model], None]) -> None:
    """Register the `litellm` backend."""
    register(LiteLLMModel(name="litellm"))
