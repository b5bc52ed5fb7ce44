"""serve_tools: the conversation's tools over MCP (streamable HTTP on 127.0.0.1), driven by the mcp SDK's own client."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

pytest.importorskip("mcp", reason="the MCP SDK is not installed: pip install 'mcp==2.3.*'")

from bench_bridge.mcp_server import SHUTDOWN_TIMEOUT_S, serve_tools
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def get_order(order_id: str, include_items: bool = False) -> str:
    """Look up an order by its id."""
    await asyncio.sleep(0.05)  # a tool that takes a while: bench executes it in the domain's environment
    return f"order {order_id}: shipped" + (" (2 items)" if include_items else "")


async def cancel_order(order_id: str) -> str:
    """Cancel an order."""
    raise LookupError(f"Error: order {order_id} not found")


async def wait_forever() -> str:
    """Never answers."""
    await asyncio.sleep(3600)
    return "late"


def texts(result: Any) -> list[str]:
    return [getattr(block, "text", "") for block in result.content]


@asynccontextmanager
async def session(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


def test_a_client_lists_the_tools_with_their_schemas() -> None:
    async def scenario() -> None:
        async with serve_tools([get_order, cancel_order], name="shop") as url, session(url) as client:
            assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert set(tools) == {"get_order", "cancel_order"}
        assert tools["get_order"].description == "Look up an order by its id."
        schema = tools["get_order"].input_schema
        assert schema["required"] == ["order_id"]
        assert schema["properties"]["order_id"]["type"] == "string"
        assert schema["properties"]["include_items"]["type"] == "boolean"

    asyncio.run(scenario())


def test_a_call_awaits_the_callable_and_returns_its_text() -> None:
    async def scenario() -> None:
        async with serve_tools([get_order]) as url, session(url) as client:
            result = await client.call_tool("get_order", {"order_id": "A1", "include_items": True})
        assert not result.is_error
        assert texts(result) == ["order A1: shipped (2 items)"]

    asyncio.run(scenario())


def test_a_tool_that_raises_gives_an_error_result_with_its_text() -> None:
    async def scenario() -> None:
        async with serve_tools([get_order, cancel_order]) as url, session(url) as client:
            failed = await client.call_tool("cancel_order", {"order_id": "B2"})
            invalid = await client.call_tool("get_order", {"include_items": True})
            after = await client.call_tool("get_order", {"order_id": "A1"})
        assert failed.is_error
        assert texts(failed) == ["Error: order B2 not found"]
        assert invalid.is_error and "order_id" in texts(invalid)[0]
        assert not after.is_error  # the server goes on serving

    asyncio.run(scenario())


def test_stopping_leaves_no_thread_task_or_listening_port() -> None:
    threads = set(threading.enumerate())

    async def scenario() -> int:
        async with serve_tools([get_order]) as url, session(url) as client:
            await client.call_tool("get_order", {"order_id": "A1"})
        port = int(url.rsplit(":", 1)[1].split("/")[0])
        assert asyncio.all_tasks() == {asyncio.current_task()}
        return port

    port = asyncio.run(scenario())
    assert set(threading.enumerate()) == threads
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


def test_stopping_is_bounded_with_a_call_in_flight_and_a_client_connected() -> None:
    async def scenario() -> float:
        async with serve_tools([wait_forever, get_order]) as url:
            started = asyncio.Event()

            async def call() -> Any:
                async with session(url) as client:
                    started.set()
                    return await client.call_tool("wait_forever", {})

            caller = asyncio.create_task(call())
            await started.wait()
            await asyncio.sleep(0.1)
            begun = time.monotonic()
        elapsed = time.monotonic() - begun
        caller.cancel()
        await asyncio.gather(caller, return_exceptions=True)
        return elapsed

    assert asyncio.run(scenario()) < SHUTDOWN_TIMEOUT_S + 1.5


def test_two_servers_at_once_get_their_own_ports() -> None:
    async def scenario() -> None:
        async with serve_tools([get_order]) as first, serve_tools([cancel_order]) as second:
            assert first != second
            async with session(second) as client:
                assert [tool.name for tool in (await client.list_tools()).tools] == ["cancel_order"]

    asyncio.run(scenario())


def test_serving_leaves_the_root_logger_alone() -> None:
    # As in bench's CLI, which logs through structlog: a root logger without handlers, that MCPServer's
    # logging.basicConfig would otherwise configure for every library in the process.
    root = logging.getLogger()
    kept = (list(root.handlers), root.level)
    root.handlers[:] = []

    async def scenario() -> None:
        async with serve_tools([get_order]):
            assert (root.handlers, root.level) == ([], kept[1])

    try:
        asyncio.run(scenario())
    finally:
        root.handlers[:] = kept[0]
        root.setLevel(kept[1])
