"""OpenAIClient: chat completions over plain HTTP, aiohttp or httpx, with a concurrency limit, retries with backoff, and strict parsing.

Parsing lives in small methods (`parse_body`, `parse_completion`, `parse_message`, `parse_tool_call`,
`parse_arguments`, `parse_reasoning`) so a backend for servers that put tool calls or thinking in
the text (Hermes `<tool_call>`, Mistral `[TOOL_CALLS]`, `<think>`) overrides only what differs.
"""

from __future__ import annotations

import asyncio
import collections.abc
import contextlib
import email.utils
import functools
import hashlib
import json
import math
import os
import random
import ssl
import time
from typing import TYPE_CHECKING, Any, Self
from urllib.parse import urlsplit

import attrs
import certifi
import orjson
from bench_knowledge import EmbeddingClient, EmbeddingRequest, Embeddings

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
    ToolCall,
    get_logger,
)
from bench_openai.parsing import (
    arguments_object,
    completion_of,
    embeddings_of,
    evolved,
    loads,
    message_of,
    read_api_key,
    reasoning_of,
    snippet,
    tool_call_of,
)
from bench_openai.plainhttp import PlainHTTP, PlainHTTPError

if TYPE_CHECKING:
    import aiohttp
    import httpx
    from yarl import URL

DEFAULT_BASE_URL = "https://api.openai.com/v1"
CHECK_TIMEOUT_S = 10.0
DEFAULT_RETRY_BASE_S = 0.5
DEFAULT_RETRY_MAX_S = 20.0
DEFAULT_CONNECTIONS_PER_POOL = 8
HTTP_STACKS = ("plain", "aiohttp", "httpx")
"""The `http` option: plain (bench_openai.plainhttp; the default for http:// without a proxy), aiohttp (the default
otherwise) or httpx (about five times aiohttp's CPU per request; docs/throughput.md)."""
PROXY_VARIABLES = ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY")
"""The variables that may route a plain-http request through a proxy (aiohttp then reaches it, honouring NO_PROXY)."""
CONTEXT_OVERFLOW_MARKERS = ("context_length_exceeded", "context length", "maximum context", "context window")
JSON_HEADERS = {"Content-Type": "application/json"}

log = get_logger()


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """Exponential backoff with full jitter; Retry-After, when the server sends it, wins (capped at max_s)."""

    max_retries: int = 5
    base_s: float = DEFAULT_RETRY_BASE_S
    max_s: float = DEFAULT_RETRY_MAX_S

    @classmethod
    def from_config(cls, config: ModelConfig) -> RetryPolicy:
        """From max_retries and the options `retry_base_s` and `retry_max_s`."""
        try:
            base_s = float(config.options.get("retry_base_s", DEFAULT_RETRY_BASE_S))
            max_s = float(config.options.get("retry_max_s", DEFAULT_RETRY_MAX_S))
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"model {config.model!r}: retry_base_s and retry_max_s must be numbers") from exc
        if config.max_retries < 0 or base_s < 0 or max_s < 0:
            raise ConfigError(f"model {config.model!r}: max_retries, retry_base_s and retry_max_s must not be negative")
        return cls(max_retries=config.max_retries, base_s=base_s, max_s=max_s)

    def delay(self, retry: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Seconds to wait before retry number `retry` (1 for the first retry)."""
        if retry_after is not None:
            return min(retry_after, self.max_s)
        return rng.uniform(0.0, min(self.max_s, self.base_s * 2 ** (retry - 1)))


def parse_retry_after(headers: collections.abc.Mapping[str, str]) -> float | None:
    """Seconds the server asked us to wait (`retry-after-ms`, or `Retry-After` as seconds or an HTTP date)."""
    if "retry-after-ms" in headers:
        seconds = _float_or_none(headers["retry-after-ms"])
        return None if seconds is None else max(0.0, seconds / 1000)
    value = headers.get("retry-after")
    if not value:
        return None
    seconds = _float_or_none(value)
    if seconds is None:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return max(0.0, seconds)


def _float_or_none(value: str) -> float | None:
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None


def is_retryable_status(status: int) -> bool:
    """Rate limits, request timeouts and server errors are worth another try; other errors are not."""
    return status in (408, 429) or status >= 500


@attrs.frozen
class HTTPReply:
    """What either HTTP stack answered: status, body text and headers (a case-insensitive mapping)."""

    status_code: int
    text: str
    headers: collections.abc.Mapping[str, str]


class OpenAIClient(ModelClient, EmbeddingClient):
    """One endpoint for one role: at most `max_concurrency` requests in flight (the run resolves it), retried with backoff.

    It serves chat roles (`complete`: POST /chat/completions) and embeddings roles (`embed`: POST /embeddings).

    Requests go through bench_openai.plainhttp (`http = "plain"`, the default for http:// without a proxy), one aiohttp
    session (`http = "aiohttp"`, the default otherwise) or httpx (`http = "httpx"`).
    With httpx the connections are split over small pools (`connections_per_pool`, default 8), because
    httpcore's pool scans every connection for every request: one pool of 256 connections costs
    about twenty times the CPU per request of 32 pools of 8. A request takes a slot from a queue of
    `max_concurrency` slots, each bound to one pool, so the slots act as the semaphore and no pool
    ever queues. Use the client from one event loop (its connections belong to the loop that first uses them).
    """

    use_proxy_env = True
    """Whether HTTP_PROXY / HTTPS_PROXY / NO_PROXY apply (a client of a loopback server turns this off)."""

    def __init__(self, config: ModelConfig) -> None:
        limit = config.in_flight()
        if limit < 1 or config.timeout_s <= 0:
            raise ConfigError(f"model {config.model!r}: max_concurrency must be at least 1 and timeout_s positive")
        self.config = config
        self.max_in_flight = limit
        self.base_url = (config.base_url or DEFAULT_BASE_URL).rstrip("/")
        self.retry = RetryPolicy.from_config(config)
        self._api_key = read_api_key(config.api_key_env)
        self.http = config.options.get("http") or self._default_stack()
        if self.http not in HTTP_STACKS:
            raise ConfigError(f"model {config.model!r}: option http must be one of {', '.join(HTTP_STACKS)}, not {self.http!r}")
        url = urlsplit(self.base_url)
        if self.http == "plain" and (url.scheme != "http" or not url.hostname):
            raise ConfigError(f"model {config.model!r}: option http = plain speaks to http://HOST URLs only, not {self.base_url!r}")
        self._target = url.path  # where the plain stack's request paths go: /v1 of http://host:8000/v1
        self._plain: PlainHTTP | None = None
        self._session: aiohttp.ClientSession | None = None
        self._proxy: tuple[URL, aiohttp.BasicAuth | None] | None = None
        # Timeouts, refused or reset connections, servers that hang up without answering: retried; other failures not.
        self._retryable: tuple[type[Exception], ...] = (asyncio.TimeoutError, OSError)
        self._failures: tuple[type[Exception], ...] = (PlainHTTPError,)
        if self.http == "aiohttp":  # each stack imported only when used: importing one costs start-up time
            aiohttp = _aiohttp()
            self._retryable += (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)
            self._failures += (aiohttp.ClientError,)
        elif self.http == "httpx":
            import httpx

            self._retryable += (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError)
            self._failures += (httpx.HTTPError,)
        per_pool = _positive_int(config, "connections_per_pool", DEFAULT_CONNECTIONS_PER_POOL)
        count = math.ceil(limit / per_pool)
        self._pool_size = math.ceil(limit / count)
        # Pools are built on first use: a limit of thousands costs nothing until the load needs the connections.
        self._pools: list[httpx.AsyncClient | None] = [None] * count
        # Last in, first out: at low load the same few warm connections (and pools) serve every request.
        self._slots: asyncio.LifoQueue[int] = asyncio.LifoQueue()
        for slot in reversed(range(limit)):
            self._slots.put_nowait(slot % count)

    @property
    def pools(self) -> list[httpx.AsyncClient]:
        """The pools built so far."""
        return [pool for pool in self._pools if pool is not None]

    def _pool(self, index: int) -> httpx.AsyncClient:
        pool = self._pools[index]
        if pool is None:
            pool = self._pools[index] = self.make_http_client(self._pool_size)
        return pool

    def make_http_client(self, size: int) -> httpx.AsyncClient:
        """One httpx connection pool of `size` connections, with the key as a default header."""
        import httpx

        return httpx.AsyncClient(
            base_url=self.base_url,
            headers=self._auth_headers(),
            timeout=httpx.Timeout(self.config.timeout_s, connect=min(10.0, self.config.timeout_s)),
            limits=httpx.Limits(max_connections=size, max_keepalive_connections=size),
            verify=_tls_context(),
            trust_env=self.use_proxy_env,
        )

    def _default_stack(self) -> str:
        """plain for an http:// endpoint no proxy variable may route, else aiohttp."""
        proxied = self.use_proxy_env and any(os.environ.get(name) for name in PROXY_VARIABLES)
        return "plain" if self.base_url.startswith("http://") and not proxied else "aiohttp"

    def make_plain(self) -> PlainHTTP:
        """The plain-http connections: the key as a default header, `timeout_s` for each reply."""
        url = urlsplit(self.base_url)
        return PlainHTTP(
            url.hostname or "",
            url.port or 80,
            {**self._auth_headers(), **JSON_HEADERS},
            connect_timeout_s=min(10.0, self.config.timeout_s),
            read_timeout_s=self.config.timeout_s,
        )

    def make_session(self) -> aiohttp.ClientSession:
        """The aiohttp session: up to `max_in_flight` connections, the key as a default header.

        The proxy from the environment is looked up once here: aiohttp's trust_env would look it (and ~/.netrc)
        up in a worker thread on every request, which doubled the CPU per request.
        """
        aiohttp = _aiohttp()
        from aiohttp.helpers import get_env_proxy_for_url
        from yarl import URL

        self._proxy = None
        if self.use_proxy_env:
            with contextlib.suppress(LookupError):
                self._proxy = get_env_proxy_for_url(URL(self.base_url))
        # certifi's context only where TLS is spoken: building it costs ~17 ms of start-up (aiohttp's own default serves http).
        tls: ssl.SSLContext | bool = _tls_context() if URL(self.base_url).scheme == "https" else True
        connector = aiohttp.TCPConnector(limit=self.max_in_flight, limit_per_host=0, ssl=tls)
        timeout = aiohttp.ClientTimeout(total=None, sock_connect=min(10.0, self.config.timeout_s), sock_read=self.config.timeout_s)
        return aiohttp.ClientSession(connector=connector, headers=self._auth_headers(), timeout=timeout)

    def _auth_headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}

    async def _post(self, index: int, content: bytes, path: str = "/chat/completions") -> HTTPReply:
        """POST to `path` (/chat/completions, /embeddings) through the configured stack (`index`: the slot's httpx pool)."""
        if self.http == "plain":
            plain = self._plain = self._plain or self.make_plain()
            reply = await plain.request("POST", self._target + path, content)
            return HTTPReply(reply.status, reply.text(), reply.headers)
        if self.http == "httpx":
            response = await self._pool(index).post(path, content=content, headers=JSON_HEADERS)
            return HTTPReply(response.status_code, response.text, response.headers)
        session = self._session = self._session or self.make_session()
        proxy, proxy_auth = self._proxy or (None, None)
        async with session.post(self.base_url + path, data=content, headers=JSON_HEADERS, proxy=proxy, proxy_auth=proxy_auth) as reply:
            return await _read(reply)

    async def _get(self, path: str, timeout_s: float) -> HTTPReply:
        if self.http == "plain":
            plain = self._plain = self._plain or self.make_plain()
            reply = await plain.request("GET", self._target + path, timeout_s=timeout_s)
            return HTTPReply(reply.status, reply.text(), reply.headers)
        if self.http == "httpx":
            response = await self._pool(0).get(path, timeout=timeout_s)
            return HTTPReply(response.status_code, response.text, response.headers)
        session = self._session = self._session or self.make_session()
        proxy, proxy_auth = self._proxy or (None, None)
        timeout = _aiohttp().ClientTimeout(total=timeout_s)
        async with session.get(self.base_url + path, timeout=timeout, proxy=proxy, proxy_auth=proxy_auth) as reply:
            return await _read(reply)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close every connection."""
        for pool in self.pools:
            await pool.aclose()
        self._pools = [None] * len(self._pools)
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._plain is not None:
            await self._plain.aclose()
            self._plain = None

    # ----------------------------------------------------------------------- requests

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One chat completion, retried on transient failures; raises ModelError subclasses.

        `latency_ms` is the whole call: waiting for a slot, every attempt and every backoff.
        """
        started = time.perf_counter()
        content = encode_body(self.build_payload(request))
        response, attempts = await self._post_with_retries(content)
        try:
            if response.status_code >= 300:
                raise self.status_error(response)
            body = self.parse_body(response.text)
            parsed = self.parse_completion(body)
        except ModelError as exc:
            exc.attempts = attempts  # the ledger keeps the real count of a failed call too
            raise
        latency_ms = round((time.perf_counter() - started) * 1000)
        return evolved(parsed, attempts=attempts, latency_ms=latency_ms, raw=body)

    def build_payload(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body: model and messages, then the rest in name order (config sampling, overridden by the request's).

        The order is the one litellm gives tau2-bench's requests, so a profile can reproduce tau2's bodies byte for byte.
        """
        rest: dict[str, Any] = {**self.config.sampling, **request.sampling}
        if request.tools:
            rest["tools"] = request.tools
            if request.tool_choice is not None:
                rest["tool_choice"] = request.tool_choice
        if request.seed is not None:
            rest["seed"] = request.seed
        if request.response_format is not None:
            rest["response_format"] = request.response_format
        rest.pop("model", None)
        rest.pop("messages", None)
        return {"model": self.config.model, "messages": request.messages, **dict(sorted(rest.items()))}

    async def embed(self, request: EmbeddingRequest) -> Embeddings:
        """One vector per text (POST /embeddings), retried on transient failures like a completion.

        Vectors come base64-encoded as float32 unless the role's sampling sets `encoding_format`, as the OpenAI
        SDK asks for them (so they are the very float32 values it returns); a server answering with lists of
        numbers is read too.
        """
        started = time.perf_counter()
        content = encode_body(self.build_embeddings_payload(request))
        response, attempts = await self._post_with_retries(content, "/embeddings")
        try:
            if response.status_code >= 300:
                raise self.status_error(response)
            vectors, tokens = embeddings_of(self.parse_body(response.text), len(request.texts), self._where)
        except ModelError as exc:
            exc.attempts = attempts
            raise
        return Embeddings(vectors=vectors, prompt_tokens=tokens, latency_ms=round((time.perf_counter() - started) * 1000))

    def build_embeddings_payload(self, request: EmbeddingRequest) -> dict[str, Any]:
        """The JSON body of an embeddings request: model and input, then the role's sampling (e.g. dimensions)."""
        rest: dict[str, Any] = {"encoding_format": "base64", **self.config.sampling}
        rest.pop("model", None)
        rest.pop("input", None)
        return {"model": self.config.model, "input": list(request.texts), **dict(sorted(rest.items()))}

    async def _post_with_retries(self, content: bytes, path: str = "/chat/completions") -> tuple[HTTPReply, int]:
        """The first response that is not worth retrying, and how many attempts it took."""
        rng: random.Random | None = None
        for attempt in range(1, self.retry.max_retries + 2):
            try:
                outcome, retry_after = await self._attempt(content, path)
            except ModelError as exc:
                exc.attempts = attempt
                raise
            if isinstance(outcome, HTTPReply):
                return outcome, attempt
            cause = outcome
            if attempt > self.retry.max_retries:
                message = f"{self._where}: gave up after {attempt} attempts; last: {_describe(cause)}"
                error = ModelUnavailableError(message)
                error.attempts = attempt
                raise error from cause
            # Seeded from the request, never the global RNG, so a rerun of the same request backs off the same way.
            rng = rng or random.Random(int.from_bytes(hashlib.blake2b(content, digest_size=8).digest(), "big"))
            delay = self.retry.delay(attempt, rng, retry_after)
            log.info("model.retry", model=self.config.model, attempt=attempt, delay_s=round(delay, 3), cause=_describe(cause))
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def _attempt(self, content: bytes, path: str = "/chat/completions") -> tuple[HTTPReply | Exception, float | None]:
        """A final response, or a retryable failure with the server's Retry-After."""
        try:
            index = await self._slots.get()
            try:
                response = await self._post(index, content, path)
            finally:
                self._slots.put_nowait(index)
        except self._retryable as exc:
            return exc, None
        except self._failures as exc:
            raise ModelError(f"{self._where}: request failed: {_describe(exc)}") from exc
        if is_retryable_status(response.status_code):
            return self.status_error(response), parse_retry_after(response.headers)
        return response, None

    def status_error(self, response: HTTPReply) -> ModelHTTPError:
        """The error for a non-success status; the body is kept (truncated, key redacted)."""
        status, text = response.status_code, self._redact(response.text)
        if status in (401, 403):
            return ModelAuthError(status, text)
        lowered = text.lower()
        if status in (400, 413) and any(marker in lowered for marker in CONTEXT_OVERFLOW_MARKERS):
            return ContextOverflowError(status, text)
        return ModelHTTPError(status, text, retryable=is_retryable_status(status))

    async def check(self) -> None:
        """One GET /models with a short timeout: the key is accepted and the endpoint answers."""
        failures: tuple[type[Exception], ...] = (TimeoutError, *self._retryable, *self._failures)
        try:
            response = await self._get("/models", min(CHECK_TIMEOUT_S, self.config.timeout_s))
        except failures as exc:
            raise ModelUnavailableError(f"{self._where}: unreachable: {_describe(exc)}") from exc
        if response.status_code < 300:
            return
        error = self.status_error(response)
        if error.retryable:
            raise ModelUnavailableError(f"{self._where}: {error}") from error
        raise error

    # ----------------------------------------------------------------------- parsing (override to adapt)

    def parse_body(self, text: str) -> dict[str, Any]:
        """The reply as a JSON object."""
        try:
            body = loads(text)  # orjson where it reads what json reads (integers past 64 bits stay ints)
        except ValueError:
            raise ModelResponseError(f"{self._where}: the reply is not JSON: {snippet(text)}") from None
        if not isinstance(body, dict):
            raise ModelResponseError(f"{self._where}: the reply is not a JSON object: {snippet(text)}")
        return body

    def parse_completion(self, body: dict[str, Any]) -> ChatResponse:
        """choices[0] and usage; refuses a message with neither content nor tool calls."""
        return completion_of(body, self._where, self.parse_message)

    def parse_message(self, message: dict[str, Any]) -> ChatResponse:
        """Content, tool calls and reasoning of choices[0].message."""
        return message_of(message, self._where, self.parse_tool_call, self.parse_reasoning)

    def parse_tool_call(self, call: Any) -> ToolCall:
        """One OpenAI tool call: {"id", "type": "function", "function": {"name", "arguments": "<JSON>"}}."""
        return tool_call_of(call, self._where, self.parse_arguments)

    def parse_arguments(self, name: str, arguments: Any) -> dict[str, Any]:
        """A tool call's arguments as an object; missing or empty means no arguments."""
        return arguments_object(name, arguments)

    def parse_reasoning(self, message: dict[str, Any]) -> str | None:
        """The reasoning text servers put beside the content (`reasoning_content`, or `reasoning`)."""
        return reasoning_of(message)

    # ----------------------------------------------------------------------- helpers

    @property
    def _where(self) -> str:
        return f"{self.config.model} at {self.base_url}"

    def _redact(self, text: str) -> str:
        """The text with the key blanked out, in case a server echoes it."""
        return text.replace(self._api_key, "***") if self._api_key else text


def _aiohttp() -> Any:
    """aiohttp, imported on first use through bench_openai.tls (its default TLS contexts load their CAs when used)."""
    from bench_openai.tls import import_aiohttp

    return import_aiohttp()


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The default TLS context with certifi's CA bundle, built once: loading the bundle costs about 40 ms each time."""
    return ssl.create_default_context(cafile=certifi.where())


def encode_body(payload: dict[str, Any]) -> bytes:
    """A request body: compact UTF-8 JSON, by orjson (a fifth of json.dumps's CPU on a typical agent request)."""
    try:
        return orjson.dumps(payload)
    except TypeError:  # orjson.JSONEncodeError: non-string keys, integers past 64 bits, lone surrogates
        # json writes what orjson refuses (and fails the same way on what cannot be sent at all).
        return json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()


async def _read(reply: aiohttp.ClientResponse) -> HTTPReply:
    body = await reply.read()
    try:
        text = body.decode(reply.charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know: read it as UTF-8, as httpx does
        text = body.decode("utf-8", errors="replace")
    return HTTPReply(reply.status, text, reply.headers)


def _positive_int(config: ModelConfig, option: str, default: int) -> int:
    value = config.options.get(option, default)
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ConfigError(f"model {config.model!r}: option {option} must be a positive integer, not {value!r}")
    return value


def _describe(exc: BaseException) -> str:
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
