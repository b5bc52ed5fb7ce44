"""A tiny hand-written agent framework, enough to pin the bridge's tool inversion without a real framework.

Like the real ones, it keeps its own history and runs its own tool loop: it asks the model (over HTTP,
through the bridge's endpoint), runs every tool call the model proposed at once (asyncio.gather) by
calling the Python functions it was given, and stops at the first reply without tool calls.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
import httpx


@attrs.define
class MiniAgent:
    """The framework's agent: a model endpoint, tools (plain async functions) and instructions."""

    base_url: str
    api_key: str
    tools: list[Callable[..., Awaitable[Any]]]
    instructions: str
    sequential: bool = False
    """Run the proposed calls one after the other instead of at once."""
    extra_call: tuple[str, dict[str, Any]] | None = None
    """A call the framework makes by itself (no model proposed it) before its first model call."""
    fail_with: str | None = None
    """Raise this instead of answering."""
    stream: bool = False
    hang: bool = False
    """Never answer (a framework stuck in its own loop)."""

    async def run(self, history: list[dict[str, Any]] | None, message: str) -> tuple[str, list[dict[str, Any]]]:
        """One user message through the loop."""
        history = [*(history or []), {"role": "user", "content": message}]
        functions = {f.__name__: f for f in self.tools}
        if self.fail_with:
            raise RuntimeError(self.fail_with)
        if self.hang:
            await asyncio.sleep(3600)
        if self.extra_call is not None:
            name, arguments = self.extra_call
            history.append({"role": "system", "content": f"pre-check: {await functions[name](**arguments)}"})
            self.extra_call = None
        async with httpx.AsyncClient(trust_env=False, timeout=30) as http:
            while True:
                message_out = await self._ask(http, history)
                history.append(message_out)
                calls = message_out.get("tool_calls") or []
                if not calls:
                    return message_out.get("content") or "", history
                runs = [functions[c["function"]["name"]](**json.loads(c["function"]["arguments"])) for c in calls]
                if self.sequential:
                    results = [await run for run in runs]
                else:
                    results = await asyncio.gather(*runs)
                history += [{"role": "tool", "tool_call_id": c["id"], "content": str(r)} for c, r in zip(calls, results, strict=True)]

    async def _ask(self, http: httpx.AsyncClient, history: list[dict[str, Any]]) -> dict[str, Any]:
        body = {
            "model": "mini",
            "messages": [{"role": "system", "content": self.instructions}, *history],
            "tools": [f.bench_schema for f in self.tools],
            "stream": self.stream,
        }  # type: ignore[attr-defined]
        reply = await http.post(f"{self.base_url}/chat/completions", json=body, headers={"Authorization": f"Bearer {self.api_key}"})
        reply.raise_for_status()
        if not self.stream:
            return dict(reply.json()["choices"][0]["message"])
        message: dict[str, Any] = {"role": "assistant", "content": ""}
        for line in reply.text.splitlines():
            if line.startswith("data: {"):
                for choice in json.loads(line[6:])["choices"]:
                    delta = choice["delta"]
                    message["content"] += delta.get("content") or ""
                    message.setdefault("tool_calls", []).extend(delta.get("tool_calls") or [])
        return message


@attrs.define
class MiniRunner:
    """The bridge runner for MiniAgent."""

    name: str = "mini"
    distribution: str = "httpx"

    def matches(self, agent: object) -> bool:
        return type(agent).__name__ == "MiniAgent"

    def opening(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return list(messages)  # its history is chat messages already

    async def turn(self, agent: Any, state: Any, message: str) -> tuple[str, Any]:
        return await agent.run(state, message)


def make(ctx: Any) -> MiniAgent:
    """The factory: options pick the variations the tests need."""
    options = ctx.options
    extra = options.get("extra_call")
    return MiniAgent(
        ctx.base_url,
        ctx.api_key,
        ctx.tools,
        ctx.instructions,
        sequential=bool(options.get("sequential")),
        extra_call=tuple(extra) if extra else None,
        fail_with=options.get("fail_with"),
        stream=bool(options.get("stream")),
        hang=bool(options.get("hang")),
    )


def not_an_agent(ctx: Any) -> object:
    """A factory returning something no runner plays."""
    return object()
