"""The cascade's Realtime server: the OpenAI Realtime protocol over websockets on 127.0.0.1, with lockstep pacing.

One server per process (per event loop, strictly: the conversation's model access and the text agent live on the
run's loop, so their server must too) starts on first use. A conversation's agent offers the server a `Handoff`
(its text agent session and model access) and gets a one-time token; the client connects to
`ws://127.0.0.1:PORT/cascade/<token>/v1/realtime` (or passes `?token=`). The server is in the same process, so the
handoff is an object in memory: nothing secret crosses the socket, and a token is refused once claimed.

Lockstep: `session.created` says `"bench_lockstep": true`. A client that sends `{"type": "bench.tick", "tick": N}`
after a tick's audio gets `{"type": "bench.tick.done", "tick": N}` once every event caused by the audio received so far
(recognition, the agent's turn, synthesis and the audio it may send) has been sent before it.
"""

from __future__ import annotations

import asyncio
import http
import json
import secrets
import socket
import weakref
from typing import Any
from urllib.parse import parse_qs, urlsplit

import attrs

from bench_kernel import AgentSession, get_logger

from .session import DEFAULT_LEAD_MS, CascadeSession

log = get_logger()
PATH_PREFIX = "/cascade/"


@attrs.define(eq=False)
class Handoff:
    """What a conversation's agent hands the server for its session: the text agent and the speech roles
    (bench-voice's `SpeechModels` over the conversation's model access)."""

    agent: AgentSession
    models: Any
    lead_ms: int = DEFAULT_LEAD_MS
    tts_voice: str | None = None
    failure: BaseException | None = None
    """The first exception the pipeline reported as an `error` event (so the conversation can raise the real one)."""
    claimed: bool = False

    def fail(self, exc: BaseException) -> None:
        """Keep the first failure."""
        if self.failure is None:
            self.failure = exc


@attrs.define(eq=False)
class CascadeServer:
    """The listening socket, its websockets server task and the handoffs waiting for their connection."""

    sock: socket.socket
    handoffs: dict[str, Handoff] = attrs.field(factory=dict)
    task: asyncio.Task[None] | None = None
    claims: dict[Any, Handoff] = attrs.field(factory=dict)

    @property
    def port(self) -> int:
        """The port the server listens on."""
        return int(self.sock.getsockname()[1])

    def offer(self, handoff: Handoff) -> str:
        """Register a conversation's handoff; the base URL its client connects to (holding a one-time token)."""
        token = secrets.token_urlsafe(16)
        self.handoffs[token] = handoff
        return f"ws://127.0.0.1:{self.port}{PATH_PREFIX}{token}/v1"

    def withdraw(self, handoff: Handoff) -> None:
        """Forget an unclaimed handoff (its conversation ended without connecting)."""
        for token, held in list(self.handoffs.items()):
            if held is handoff:
                del self.handoffs[token]

    async def serve(self) -> None:
        """Accept connections until cancelled."""
        from websockets.asyncio.server import serve

        async with serve(
            self._connection, sock=self.sock, process_request=self._check_token, compression=None, ping_interval=None, max_size=None
        ) as server:
            await server.serve_forever()

    def _check_token(self, connection: Any, request: Any) -> Any:
        token = _token(request.path)
        handoff = self.handoffs.pop(token, None) if token else None
        if handoff is None:
            return connection.respond(http.HTTPStatus.FORBIDDEN, "unknown or used voice-cascade session token\n")
        handoff.claimed = True
        self.claims[connection] = handoff
        return None

    async def _connection(self, connection: Any) -> None:
        handoff = self.claims.pop(connection)
        outbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        session = CascadeSession(
            agent=handoff.agent,
            models=handoff.models,
            emit=outbox.put_nowait,
            lead_ms=handoff.lead_ms,
            tts_voice=handoff.tts_voice,
            session_id=f"sess_{secrets.token_hex(6)}",
            on_failure=handoff.fail,
        )
        writer = asyncio.get_running_loop().create_task(_write(connection, outbox))
        session.start()
        try:
            await _read(connection, session, outbox)
        finally:
            await session.close()
            writer.cancel()


async def _read(connection: Any, session: CascadeSession, outbox: asyncio.Queue[dict[str, Any]]) -> None:
    from websockets.exceptions import ConnectionClosed

    try:
        async for raw in connection:
            try:
                event = json.loads(raw)
                if not isinstance(event, dict):
                    raise ValueError("an event is a JSON object")
            except ValueError as exc:
                session.error(f"malformed event: {exc}", code="invalid_json")
                continue
            if event.get("type") == "bench.tick":
                await session.settle()
                outbox.put_nowait({"type": "bench.tick.done", "tick": event.get("tick")})
            else:
                await session.handle(event)
    except ConnectionClosed:
        pass


async def _write(connection: Any, outbox: asyncio.Queue[dict[str, Any]]) -> None:
    from websockets.exceptions import ConnectionClosed

    while True:
        event = await outbox.get()
        try:
            await connection.send(json.dumps(event))
        except ConnectionClosed:
            return


def _token(path: str) -> str | None:
    parts = urlsplit(path)
    if parts.path.startswith(PATH_PREFIX):
        return parts.path[len(PATH_PREFIX) :].split("/", 1)[0] or None
    found = parse_qs(parts.query).get("token")
    return found[0] if found else None


_SERVERS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, CascadeServer] = weakref.WeakKeyDictionary()


def cascade_server() -> CascadeServer:
    """The running loop's server, started on first use (the socket listens at once; connections wait in its backlog)."""
    loop = asyncio.get_running_loop()
    server = _SERVERS.get(loop)
    if server is None or server.task is None or server.task.done():
        sock = socket.create_server(("127.0.0.1", 0))
        server = CascadeServer(sock=sock)
        server.task = loop.create_task(server.serve(), name="voice-cascade server")
        _SERVERS[loop] = server
        log.debug("cascade.server_started", port=server.port)
    return server


async def stop_cascade_server() -> None:
    """Stop the running loop's server, if it has one (tests; a run's loop ends with the run and takes it along)."""
    server = _SERVERS.pop(asyncio.get_running_loop(), None)
    if server is None or server.task is None:
        return
    server.task.cancel()
    try:
        await server.task
    except asyncio.CancelledError:
        pass
    server.sock.close()
