"""What the participants of this plugin share: views of a conversation as OpenAI chat messages, and model access.

A conversation is one list of kernel messages, but each side sees it differently: the agent
never sees the user's device actions, and the simulated user sees the agent's words as the
"user" of its own chat. The kernel builds each side's view (`bench_kernel.openai_messages` and
`openai_user_messages`); they are imported here under this plugin's older names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from bench_kernel import (
    ChatRequest,
    ChatResponse,
    ConfigError,
    ConversationSetup,
    Message,
    MessageStyle,
    Requestor,
    ToolCall,
)
from bench_kernel import openai_message as speaker
from bench_kernel import openai_messages as agent_view
from bench_kernel import openai_tool_calls as openai_tool_calls
from bench_kernel import openai_tool_result as tool_result
from bench_kernel import openai_user_messages as user_view
from bench_kernel import unseen_messages as new_messages

__all__ = [
    "OPENAI",
    "ChatLog",
    "agent_view",
    "chat_log",
    "new_messages",
    "openai_tool_calls",
    "option",
    "reasoning_data",
    "require_model",
    "speaker",
    "tool_result",
    "usage_of",
    "user_view",
]

OPENAI = MessageStyle()
"""The plain OpenAI chat format (bench's own profile's)."""


def require_model(setup_models: Any, role: str, who: str) -> None:
    """Fail at the start of a conversation when the run gave this role no model."""
    if setup_models is None or not setup_models.has(role):
        raise ConfigError(f"{who} needs a model for the {role} (use --{role}-model or [models.{role}] in the run config)")


def option(setup: ConversationSetup, role: str, key: str, default: Any = None) -> Any:
    """A participant option: from the run's participant options, else from the role's model options."""
    own = setup.options.get(role) or {}
    if key in own:
        return own[key]
    if setup.models is not None and setup.models.has(role):
        return setup.models.config(role).options.get(key, default)
    return default


def usage_of(response: ChatResponse) -> dict[str, int] | None:
    """Token counts of a reply, as messages store them."""
    usage = {"prompt_tokens": response.prompt_tokens, "completion_tokens": response.completion_tokens}
    found = {k: v for k, v in usage.items() if v is not None}
    return found or None


def reasoning_data(response: ChatResponse, extra: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """raw_data for a message: the model's reasoning (stored, not shown to anyone) and anything else worth keeping."""
    data = dict(extra or {})
    if response.reasoning:
        data["reasoning"] = response.reasoning
    return data or None


View = Callable[[Sequence[Message], MessageStyle], list[dict[str, Any]]]
"""How one participant sees kernel messages, as chat messages spelt in the profile's style."""


@attrs.define
class ChatLog:
    """One participant's side of a conversation: its system prompt, its chat history, and its model calls."""

    setup: ConversationSetup
    role: str
    """The model role it calls: "agent" or "user"."""
    system: str
    view: View
    """How this participant sees kernel messages (agent_view, user_view, ...)."""
    keep_reasoning: bool = False
    history: list[dict[str, Any]] = attrs.field(factory=list)
    started: bool = False
    calls: int = 0

    profiled_at: int = 0
    profile: str = ""

    def take(self, incoming: Sequence[Message]) -> None:
        """Add what arrived since the participant last spoke (and, on its first turn, the history before it)."""
        self.history += self.view(new_messages(self.setup, incoming, first=not self.started), self.setup.profile.messages)
        self.started = True

    async def ask(self, tools: Sequence[dict[str, Any]] | None = None, tool_choice: str | None = None) -> ChatResponse:
        """One model call with the system prompt (and, with context exposure, the latest profile) and the whole history."""
        if self.role == "agent" and self.setup.exposure == "context":
            await self._refresh_profile()
        system = f"{self.system}\n\n{self.profile}" if self.profile else self.system
        messages = [{"role": "system", "content": system}, *self.history]
        request = ChatRequest(
            messages=messages, tools=list(tools) if tools else None, tool_choice=tool_choice if tools else None, seed=self.setup.seed
        )
        return await self.setup.models.complete(self.role, request)

    async def _refresh_profile(self) -> None:
        """Every 3 user messages, infer the customer's profile again (an event records each inference)."""
        from .profile import EVERY, ProfileInferred, infer, profile_block

        said = sum(1 for m in self.history if m.get("role") == "user" and m.get("content"))
        if said // EVERY <= self.profiled_at // EVERY:
            return
        self.profiled_at = said
        source, profile = await infer(self.setup, self.history)
        self.profile = profile_block(self.setup, profile)
        self.setup.events.emit(ProfileInferred(source=source, user_messages=said, profile=profile), source="llm")

    def remember(self, reply: dict[str, Any], response: ChatResponse) -> None:
        """Add the participant's own reply to its history (with its reasoning only when asked to keep it)."""
        if self.keep_reasoning and response.reasoning:
            reply = {**reply, "reasoning_content": response.reasoning}
        self.history.append(reply)

    def name_calls(self, calls: Sequence[ToolCall], requestor: Requestor) -> list[ToolCall]:
        """The calls with the requestor set and every missing id filled in (results find their call by id)."""
        named = []
        for call in calls:
            self.calls += 1
            call_id = call.id or f"{self.role}-call-{self.calls}"
            named.append(ToolCall(id=call_id, name=call.name, arguments=dict(call.arguments), requestor=requestor))
        return named


def chat_log(setup: ConversationSetup, role: str, system: str, view: View) -> ChatLog:
    """A participant's chat log, keeping reasoning in its history when its options say `keep_reasoning`."""
    return ChatLog(setup, role, system, view, keep_reasoning=bool(option(setup, role, "keep_reasoning")))
