"""Agents that live elsewhere: one turn-by-turn contract, and the HTTP agent (http-agent) that speaks it.

Each turn the adapter sends a *turn payload*, a JSON object::

    {"conversation_id": "…", "seed": 1234, "task_id": "…", "domain": "mock", "mode": "default",
     "turn": 1, "policy": "…", "ticket": null, "tools": [OpenAI tool schemas],
     "messages": [OpenAI chat messages the agent has not seen yet]}

and expects a *reply*: ``{"content": str | null, "tool_calls": [{"id", "name", "arguments"}] | null}``.
``messages`` holds only what is new since the agent's last reply (on the first turn, the
conversation so far, usually the greeting and the customer's first message); the agent keeps its
own memory between turns, keyed by ``conversation_id``. Tool results come as ``{"role": "tool",
"tool_call_id", "content"}``; the customer's device actions are never shown to the agent.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import (
    Agent,
    AgentSession,
    AssistantMessage,
    ConfigError,
    ConversationSetup,
    Message,
    Mode,
    ParticipantError,
    ToolCall,
)

from .agents import solo_stop
from .chat import agent_view, new_messages


def turn_payload(setup: ConversationSetup, conversation_id: str, turn: int, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What an external agent receives each turn."""
    return {
        "conversation_id": conversation_id, "seed": setup.seed, "task_id": setup.task.id, "domain": setup.domain,
        "mode": setup.mode.value, "turn": turn, "policy": setup.policy,
        "ticket": setup.task.ticket if setup.mode is Mode.NO_USER else None,
        "tools": list(setup.agent_tools), "messages": messages,
    }


def message_from_reply(reply: Any, turn: int) -> AssistantMessage:
    """The assistant message an external agent's reply stands for; ParticipantError when the reply breaks the contract."""
    if not isinstance(reply, dict):
        raise ParticipantError(f"the agent's reply must be a JSON object, got {type(reply).__name__}")
    content = reply.get("content")
    if content is not None and not isinstance(content, str):
        raise ParticipantError("the agent's reply has a \"content\" that is not a string or null")
    entries = reply.get("tool_calls") or []
    if not isinstance(entries, list):
        raise ParticipantError("the agent's reply has \"tool_calls\" that is not a list or null")
    calls = [_tool_call(entry, f"turn{turn}-call{i}") for i, entry in enumerate(entries, start=1)]
    return AssistantMessage(content=content, tool_calls=calls or None)


def _tool_call(entry: Any, fallback_id: str) -> ToolCall:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ParticipantError(f"a tool call in the agent's reply has no \"name\": {entry!r:.200}")
    arguments = entry.get("arguments") or {}
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            raise ParticipantError(f"the arguments of {entry['name']!r} are not JSON: {arguments[:200]!r}") from None
    if not isinstance(arguments, dict):
        raise ParticipantError(f"the arguments of {entry['name']!r} are not an object")
    return ToolCall(id=str(entry.get("id") or fallback_id), name=entry["name"], arguments=arguments)


@attrs.define
class HttpAgentSession(AgentSession):
    """One conversation with an agent behind an HTTP endpoint: one POST per turn, one client per session."""

    setup: ConversationSetup
    url: str
    client: Any
    """An httpx.AsyncClient, closed with the session."""
    conversation_id: str = attrs.field(factory=lambda: uuid.uuid4().hex)
    turn: int = 0

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """POST the turn payload and read the reply."""
        import httpx

        self.turn += 1
        messages = agent_view(new_messages(self.setup, incoming, first=self.turn == 1))
        payload = turn_payload(self.setup, self.conversation_id, self.turn, messages)
        try:
            response = await self.client.post(self.url, json=payload)
        except httpx.HTTPError as exc:
            raise ParticipantError(f"agent at {self.url} unreachable: {type(exc).__name__}: {exc}") from exc
        if response.status_code != 200:
            raise ParticipantError(f"agent at {self.url} answered HTTP {response.status_code}: {response.text[:300]}")
        try:
            reply = response.json()
        except ValueError:
            raise ParticipantError(f"agent at {self.url} answered with something not JSON: {response.text[:300]!r}") from None
        return message_from_reply(reply, self.turn)

    def is_stop(self, message: AssistantMessage) -> bool:
        """In the no-user mode the agent ends by replying ###STOP###."""
        return solo_stop(self.setup, message)

    async def close(self) -> None:
        """Close the session's HTTP client."""
        await self.client.aclose()


@attrs.define(kw_only=True)
class HttpAgent(Agent):
    """An agent served over HTTP by any framework: set the agent option `url` (and optionally `timeout_s`)."""

    name: str = "http-agent"
    description: str = "POSTs each turn to the agent options' `url` and reads back content and tool calls."

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A session with its own HTTP client (no connection until the first turn)."""
        import httpx

        options = setup.options.get("agent") or {}
        url = options.get("url")
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise ConfigError(f"agent {self.name!r} needs an http(s) `url` in the agent options, "
                              'e.g. agent_options = {url = "http://127.0.0.1:8000/turn"} in the [run] table')
        timeout = float(options.get("timeout_s", 120.0))
        client = httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)))
        return HttpAgentSession(setup, url, client)
