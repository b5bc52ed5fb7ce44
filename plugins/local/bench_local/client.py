"""LocalClient: starts a llama_cpp.server child on first use and hands every request to an OpenAIClient pointed at it."""

from __future__ import annotations

import asyncio
from typing import Any

import attrs
import httpx
from bench_openai.client import OpenAIClient

from bench_kernel import ChatRequest, ChatResponse, ConfigError, ModelClient, ModelConfig, ModelUnavailableError

from .server import LlamaServer, ServerSettings, option

DEFAULT_MAX_TOKENS = 512


class LlamaCppClient(OpenAIClient):
    """OpenAIClient for llama_cpp.server: a default max_tokens, no null content beside tool calls, no proxies.

    Without max_tokens llama_cpp.server generates up to the context size, which a looping small model does.
    It answers HTTP 500 to an assistant message whose content is null (what OpenAI clients send with tool calls).
    """

    use_proxy_env = False

    def build_payload(self, request: ChatRequest) -> dict[str, Any]:
        """The OpenAI payload, with `default_max_tokens` unless sampling sets max_tokens, and "" for null content."""
        payload = super().build_payload(request)
        payload.setdefault("max_tokens", option(self.config, "default_max_tokens", int, DEFAULT_MAX_TOKENS))
        payload["messages"] = [{**m, "content": ""} if m.get("content", "") is None else m for m in payload["messages"]]
        return payload

    def make_http_client(self, size: int) -> httpx.AsyncClient:
        """A pool to the loopback server: no key, no TLS, and never a proxy from HTTP_PROXY."""
        return httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(self.config.timeout_s, connect=min(10.0, self.config.timeout_s)),
            limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
            trust_env=False,
        )


class LocalClient(ModelClient):
    """One llama_cpp.server child per client, started by the first check() or complete(); aclose() stops it.

    config.base_url and api_key_env are ignored: requests go to the child's own loopback address.
    A start that failed is not retried: later calls raise the same error at once.
    """

    def __init__(self, config: ModelConfig) -> None:
        self.config = config
        self.server: LlamaServer | None = None
        self.inner: LlamaCppClient | None = None
        self._lock = asyncio.Lock()
        self._failure: ConfigError | ModelUnavailableError | None = None
        self._closed = False

    async def check(self) -> None:
        """Start the server (ConfigError when the extra or the GGUF is missing, ModelUnavailableError when it fails)."""
        await self._started()

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion from the local server, started first if need be."""
        inner = await self._started()
        try:
            return await inner.complete(request)
        except ModelUnavailableError as exc:
            server = self.server
            code = server.exit_code() if server is not None else None
            if server is None or code is None:
                raise
            raise ModelUnavailableError(f"{exc}; llama_cpp.server exited with code {code}; its last output:\n{server.output_tail()}") from exc

    async def aclose(self) -> None:
        """Close the connections and stop the server; the client cannot be used afterwards."""
        self._closed = True
        if self.inner is not None:
            await self.inner.aclose()
        if self.server is not None:
            await asyncio.to_thread(self.server.stop)

    async def _started(self) -> LlamaCppClient:
        async with self._lock:  # concurrent first calls start one server, not several
            if self._closed:
                raise ModelUnavailableError(f"local model {self.config.model!r}: the client is closed")
            if self._failure is not None:
                raise type(self._failure)(str(self._failure))
            if self.inner is None:
                try:
                    self.inner = await self._start()
                except (ConfigError, ModelUnavailableError) as exc:
                    self._failure = exc
                    raise
            return self.inner

    async def _start(self) -> LlamaCppClient:
        settings = ServerSettings.from_config(self.config)
        if option(self.config, "default_max_tokens", int, DEFAULT_MAX_TOKENS) < 1:  # fail before spawning anything
            raise ConfigError(f"local model {self.config.model!r}: option default_max_tokens must be positive")
        self.server = LlamaServer(settings)
        base_url = await self.server.start()
        try:
            return LlamaCppClient(attrs.evolve(self.config, base_url=base_url, api_key_env=None))
        except BaseException:
            self.server.stop()
            raise
