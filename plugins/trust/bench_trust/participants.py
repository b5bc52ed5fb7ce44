"""The audit's floors beside the kernel's do-nothing agent: talk-only and refuse, offline agents that never call a tool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel import Agent, AgentSession, AssistantMessage, ConversationSetup, Message, Mode, Profile

STOP = "###STOP###"
TALK_ONLY_LINE = "Thank you for your patience, I am looking into this for you and will get back to you in a moment."
"""What the talk-only agent says every turn: a polite stall that promises work and does none (bench's own words)."""
REFUSE_LINE = "I'm sorry, but I'm not able to help with this request. I have to decline it."
"""What the refuse agent says every turn (bench's own words)."""


@attrs.define
class ScriptedLineSession(AgentSession):
    """Never calls a tool; says the same line every turn (solo: stops at once)."""

    setup: ConversationSetup
    line: str

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """The line, or a stop in the no-user mode."""
        if self.setup.mode is Mode.NO_USER:
            return AssistantMessage(content=STOP)
        return AssistantMessage(content=self.line)

    def is_stop(self, message: AssistantMessage) -> bool:
        """Stops only in the no-user mode."""
        return self.setup.mode is Mode.NO_USER and STOP in (message.content or "")


@attrs.define(kw_only=True)
class ScriptedLineAgent(Agent):
    """A floor of `bench audit`: says one line every turn, never calls a tool (talk-only, refuse)."""

    line: str
    calls_models_itself: bool = False

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A fresh session saying the line."""
        return ScriptedLineSession(setup, self.line)

    async def profile_deviations(self, options: Mapping[str, Any], profile: Profile) -> list[str]:
        """One reason: scripted, no model request to compare with the profile's."""
        return ["scripted, sends no model request"]


def floor_agents() -> list[ScriptedLineAgent]:
    """The floors bench-trust registers (the do-nothing floor is the kernel's baseline agent)."""
    return [
        ScriptedLineAgent(
            name="talk-only",
            line=TALK_ONLY_LINE,
            description="Calls no tool and answers every turn with a polite stalling sentence (an audit floor).",
        ),
        ScriptedLineAgent(name="refuse", line=REFUSE_LINE, description="Calls no tool and politely refuses every request (an audit floor)."),
    ]
