"""The policy's side as bench participants, and the executor that lets the environment play the run's conversations.

They are registered in-process for one environment's run (the driver passes them to the plugin manager as an extra
plugin object), never through the `bench` entry point: `bench run --agent gym-policy` has no policy to wait for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

import attrs

from bench_kernel import (
    Agent,
    AgentSession,
    AssistantMessage,
    ConfigError,
    ConversationResult,
    ConversationSetup,
    Executor,
    Message,
    Mode,
    ParticipantError,
    RunContext,
    Unit,
    UserMessage,
    UserSession,
    UserSimulator,
    done_tool_name,
    hookimpl,
)

from .episode import CURRENT, Episode


class EpisodeServer(Protocol):
    """What the executor needs of an environment's driver (the driver imports this module, not the reverse)."""

    async def serve(self, ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None]) -> int:
        """Play the run's units as episodes until the environment closes; the number played."""
        ...


def _episode(kind: str, name: str) -> Episode:
    episode = CURRENT.get()
    if episode is None:
        raise ParticipantError(
            f"{kind} {name!r} is the policy of a bench-gym environment (or `bench play`); it has no policy to wait for in any other run"
        )
    return episode


@attrs.define
class PolicyAgentSession(AgentSession):
    """The agent's turns, each one the policy's action."""

    episode: Episode
    setup: ConversationSetup

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """Show the policy what arrived, return its action (a call of the `done` tool is the solo stop)."""
        message = await self.episode.policy_turn(incoming)
        assert isinstance(message, AssistantMessage)
        if self.setup.mode is Mode.NO_USER and message.tool_calls:
            done = done_tool_name(self.setup.profile)
            if any(c.name == done for c in message.tool_calls):
                dropped = [c.name for c in message.tool_calls if c.name != done]
                return AssistantMessage(content=self.setup.profile.solo_stop_token, raw_data={"dropped_tool_calls": dropped} if dropped else None)
        return message

    def is_stop(self, message: AssistantMessage) -> bool:
        """In the no-user mode, the profile's stop token without a tool call ends the work."""
        return self.setup.mode is Mode.NO_USER and not message.tool_calls and self.setup.profile.solo_stop_token in (message.content or "")


@attrs.define(kw_only=True)
class PolicyAgent(Agent):
    """The agent played by the environment's policy, one action per turn."""

    name: str
    description: str = "The agent side of a bench-gym environment: each turn is the policy's action."
    calls_models_itself: bool = True
    """A policy's model calls are its own: bench records its cost as unknown, never 0 (a person's is 0)."""

    def start(self, setup: ConversationSetup) -> AgentSession:
        """Bind the conversation to its episode (refusing a domain tool named like the solo `done` tool)."""
        episode = _episode("agent", self.name)
        if setup.mode is Mode.NO_USER and done_tool_name(setup.profile) in {t["function"]["name"] for t in setup.agent_tools}:
            raise ConfigError(
                f"the domain has a tool named {done_tool_name(setup.profile)!r}, which the policy's agent calls to end its work in the no-user mode"
            )
        episode.setup = setup
        return PolicyAgentSession(episode, setup)


@attrs.define
class PolicyUserSession(UserSession):
    """The user's turns, each one the policy's action."""

    episode: Episode
    setup: ConversationSetup

    async def respond(self, incoming: Sequence[Message]) -> UserMessage:
        """Show the policy what arrived, return its action."""
        message = await self.episode.policy_turn(incoming)
        assert isinstance(message, UserMessage)
        return message

    def is_stop(self, message: UserMessage) -> bool:
        """One of the profile's stop tokens without a tool call ends the conversation."""
        tokens = self.setup.profile.user_stop_tokens
        return not message.tool_calls and any(t in (message.content or "") for t in tokens)


@attrs.define(kw_only=True)
class PolicyUser(UserSimulator):
    """The user played by the environment's policy, one action per turn."""

    name: str
    description: str = "The user side of a bench-gym environment: each turn is the policy's action."

    def start(self, setup: ConversationSetup) -> UserSession:
        """Bind the conversation to its episode."""
        episode = _episode("user simulator", self.name)
        episode.setup = setup
        return PolicyUserSession(episode, setup)


@attrs.define(kw_only=True)
class GymExecutor(Executor):
    """Plays the run's conversations as the environment's policy asks for episodes, until the environment closes."""

    name: str = "gym"
    description: str = "bench-gym's environments: episodes start when the policy resets, end when the conversation does"
    driver: EpisodeServer

    async def execute(self, ctx: RunContext, units: list[Unit], on_finished: Callable[[ConversationResult], None]) -> int:
        """Serve episodes (and the baseline units, when the run has them) until the driver closes."""
        return await self.driver.serve(ctx, units, on_finished)


@attrs.define(eq=False)  # pluggy keeps plugins in sets: hashed by identity
class EnvironmentParts:
    """The in-process plugin object of one environment's run: its policy participant and its executor."""

    driver: EpisodeServer
    side: str
    policy_name: str
    person: bool = False

    @hookimpl
    def register_agents(self, register: Callable[[Agent], None]) -> None:
        """The policy's agent, on the agent side."""
        if self.side == "agent":
            register(PolicyAgent(name=self.policy_name, calls_models_itself=not self.person))

    @hookimpl
    def register_user_simulators(self, register: Callable[[UserSimulator], None]) -> None:
        """The policy's user, on the user side."""
        if self.side == "user":
            register(PolicyUser(name=self.policy_name))

    @hookimpl
    def register_executors(self, register: Callable[[Executor], None]) -> None:
        """The environment's executor."""
        register(GymExecutor(driver=self.driver))
