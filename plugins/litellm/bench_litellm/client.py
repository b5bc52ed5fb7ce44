"""LiteLLMClient: one role's chat completions through `litellm.acompletion`, with bench's retries, errors and ledger.

litellm picks the provider from the model string (`anthropic/claude-...`, `gemini/...`, `bedrock/...`,
`openai/...`) and speaks its protocol; everything around the call is bench's: at most `max_concurrency`
calls in flight, bench-openai's retry policy (litellm's own retries and the OpenAI SDK's are turned off,
so the ledger counts every request once), litellm's exceptions mapped onto bench's errors, and the
reply parsed strictly into a ChatResponse with tokens and, when litellm knows the model, its price.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import math
import os
import random
import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

import attrs
from bench_openai.client import RetryPolicy, is_retryable_status, parse_retry_after
from bench_openai.parsing import completion_of, message_of, read_api_key, snippet

from bench_kernel import (
    ChatRequest,
    ChatResponse,
    ConfigError,
    ContextOverflowError,
    ModelAuthError,
    ModelClient,
    ModelConfig,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ModelUnavailableError,
    get_logger,
)

from .install import INSTALL

COST_MAP_VARIABLE = "LITELLM_LOCAL_MODEL_COST_MAP"
"""True makes litellm read the price map it ships instead of downloading one when it is imported."""
OPTIONS = ("retry_base_s", "retry_max_s", "litellm_params")
OWN_ARGUMENTS = frozenset(
    {
        "model",
        "messages",
        "api_base",
        "base_url",
        "api_key",
        "timeout",
        "num_retries",
        "max_retries",
        "stream",
        "tools",
        "tool_choice",
        "seed",
        "response_format",
    }
)
"""acompletion arguments the client sets itself: the option `litellm_params` may not override them."""
OPENAI_BASE_URL = "https://api.openai.com/v1"
CHECK_TIMEOUT_S = 10.0
CONTEXT_OVERFLOW_MARKERS = ("context_length_exceeded", "context length", "maximum context", "context window")
AMBIENT_CREDENTIALS = frozenset({"bedrock", "sagemaker", "sagemaker_chat", "vertex_ai", "vertex_ai_beta", "azure"})
"""Providers whose credentials may come from elsewhere than variables (AWS profiles and roles, Google ADC, Azure AD)."""

log = get_logger()


def import_litellm() -> Any:
    """litellm, imported offline (its bundled price map, never a download), or a ConfigError naming the pip command."""
    os.environ.setdefault(COST_MAP_VARIABLE, "True")  # a value the user set wins
    try:
        import litellm
    except ImportError as exc:
        raise ConfigError(f"the litellm backend needs litellm, which is not installed: {INSTALL}") from exc
    litellm.suppress_debug_info = True  # else every error prints a "Give Feedback / Get Help" banner on stdout
    return litellm


class LiteLLMClient(ModelClient):
    """One role's endpoint through litellm: bench's concurrency limit, retries and errors around `acompletion`."""

    def __init__(self, config: ModelConfig) -> None:
        limit = config.in_flight()
        if limit < 1 or config.timeout_s <= 0:
            raise ConfigError(f"model {config.model!r}: max_concurrency must be at least 1 and timeout_s positive")
        unknown = sorted(set(config.options) - set(OPTIONS))
        if unknown:
            raise ConfigError(f"model {config.model!r}: the litellm backend has no option {unknown[0]!r} (its options: {', '.join(OPTIONS)})")
        self.config = config
        self.retry = RetryPolicy.from_config(config)
        self.litellm_params = _litellm_params(config)
        self._api_key = read_api_key(config.api_key_env)
        self.litellm = import_litellm()
        self.provider, self.api_base, self._provider_key = self._resolve_provider()
        self._slots = asyncio.Semaphore(limit)
        self._known: bool | None = None

    def _resolve_provider(self) -> tuple[str, str | None, str | None]:
        """litellm's provider for the model string, its API base and the key it found for it (no I/O)."""
        try:
            _, provider, key, api_base = self.litellm.get_llm_provider(self.config.model, api_base=self.config.base_url)
        except Exception as exc:  # litellm refuses an unknown provider with its BadRequestError (and may raise others)
            raise ConfigError(
                f"model {self.config.model!r}: litellm cannot tell its provider; write it as "
                f"PROVIDER/MODEL (openai/..., anthropic/..., gemini/..., bedrock/...)"
            ) from exc
        return provider, api_base or self.config.base_url, key

    # ----------------------------------------------------------------------- requests

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion, retried on transient failures; raises ModelError subclasses.

        `latency_ms` is the whole call: waiting for a slot, every attempt and every backoff.
        """
        started = time.perf_counter()
        reply, attempts = await self._complete_with_retries(self.completion_arguments(request))
        try:
            body = _plain(reply)
            parsed = self.parse_completion(body)
        except ModelError as exc:
            exc.attempts = attempts  # the ledger keeps the real count of a failed call too
            raise
        latency_ms = round((time.perf_counter() - started) * 1000)
        return attrs.evolve(parsed, attempts=attempts, latency_ms=latency_ms, raw=body, cost=self.cost_of(reply))

    def completion_arguments(self, request: ChatRequest) -> dict[str, Any]:
        """`acompletion`'s keyword arguments: sampling (the request's over the config's), the request, then our own."""
        arguments: dict[str, Any] = {**self.config.sampling, **request.sampling, **self.litellm_params}
        if request.tools:
            arguments["tools"] = request.tools
            if request.tool_choice is not None:
                arguments["tool_choice"] = request.tool_choice
        if request.seed is not None:
            arguments["seed"] = request.seed
        if request.response_format is not None:
            arguments["response_format"] = request.response_format
        if self._api_key is not None:
            arguments["api_key"] = self._api_key
        if self.config.base_url is not None:
            arguments["api_base"] = self.config.base_url
        # bench retries, so that the ledger counts every request once: neither litellm nor the OpenAI SDK may retry too.
        arguments.update(model=self.config.model, messages=request.messages, timeout=self.config.timeout_s, num_retries=0, max_retries=0)
        return arguments

    async def _complete_with_retries(self, arguments: dict[str, Any]) -> tuple[Any, int]:
        """litellm's reply and how many attempts it took; the last error once retrying is pointless or used up."""
        rng: random.Random | None = None
        for attempt in range(1, self.retry.max_retries + 2):
            try:
                async with self._slots:
                    return await self.litellm.acompletion(**arguments), attempt
            except Exception as exc:  # noqa: BLE001 - litellm raises its own classes and, on a bug, anything
                error, retry_after = self.error_for(exc), _retry_after(exc)
            error.attempts = attempt
            if not _retryable(error):
                raise error from error.__cause__
            if attempt > self.retry.max_retries:
                gave_up = ModelUnavailableError(f"{self._where}: gave up after {attempt} attempts; last: {error}")
                gave_up.attempts = attempt
                raise gave_up from error
            # Seeded from the request, never the global RNG, so a rerun of the same request backs off the same way.
            rng = rng or random.Random(_seed_of(arguments))
            delay = self.retry.delay(attempt, rng, retry_after)
            log.info("model.retry", model=self.config.model, attempt=attempt, delay_s=round(delay, 3), cause=str(error))
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    def error_for(self, exc: Exception) -> ModelError:
        """bench's error for what litellm raised; a retryable one is a ModelUnavailableError or a retryable ModelHTTPError."""
        litellm = self.litellm
        status = getattr(exc, "status_code", None)
        status = status if isinstance(status, int) and not isinstance(status, bool) else None
        text = self._redact(str(exc))
        error: ModelError
        if isinstance(exc, (litellm.AuthenticationError, litellm.PermissionDeniedError)):
            error = ModelAuthError(status or 401, text)
        elif isinstance(exc, litellm.ContextWindowExceededError) or (
            status in (400, 413) and any(marker in text.lower() for marker in CONTEXT_OVERFLOW_MARKERS)
        ):
            error = ContextOverflowError(status or 400, text)
        elif isinstance(exc, (litellm.Timeout, litellm.APIConnectionError)):
            error = ModelUnavailableError(f"{self._where}: {text}")
        elif isinstance(exc, litellm.RateLimitError):
            error = ModelHTTPError(status or 429, text, retryable=True)
        elif status is not None:  # 5xx (litellm's InternalServerError also stands for a reply it could not read), other 4xx
            error = ModelHTTPError(status, text, retryable=is_retryable_status(status))
        else:
            error = ModelError(f"{self._where}: litellm failed: {type(exc).__name__}: {text}")
        error.__cause__ = exc
        return error

    def cost_of(self, reply: Any) -> float | None:
        """litellm's price of the call when its price map knows the model; None leaves it to bench's price table."""
        if self._known is None:
            try:
                self.litellm.get_model_info(self.config.model)
                self._known = True
            except Exception:  # noqa: BLE001 - litellm raises a plain Exception for a model it does not map
                self._known = False
        cost = (getattr(reply, "_hidden_params", None) or {}).get("response_cost")
        if not self._known or not isinstance(cost, (int, float)) or isinstance(cost, bool):
            return None
        return float(cost) if math.isfinite(cost) and cost >= 0 else None

    # ----------------------------------------------------------------------- the credential check

    async def check(self) -> None:
        """Before a run: the key variables litellm wants for the provider are set, and an OpenAI-protocol endpoint
        (openai/ and litellm's OpenAI-compatible providers) accepts the key on GET /models."""
        self._check_environment()
        if self.provider == "openai" or self.provider in self.litellm.openai_compatible_providers:
            base = self.api_base or (OPENAI_BASE_URL if self.provider == "openai" else None)
            if base is not None:
                await self._probe(base.rstrip("/") + "/models")

    def _check_environment(self) -> None:
        try:
            found = self.litellm.validate_environment(model=self.config.model, api_key=self._api_key, api_base=self.api_base)
        except Exception as exc:  # noqa: BLE001 - an unusual provider: the first call will tell
            log.debug("model.environment_unchecked", model=self.config.model, error=str(exc))
            return
        missing = [str(name) for name in found.get("missing_keys") or []]
        if not missing:
            return
        if self.provider in AMBIENT_CREDENTIALS:
            log.warning("model.credentials_unverified", model=self.config.model, missing=missing)
            return
        raise ConfigError(
            f"model {self.config.model!r}: litellm needs {', '.join(missing)} for provider "
            f"{self.provider!r}, which is not set (or name the variable holding the key with "
            f"--ROLE-api-key-env)"
        )

    async def _probe(self, url: str) -> None:
        import httpx  # litellm's own dependency

        key = self._api_key or self._provider_key or (os.environ.get("OPENAI_API_KEY") if self.provider == "openai" else None)
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            async with httpx.AsyncClient(timeout=min(CHECK_TIMEOUT_S, self.config.timeout_s), trust_env=not _loopback(url)) as http:
                reply = await http.get(url, headers=headers)
        except httpx.HTTPError as exc:
            raise ModelUnavailableError(f"{self._where}: unreachable: {type(exc).__name__}: {exc}") from exc
        text = self._redact(reply.text, key)
        if reply.status_code in (401, 403):
            raise ModelAuthError(reply.status_code, text)
        if is_retryable_status(reply.status_code):
            raise ModelUnavailableError(f"{self._where}: HTTP {reply.status_code}: {text[:200]}")
        # Any other answer (a compatible server without /models says 404) shows the endpoint is there.

    # ----------------------------------------------------------------------- parsing

    def parse_completion(self, body: dict[str, Any]) -> ChatResponse:
        """choices[0] and usage, read as bench-openai reads them (litellm gives every provider's reply in OpenAI's shape)."""
        return completion_of(body, self._where, lambda message: message_of(message, self._where))

    # ----------------------------------------------------------------------- helpers

    @property
    def _where(self) -> str:
        return f"{self.config.model} via litellm" + (f" at {self.api_base}" if self.api_base else "")

    def _redact(self, text: str, *keys: str | None) -> str:
        """The text with the keys blanked out, in case a provider echoes one."""
        for key in (self._api_key, *keys):
            if key:
                text = text.replace(key, "***")
        return text


def _litellm_params(config: ModelConfig) -> dict[str, Any]:
    """The option `litellm_params`: further acompletion arguments (aws_region_name, vertex_project, drop_params, ...)."""
    params = config.options.get("litellm_params", {})
    if not isinstance(params, Mapping) or not all(isinstance(key, str) for key in params):
        raise ConfigError(f"model {config.model!r}: option litellm_params must be a table of acompletion arguments")
    taken = sorted(OWN_ARGUMENTS & set(params))
    if taken:
        raise ConfigError(
            f"model {config.model!r}: option litellm_params may not set {', '.join(taken)} "
            f"(bench sets them from the model configuration and the request)"
        )
    return dict(params)


def _retryable(error: ModelError) -> bool:
    return isinstance(error, ModelUnavailableError) or (isinstance(error, ModelHTTPError) and error.retryable)


def _retry_after(exc: Exception) -> float | None:
    """The wait the provider asked for (Retry-After on the HTTP response litellm keeps), if any."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    return parse_retry_after(headers) if isinstance(headers, Mapping) else None


def _seed_of(arguments: dict[str, Any]) -> int:
    text = json.dumps(arguments, sort_keys=True, default=str)
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


def _plain(reply: Any) -> dict[str, Any]:
    """litellm's ModelResponse as plain JSON data (what the cache and `raw` keep)."""
    dump = getattr(reply, "model_dump", None)
    body = dump(mode="json") if callable(dump) else reply
    if not isinstance(body, dict):
        raise ModelResponseError(f"litellm answered something that is not a completion: {snippet(body)}")
    return body


def _loopback(url: str) -> bool:
    """True for a server on this machine: a proxy from the environment must not carry requests to it."""
    host = urlsplit(url).hostname or ""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
