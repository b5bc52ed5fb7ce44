"""bench-local: a local, offline model backend (llama-cpp-python's OpenAI-compatible server on a GGUF file)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import attrs

from bench_kernel import Model, ModelConfig, hookimpl

if TYPE_CHECKING:
    from .client import LocalClient

__all__ = ["LocalModel", "register_models"]


@attrs.define(kw_only=True)
class LocalModel(Model):
    """Serves a GGUF model from a llama_cpp.server child process, started on first use."""

    description: str = "a GGUF model served locally by llama-cpp-python (default: SmolLM2-135M-Instruct)"

    def client(self, config: ModelConfig) -> LocalClient:
        """A LocalClient for this configuration; it starts no server until used."""
        from .client import LocalClient  # httpx is imported where the work happens, not at registration

        return LocalClient(config)


@hookimpl
def register_models(register: Callable[[Model], None]) -> None:
    """Register the `local` backend."""
    register(LocalModel(name="local"))
