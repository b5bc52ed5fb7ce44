"""An agent in another process or language: each user message is one HTTP call, its tools come over MCP.

The factory returns `RemoteAgent(url)` (with `--agent-option mcp=true`). Each turn bench POSTs to the URL::

    {"conversation_id": "...", "turn": 1, "message": "what the user said", "instructions": "...",
     "model": {"base_url": "http://127.0.0.1:PORT/v1", "api_key": "...", "model": "..."},
     "mcp_url": "http://127.0.0.1:PORT/mcp", "tools": [OpenAI schemas], "tool_choice": "auto",
     "history": [the opening, on the first turn: {"role": "assistant", "content": "the greeting"}],
     "mode": "default", "ticket": null}

and the agent answers ``{"content": "its reply to the user"}`` once its own loop is done. Meanwhile it calls its
model at `model.base_url` (OpenAI protocol, bearer `model.api_key`) and the conversation's tools at `mcp_url`:
both go through bench (ledger, cache, cost cap; tool calls executed by the domain and scored). It keeps its own
history by `conversation_id`.
"""

from __future__ import annotations

from typing import Any

import attrs

from bench_kernel import ParticipantError

from . import current_context

REMOTE_TIMEOUT_S = 600.0


@attrs.frozen
class RemoteAgent:
    """What a factory returns for an agent served over HTTP: its turn URL."""

    url: str
    timeout_s: float = REMOTE_TIMEOUT_S


@attrs.frozen
class RemoteRunner:
    """Plays a turn by POSTing the user's message to the agent's URL and waiting for its answer."""

    name: str = "remote"
    distribution: str = "bench-bridge"

    def matches(self, agent: object) -> bool:
        """True for a RemoteAgent."""
        return isinstance(agent, RemoteAgent)

    async def turn(self, agent: object, state: Any, message: str) -> tuple[str, Any]:
        """One turn: the message, the model endpoint and the MCP URL out; the agent's reply back."""
        import httpx

        assert isinstance(agent, RemoteAgent)
        context = current_context()
        if context is None:
            raise ParticipantError("remote: no conversation context")
        turn = (state or 0) + 1
        payload = {
            "conversation_id": context.api_key,
            "turn": turn,
            "message": message,
            "instructions": context.instructions,
            "mode": context.mode,
            "ticket": context.ticket,
            "model": {"base_url": context.base_url, "api_key": context.api_key, "model": context.model},
            "mcp_url": context.mcp_url,
            "tools": context.tool_schemas,
            "tool_choice": context.tool_choice,
            "history": context.history if turn == 1 else [],
        }
        async with httpx.AsyncClient(timeout=agent.timeout_s, trust_env=False) as client:
            reply = await client.post(agent.url, json=payload)
        if reply.status_code >= 300:
            raise ParticipantError(f"remote agent {agent.url}: HTTP {reply.status_code}: {reply.text[:300]}")
        body = reply.json()
        content = body.get("content") if isinstance(body, dict) else None
        if not isinstance(content, str):
            raise ParticipantError(f'remote agent {agent.url}: the reply needs a string "content": {reply.text[:300]}')
        return content, turn
