"""The bridge's OpenAI-compatible endpoint on 127.0.0.1: one per event loop (i.e. per run process), shared by its conversations.

Routes `GET /v1/models`, `POST /v1/chat/completions` and `POST /v1/responses` (plain or `stream: true`).
Each conversation registers a bearer token; a request with it becomes a bench ChatRequest that the
conversation sends through its model access (`setup.models.complete("agent", ...)`), so the run's ledger,
cache, retries, prices and cost cap apply. The socket is bound synchronously when the first conversation
starts (agents start outside any coroutine of their own), served from then on, and closed once no
conversation has used it for a while or when the run's event loop ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
import weakref
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from bench_kernel import (
    BudgetExceededError,
    ChatRequest,
    ChatResponse,
    ConfigError,
    ContextOverflowError,
    ModelAuthError,
    ModelError,
    ModelHTTPError,
    ModelResponseError,
    ModelUnavailableError,
    get_logger,
)

from . import wire

if TYPE_CHECKING:
    from aiohttp import web

IDLE_CLOSE_S = 2.0
"""How long the endpoint stays open with no conversation registered (a run starts the next one at once)."""
MAX_BODY_BYTES = 64 * 2**20
log = get_logger()


class Served(Protocol):
    """What the endpoint needs from a conversation: its model's name and a way to complete a request."""

    model: str

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """One model call of the conversation's agent (ledgered); raises bench's model errors."""
        ...


class Endpoint:
    """The loopback server: tokens -> conversations, OpenAI wire shapes in and out."""

    _by_loop: ClassVar[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Endpoint]] = weakref.WeakKeyDictionary()

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.conversations: dict[str, Served] = {}
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=1024)
        self.sock.setblocking(False)
        self.port: int = self.sock.getsockname()[1]
        self.closed = False
        self._runner: web.AppRunner | None = None
        self._serving = loop.create_task(self._serve())
        self._idle: asyncio.Task[None] | None = None

    @classmethod
    def shared(cls) -> Endpoint:
        """The running loop's endpoint, opened on first use (call from inside the loop)."""
        loop = asyncio.get_running_loop()
        endpoint = cls._by_loop.get(loop)
        if endpoint is None or endpoint.closed:
            endpoint = cls._by_loop[loop] = cls(loop)
        return endpoint

    @property
    def base_url(self) -> str:
        """What an OpenAI client takes as its base URL."""
        return f"http://127.0.0.1:{self.port}/v1"

    def register(self, conversation: Served) -> str:
        """A new bearer token for a conversation."""
        token = f"bench-{secrets.token_urlsafe(18)}"
        self.conversations[token] = conversation
        if self._idle is not None:
            self._idle.cancel()
            self._idle = None
        return token

    def unregister(self, token: str) -> None:
        """Forget a conversation's token; close the endpoint once it has been idle for a while."""
        self.conversations.pop(token, None)
        if not self.conversations and not self.closed and self._idle is None:
            self._idle = self.loop.create_task(self._close_when_idle())

    async def _close_when_idle(self) -> None:
        try:
            await asyncio.sleep(IDLE_CLOSE_S)
        finally:
            # Also when the run's loop ends and cancels this task: the server never outlives its run.
            if not self.conversations:
                await self.close()

    async def _serve(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=MAX_BODY_BYTES)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_post("/v1/responses", self._responses)
        self._runner = web.AppRunner(app, access_log=None, handle_signals=False)
        await self._runner.setup()
        await web.SockSite(self._runner, self.sock).start()

    async def close(self) -> None:
        """Stop serving and release the socket."""
        if self.closed:
            return
        self.closed = True
        if type(self)._by_loop.get(self.loop) is self:
            del type(self)._by_loop[self.loop]
        with contextlib.suppress(BaseException):
            await self._serving
        if self._runner is not None:
            await self._runner.cleanup()
        self.sock.close()

    # ----------------------------------------------------------------------- routes

    async def _models(self, request: web.Request) -> web.StreamResponse:
        return await self._guarded(request, self._list_models)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        return await self._guarded(request, self._complete_chat)

    async def _responses(self, request: web.Request) -> web.StreamResponse:
        return await self._guarded(request, self._complete_responses)

    async def _list_models(self, request: web.Request, served: Served) -> web.StreamResponse:
        from aiohttp import web

        model = {"id": served.model, "object": "model", "created": 0, "owned_by": "bench"}
        return web.json_response({"object": "list", "data": [model]})

    async def _complete_chat(self, request: web.Request, served: Served) -> web.StreamResponse:
        body = await _body(request)
        response = await served.complete(wire.chat_request(body, seed=None))
        if not body.get("stream"):
            return _json(wire.chat_completion(response, served.model))
        usage = bool((body.get("stream_options") or {}).get("include_usage"))
        return await _stream(request, wire.sse(wire.chat_chunks(response, served.model, include_usage=usage), named=False, done=True))

    async def _complete_responses(self, request: web.Request, served: Served) -> web.StreamResponse:
        body = await _body(request)
        response = await served.complete(wire.responses_request(body, seed=None))
        document = wire.responses_body(response, served.model, body)
        if not body.get("stream"):
            return _json(document)
        return await _stream(request, wire.sse(wire.responses_events(document), named=True, done=False))

    async def _guarded(self, request: web.Request, handler: Callable[[web.Request, Served], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        """Authenticate, run the handler, and turn every failure into an OpenAI-style error."""
        header = request.headers.get("Authorization", "")
        served = self.conversations.get(header.removeprefix("Bearer ").strip()) if header.startswith("Bearer ") else None
        if served is None:
            return _error(
                401,
                "no conversation of this run has this API key (bench gives each conversation its own)",
                "invalid_request_error",
                "invalid_api_key",
            )
        try:
            return await handler(request, served)
        except wire.BadRequest as exc:
            return _error(400, str(exc), "invalid_request_error")
        except (ModelError, BudgetExceededError, ConfigError) as exc:
            return _model_error(exc)


def _json(document: Any) -> web.StreamResponse:
    from aiohttp import web

    return web.json_response(document, dumps=lambda d: json.dumps(d, ensure_ascii=False))


async def _body(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json(loads=json.loads)
    except ValueError:
        raise wire.BadRequest("the request body is not JSON") from None
    if not isinstance(body, dict):
        raise wire.BadRequest("the request body is not a JSON object")
    return body


async def _stream(request: web.Request, payload: bytes) -> web.StreamResponse:
    from aiohttp import web

    response = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
    await response.prepare(request)
    await response.write(payload)
    await response.write_eof()
    return response


def _error(status: int, message: str, kind: str, code: str | None = None) -> web.StreamResponse:
    from aiohttp import web

    return web.json_response(wire.error_body(message, kind=kind, code=code), status=status)


def _model_error(exc: BaseException) -> web.StreamResponse:
    """bench's failure as the status and error an OpenAI client expects for it."""
    message = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, ContextOverflowError):
        return _error(400, message, "invalid_request_error", "context_length_exceeded")
    if isinstance(exc, BudgetExceededError):
        return _error(429, message, "insufficient_quota", "insufficient_quota")
    if isinstance(exc, ModelAuthError):
        # The agent's own key is fine: bench's credentials for the agent's model were refused upstream.
        return _error(502, message, "upstream_error", "upstream_auth")
    if isinstance(exc, ModelUnavailableError):
        return _error(503, message, "server_error", "upstream_unavailable")
    if isinstance(exc, ModelHTTPError) and 400 <= exc.status < 500:
        return _error(exc.status, message, "invalid_request_error")
    if isinstance(exc, ModelResponseError | ModelHTTPError):
        return _error(502, message, "upstream_error", "bad_upstream_reply")
    return _error(500, message, "server_error")
