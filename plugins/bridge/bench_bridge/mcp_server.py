"""The conversation's tools as an MCP server (streamable HTTP on 127.0.0.1), for agents in another process.

    async with serve_tools(tools) as url:   # http://127.0.0.1:PORT/mcp
        ...  # an MCP client lists the tools and calls them; each call awaits the callable

Imported only when MCP is asked for: it imports the `mcp` SDK and uvicorn at module level.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

from bench_bridge.net import loopback_socket

ToolFunction = Callable[..., Awaitable[Any]]

STARTUP_TIMEOUT_S = 10.0
GRACEFUL_SHUTDOWN_S = 1.0
"""How long open MCP sessions (a client's SSE stream) may take to close before they are cancelled."""
SHUTDOWN_TIMEOUT_S = 5.0
"""The most a stop may take in all; after it the server task is cancelled."""


@contextlib.asynccontextmanager
async def serve_tools(tools: Sequence[ToolFunction], *, name: str = "bench", sock: socket.socket | None = None) -> AsyncIterator[str]:
    """Serve `tools` over MCP on a free loopback port (or on `sock`, bound beforehand) for the block; yields the URL."""
    # Stateless: no session outlives its request, so a client left connected cannot hold the stop up.
    app = _mcp_server(tools, name).streamable_http_app(host="127.0.0.1", stateless_http=True, json_response=True)
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on", timeout_graceful_shutdown=int(GRACEFUL_SHUTDOWN_S))
    server = _InLoopServer(config)
    sock = sock or loopback_socket()
    task = asyncio.create_task(server.serve(sockets=[sock]), name=f"mcp-server-{name}")
    try:
        await _started(server, task)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        await _stop(server, task)
        sock.close()


def _mcp_server(tools: Sequence[ToolFunction], name: str) -> MCPServer[Any]:
    with _root_logging_kept():
        server: MCPServer[Any] = MCPServer(name, log_level="WARNING", warn_on_duplicate_tools=False)
    for tool in tools:
        # Unstructured: the result is the tool's text, as the agent's other paths get it.
        server.add_tool(_errors_as_results(tool), name=tool.__name__, structured_output=False)
    return server


def _errors_as_results(tool: ToolFunction) -> ToolFunction:
    """The tool, with an exception turned into an error result carrying its text.

    MCPServer shows the client only "Error executing tool NAME" for an unexpected exception and logs a
    traceback; the agent should read the error as bench's own agents do.
    """

    @functools.wraps(tool)  # the signature and docstring become the MCP tool's input schema and description
    async def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return await tool(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - a tool failure is information for the agent
            return CallToolResult(content=[TextContent(type="text", text=str(exc) or type(exc).__name__)], is_error=True)

    return call


@contextlib.contextmanager
def _root_logging_kept() -> Iterator[None]:
    """Undo MCPServer's `logging.basicConfig`, which would print every library's INFO records in bench's process."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


class _InLoopServer(uvicorn.Server):
    """uvicorn on the caller's event loop, leaving SIGINT and SIGTERM to bench."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


async def _started(server: uvicorn.Server, task: asyncio.Task[None]) -> None:
    """Wait until uvicorn accepts connections; raise if it stopped or did not start in time."""
    deadline = asyncio.get_running_loop().time() + STARTUP_TIMEOUT_S
    while not server.started:
        if task.done():
            task.result()
            raise RuntimeError("the MCP server stopped while starting")
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"the MCP server did not start within {STARTUP_TIMEOUT_S} s")
        await asyncio.sleep(0.01)


async def _stop(server: uvicorn.Server, task: asyncio.Task[None]) -> None:
    """Ask uvicorn to finish (open sessions get GRACEFUL_SHUTDOWN_S), and cancel it past SHUTDOWN_TIMEOUT_S."""
    server.should_exit = True
    done, _ = await asyncio.wait({task}, timeout=SHUTDOWN_TIMEOUT_S)
    if not done:
        server.force_exit = True
        task.cancel()
        await asyncio.wait({task}, timeout=1.0)
    if task.done() and not task.cancelled() and task.exception() is not None:
        logging.getLogger(__name__).debug("MCP server ended with %r", task.exception())
