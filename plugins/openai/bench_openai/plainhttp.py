"""A small HTTP/1.1 client for plain-http endpoints (a vLLM server, a local model, a test server): keep-alive
connections on asyncio's protocols, requests and replies whole (no streaming), nothing but the standard library.

It is what bench-openai speaks to `http://` endpoints when no proxy applies (docs/throughput.md): importing
aiohttp costs a run's start-up ~0.1-0.2 s and its request path ~0.2 ms of CPU per request, most of it machinery
a JSON-in, JSON-out exchange with one server never uses. TLS, proxies and anything unusual go through aiohttp.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Iterator, Mapping

MAX_HEAD_BYTES = 64 * 1024
"""A reply's status line and headers at most: a server sending more is not speaking HTTP to us."""
MAX_BODY_BYTES = 256 * 1024 * 1024
"""A reply's body at most (a chat completion is kilobytes; an embeddings batch a few megabytes)."""


class PlainHTTPError(Exception):
    """The server's reply is not HTTP/1.x as this client reads it."""


class ServerDisconnected(ConnectionError):
    """The connection closed before the whole reply arrived (retryable: the server may have restarted)."""

    def __init__(self, message: str, *, before_reply: bool) -> None:
        super().__init__(message)
        self.before_reply = before_reply
        """Whether not one byte of the reply arrived (a kept-alive connection the server had closed)."""


class Headers(Mapping[str, str]):
    """A reply's headers, looked up by any case (repeated headers joined by commas, as HTTP allows)."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._items: dict[str, str] = {}
        for name, value in pairs:
            key = name.lower()
            self._items[key] = f"{self._items[key]}, {value}" if key in self._items else value

    def __getitem__(self, name: str) -> str:
        return self._items[name.lower()]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.lower() in self._items

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)


class Reply:
    """One whole reply: status, headers and body bytes (decompressed)."""

    __slots__ = ("body", "headers", "keep_alive", "status")

    def __init__(self, status: int, headers: Headers, body: bytes, keep_alive: bool) -> None:
        self.status, self.headers, self.body, self.keep_alive = status, headers, body, keep_alive

    def text(self) -> str:
        """The body as text, in the charset the reply names (UTF-8 when it names none or one Python lacks)."""
        charset = "utf-8"
        for part in self.headers.get("content-type", "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")


class _Connection(asyncio.Protocol):
    """One keep-alive connection: one request at a time, its reply parsed as the bytes arrive."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self._waiter: asyncio.Future[Reply] | None = None
        self._buffer = bytearray()
        self._head: tuple[int, Headers, bool] | None = None
        self._length: int | None = None  # the body's length (Content-Length), or None: chunked or until close
        self._chunked = False
        self._chunk_left: int | None = None  # bytes of the current chunk to come; None: its size line next; -1: trailers
        self._body = bytearray()  # a chunked body so far

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._head is not None and self._length is None and not self._chunked:  # a body that ends with the connection
            status, headers, _ = self._head
            try:
                self._finish(Reply(status, headers, _decoded(bytes(self._buffer), headers), keep_alive=False))
            except PlainHTTPError as error:
                self._abort(error)
            return
        before = self._head is None and not self._buffer
        waiter.set_exception(
            ServerDisconnected(f"the server closed the connection {'before replying' if before else 'mid-reply'}", before_reply=before)
        )

    def send(self, request: bytes) -> asyncio.Future[Reply]:
        """Write one request; the future holds its reply."""
        assert self.transport is not None and self._waiter is None
        self._waiter = asyncio.get_running_loop().create_future()
        self._buffer.clear()
        self._head, self._length, self._chunked, self._chunk_left = None, None, False, None
        self._body.clear()
        self.transport.write(request)
        return self._waiter

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            self._abort(PlainHTTPError("the server sent bytes nobody asked for"))
            return
        self._buffer += data
        try:
            self._parse()
        except PlainHTTPError as exc:
            self._abort(exc)

    def _parse(self) -> None:
        if self._head is None:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > MAX_HEAD_BYTES:
                    raise PlainHTTPError(f"no end of the reply's headers in its first {MAX_HEAD_BYTES} bytes")
                return
            head = self._read_head(bytes(self._buffer[:end]).decode("latin-1"))
            del self._buffer[: end + 4]
            if 100 <= head[0] < 200:  # an interim reply (100 Continue): the real one follows
                self._length, self._chunked = None, False
                self._parse()
                return
            self._head = head
        status, headers, keep_alive = self._head
        if self._chunked:
            body = self._dechunk()
            if body is None:
                return
        elif self._length is not None:
            if len(self._buffer) < self._length:
                return
            body = bytes(self._buffer[: self._length])
        else:
            if len(self._buffer) > MAX_BODY_BYTES:
                raise PlainHTTPError(f"a reply body over {MAX_BODY_BYTES} bytes")
            return  # read until the server closes the connection
        self._finish(Reply(status, headers, _decoded(body, headers), keep_alive))

    def _read_head(self, text: str) -> tuple[int, Headers, bool]:
        lines = text.split("\r\n")
        version, _, rest = lines[0].partition(" ")
        code = rest[:3]
        if not version.startswith("HTTP/1.") or not code.isdigit():
            raise PlainHTTPError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
        pairs = []
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if not sep or not name or name != name.strip():
                raise PlainHTTPError(f"not a header line: {line[:80]!r}")
            pairs.append((name, value.strip()))
        headers, status = Headers(pairs), int(code)
        connection = headers.get("connection", "").lower()
        keep_alive = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
        if status in (204, 304) or 100 <= status < 200:  # replies that never have a body
            self._length = 0
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self._chunked = True
        elif "content-length" in headers:
            length = headers["content-length"].split(",")[0].strip()
            if not length.isdigit() or int(length) > MAX_BODY_BYTES:
                raise PlainHTTPError(f"a Content-Length this client does not take: {headers['content-length'][:40]!r}")
            self._length = int(length)
        else:
            keep_alive = False  # the body runs to the connection's end
        return status, headers, keep_alive

    def _dechunk(self) -> bytes | None:
        """The whole chunked body once its last chunk (and any trailers) arrived, else None; consumes what it read."""
        buffer = self._buffer
        while True:
            if self._chunk_left is None:  # a size line next
                end = buffer.find(b"\r\n")
                if end < 0:
                    if len(buffer) > MAX_HEAD_BYTES:
                        raise PlainHTTPError("a chunk size line without an end")
                    return None
                size_text = bytes(buffer[:end]).split(b";")[0].strip()
                try:
                    self._chunk_left = int(size_text, 16) if size_text else -2
                except ValueError:
                    self._chunk_left = -2
                if self._chunk_left < 0:
                    raise PlainHTTPError(f"not a chunk size: {size_text[:20]!r}")
                del buffer[: end + 2]
                if self._chunk_left == 0:  # the last chunk: trailers (usually none) up to an empty line
                    self._chunk_left = -1
            if self._chunk_left == -1:
                if buffer.startswith(b"\r\n") or buffer.find(b"\r\n\r\n") >= 0:
                    return bytes(self._body)
                return None
            if len(buffer) < self._chunk_left + 2:
                return None
            self._body += buffer[: self._chunk_left]
            if len(self._body) > MAX_BODY_BYTES:
                raise PlainHTTPError(f"a reply body over {MAX_BODY_BYTES} bytes")
            del buffer[: self._chunk_left + 2]
            self._chunk_left = None

    def _finish(self, reply: Reply) -> None:
        waiter, self._waiter = self._waiter, None
        self._buffer.clear()
        if not reply.keep_alive:
            self.close()
        if waiter is not None and not waiter.done():
            waiter.set_result(reply)

    def _abort(self, error: Exception) -> None:
        waiter, self._waiter = self._waiter, None
        self.close()
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)

    def close(self) -> None:
        """Close the connection (it is never reused)."""
        self.closed = True
        if self.transport is not None:
            self.transport.close()


def _decoded(body: bytes, headers: Headers) -> bytes:
    encoding = headers.get("content-encoding", "identity").lower()
    if encoding in ("identity", ""):
        return body
    if encoding in ("gzip", "deflate", "x-gzip"):  # we ask for none, but a server may compress anyway
        try:
            return zlib.decompress(body, 47)  # 32 + 15: a gzip or zlib header, detected
        except zlib.error as exc:
            raise PlainHTTPError(f"a {encoding} body that does not decompress: {exc}") from None
    raise PlainHTTPError(f"a body in an encoding this client does not read: {encoding!r}")


class PlainHTTP:
    """Keep-alive connections to one `http://host:port`, last used first; each request waits for its whole reply."""

    def __init__(self, host: str, port: int, headers: Mapping[str, str], *, connect_timeout_s: float, read_timeout_s: float) -> None:
        self.host, self.port = host, port
        authority = f"[{host}]" if ":" in host else host
        fixed = {"Host": f"{authority}:{port}", "Accept": "application/json", "Accept-Encoding": "identity", **headers}
        self._fixed = "".join(f"{name}: {value}\r\n" for name, value in fixed.items())
        self.connect_timeout_s, self.read_timeout_s = connect_timeout_s, read_timeout_s
        self._idle: list[_Connection] = []
        self._open: set[_Connection] = set()

    async def request(self, method: str, target: str, body: bytes = b"", timeout_s: float | None = None) -> Reply:
        """Send one request (`target`: the path) and return its whole reply (`timeout_s`: for it, else the read timeout)."""
        head = f"{method} {target} HTTP/1.1\r\n{self._fixed}Content-Length: {len(body)}\r\n\r\n"
        message = head.encode("latin-1") + body
        while self._idle:  # a kept-alive connection the server closed in the meantime fails before any byte: try a fresh one
            connection = self._idle.pop()
            if connection.closed:  # the server closed it while idle (its keep-alive timeout)
                self._open.discard(connection)
                continue
            try:
                return await self._exchange(connection, message, timeout_s)
            except ServerDisconnected as exc:
                if not exc.before_reply:
                    raise
        return await self._exchange(await self._connect(), message, timeout_s)

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        _, connection = await asyncio.wait_for(loop.create_connection(_Connection, self.host, self.port), self.connect_timeout_s)
        self._open.add(connection)
        return connection

    async def _exchange(self, connection: _Connection, message: bytes, timeout_s: float | None) -> Reply:
        try:
            async with asyncio.timeout(self.read_timeout_s if timeout_s is None else timeout_s):
                reply = await connection.send(message)
        except BaseException:  # a timeout, a cancelled run, a broken reply: the connection's state is unknown
            connection.close()
            self._open.discard(connection)
            raise
        if connection.closed:
            self._open.discard(connection)
        else:
            self._idle.append(connection)
        return reply

    async def aclose(self) -> None:
        """Close every connection."""
        for connection in self._open:
            connection.close()
        self._open.clear()
        self._idle.clear()
        await asyncio.sleep(0)  # let the transports run their close callbacks
