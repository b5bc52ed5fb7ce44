"""The model-driven user simulator (llm-user): plays the task's scenario, with device tools in dual control."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import ChatResponse, ConversationSetup, Message, Profile, UserMessage, UserSession, UserSimulator

from .agents import keep_reasoning_deviation
from .chat import ChatLog, chat_log, reasoning_data, require_model, speaker, usage_of, user_view
from .prompts import user_prompt


@attrs.define
class ModelUserSession(UserSession):
    """A simulated customer: the conversation with roles flipped, so the agent is its "user"."""

    setup: ConversationSetup
    log: ChatLog

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        """Add what arrived, ask the user model, and return its message or device tool calls."""
        self.log.take(incoming)
        response = await self.log.ask(self.setup.user_tools, "auto")
        message = self.message(response)
        self.log.remember(speaker("assistant", message.content, message.tool_calls, self.setup.profile.messages), response)
        return message

    def message(self, response: ChatResponse) -> UserMessage:
        """The model's reply as the user's message (its tool calls named and given ids)."""
        calls = self.log.name_calls(response.tool_calls, "user")
        return UserMessage(content=response.content, tool_calls=calls or None, usage=usage_of(response), raw_data=reasoning_data(response))

    def is_stop(self, message: UserMessage) -> bool:
        """True when the message carries one of the profile's stop tokens and no tool call."""
        tokens = self.setup.profile.user_stop_tokens
        return not message.tool_calls and any(t in (message.content or "") for t in tokens)


@attrs.define(kw_only=True)
class ModelUser(UserSimulator):
    """A customer played by the run's user model, from the task's scenario (and persona, when it has one)."""

    name: str = "llm-user"
    description: str = "Model-played customer: our guidelines plus the task's scenario; uses device tools in dual control."
    model_roles: tuple[str, ...] = ("user",)

    def start(self, setup: ConversationSetup) -> UserSession:
        """A session with our guidelines and the task's scenario."""
        require_model(setup.models, "user", f"user simulator {self.name!r}")
        return ModelUserSession(setup, chat_log(setup, "user", user_prompt(setup), user_view))

    async def profile_deviations(self, options: Mapping[str, Any], profile: Profile) -> list[str] | None:
        """Nothing: its prompt, history and sampling are the profile's (bar kept reasoning)."""
        return keep_reasoning_deviation(options)
