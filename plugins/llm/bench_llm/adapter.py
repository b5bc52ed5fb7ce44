"""Agents that live elsewhere: one turn-by-turn contract, and the HTTP agent (http-agent) that speaks it.

Each turn the adapter sends a *turn payload*, a JSON object::

    {"conversation_id": "…", "seed": 1234, "task_id": "…", "domain": "mock", "mode": "default",
     "turn": 1, "policy": "…", "ticket": null, "tools": [OpenAI tool schemas],
     "messages": [OpenAI chat messages the agent has not seen yet]}

and expects a *reply*: ``{"content": str | null, "tool_calls": [{"id", "name", "arguments"}] | null}``, optionally
with ``"usage": {"prompt_tokens": int, "completion_tokens": int}`` (what the agent's own model calls for this reply
used; kept on the assistant message and summed in the report) and ``"model": str`` (the model it used; kept in the
message's ``raw_data["model"]`` and named in the report header).
``messages`` holds only what is new since the agent's last reply (on the first turn, the
conversation so far, usually the greeting and the customer's first message); the agent keeps its
own memory between turns, keyed by ``conversation_id``. Tool results come as ``{"role": "tool",
"tool_call_id", "content"}``; the customer's device actions are never shown to the agent.

When the conversation ends, whatever the reason, the HTTP agent POSTs an *end notice* to ``<url>/end`` (or the
``end_url`` option): ``{"conversation_id": "…", "event": "end", "termination_reason": "user_stop"}``, where the
reason is one of bench's termination reasons (``infrastructure_error`` when bench itself failed) or ``cancelled``
(the run was interrupted or hit its deadline). It is sent only for conversations the agent saw a turn of, waits at
most ``end_timeout_s`` (default 5 s), and a failure is logged, never held against the conversation.
"""

from __future__ import annotations

import json
import urllib.parse
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import (
    AgentSession,
    AssistantMessage,
    ConfigError,
    ConversationSetup,
    Message,
    Mode,
    ParticipantError,
    ToolCall,
    get_logger,
)

from .agents import solo_stop
from .chat import agent_view, new_messages

log = get_logger()
USAGE_KEYS = ("prompt_tokens", "completion_tokens")
END_TIMEOUT_S = 5.0
CANCELLED = "cancelled"
"""The end notice's termination_reason when the conversation was cut off by the run (interrupted, out of time)."""


def turn_payload(setup: ConversationSetup, conversation_id: str, turn: int, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """What an external agent receives each turn."""
    return {
        "conversation_id": conversation_id,
        "seed": setup.seed,
        "task_id": setup.task.id,
        "domain": setup.domain,
        "mode": setup.mode.value,
        "turn": turn,
        "policy": setup.policy,
        "ticket": setup.task.ticket if setup.mode is Mode.NO_USER else None,
        "tools": list(setup.agent_tools),
        "messages": messages,
    }


def message_from_reply(reply: Any, turn: int) -> AssistantMessage:
    """The assistant message an external agent's reply stands for; ParticipantError when the reply breaks the contract."""
    if not isinstance(reply, dict):
        raise ParticipantError(f"the agent's reply must be a JSON object, got {type(reply).__name__}")
    content = reply.get("content")
    if content is not None and not isinstance(content, str):
        raise ParticipantError('the agent\'s reply has a "content" that is not a string or null')
    entries = reply.get("tool_calls") or []
    if not isinstance(entries, list):
        raise ParticipantError('the agent\'s reply has "tool_calls" that is not a list or null')
    calls = [_tool_call(entry, f"turn{turn}-call{i}") for i, entry in enumerate(entries, start=1)]
    model = reply.get("model")
    if model is not None and not isinstance(model, str):
        raise ParticipantError('the agent\'s reply has a "model" that is not a string or null')
    return AssistantMessage(content=content, tool_calls=calls or None, usage=_usage(reply.get("usage")), raw_data={"model": model} if model else None)


def _usage(usage: Any) -> dict[str, int] | None:
    """The token counts of a reply's `usage` (other keys, such as OpenAI's *_details, are left out)."""
    if usage is None:
        return None
    if not isinstance(usage, Mapping):
        raise ParticipantError('the agent\'s reply has a "usage" that is not an object or null')
    counts = {key: usage[key] for key in USAGE_KEYS if usage.get(key) is not None}
    bad = [key for key, value in counts.items() if type(value) is not int or value < 0]
    if bad:
        raise ParticipantError(f"the agent's reply has a usage {bad[0]!r} that is not a whole number of tokens: {usage[bad[0]]!r:.50}")
    return counts or None


def _tool_call(entry: Any, fallback_id: str) -> ToolCall:
    if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
        raise ParticipantError(f'a tool call in the agent\'s reply has no "name": {entry!r:.200}')
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
    end_url: str | None = None
    """Where the end notice goes (None: no notice)."""
    end_timeout_s: float = END_TIMEOUT_S

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
        """Tell the agent the conversation ended (when it saw a turn of it), then close the session's HTTP client."""
        try:
            if self.end_url is not None and self.turn > 0:
                await self.notify_end()
        finally:
            await self.client.aclose()

    async def notify_end(self) -> None:
        """POST the end notice; a failure is logged, never raised (the conversation's outcome is already decided)."""
        reason = self.termination.value if self.termination is not None else CANCELLED
        notice = {"conversation_id": self.conversation_id, "event": "end", "termination_reason": reason}
        try:
            response = await self.client.post(self.end_url, json=notice, timeout=self.end_timeout_s)
        except Exception as exc:  # noqa: BLE001 - an unreachable or slow end point only costs a log line
            log.warning("http_agent.end_failed", url=self.end_url, conversation_id=self.conversation_id, error=f"{type(exc).__name__}: {exc}")
            return
        if response.status_code >= 300:
            log.warning(
                "http_agent.end_failed",
                url=self.end_url,
                conversation_id=self.conversation_id,
                error=f"HTTP {response.status_code}: {response.text[:200]}",
            )


def start_session(name: str, setup: ConversationSetup) -> AgentSession:
    """The session of http-agent (registered as `name`) with its own HTTP client (no connection until the first turn)."""
    import httpx

    options = setup.options.get("agent") or {}
    url = options.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise ConfigError(
            f"agent {name!r} needs an http(s) `url` in the agent options, "
            'e.g. agent_options = {url = "http://127.0.0.1:8000/turn"} in the [run] table'
        )
    timeout = float(options.get("timeout_s", 120.0))
    end_timeout = float(options.get("end_timeout_s", END_TIMEOUT_S))
    end_url = end_url_of(url, options.get("end_url"), name)
    client = httpx.AsyncClient(timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)))
    return HttpAgentSession(setup, url, client, end_url=end_url, end_timeout_s=end_timeout)


def end_url_of(url: str, option: Any, agent: str = "http-agent") -> str | None:
    """Where the end notice goes: `<url>/end` by default, the `end_url` option when given, nowhere when it is false or ""."""
    if option is None:
        parts = urllib.parse.urlsplit(url)
        return urllib.parse.urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/end"))
    if option is False or option == "":
        return None
    if not isinstance(option, str) or not option.startswith(("http://", "https://")):
        raise ConfigError(f"agent {agent!r}: `end_url` must be an http(s) URL, or false for no end notice; got {option!r}")
    return option
