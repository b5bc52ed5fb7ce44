"""What the policy sees: the new messages of its own chat since its last action, and at the end bench's reward.

Messages are OpenAI chat messages as the policy's own chat holds them (the profile's message style): on the agent
side the customer's words are `user` messages and tool results `tool` messages; on the user side the roles are
flipped as for bench's model-played customer (the agent's words are `user` messages, the policy's own `assistant`),
and only its own tool results appear. So observations append to the policy's chat as they are, and its reply is
the action.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from bench_llm.chat import agent_view, new_messages, user_view
from bench_llm.prompts import user_prompt

from bench_kernel import ConversationSetup, Message, Mode, TerminationReason, agent_instructions, done_tool_name

from .config import Side
from .episode import Episode

LIMITS = frozenset(
    {TerminationReason.MAX_STEPS, TerminationReason.TOO_MANY_ERRORS, TerminationReason.TIMEOUT, TerminationReason.INFRASTRUCTURE_ERROR}
)
"""Endings that cut a conversation short (`truncated`): its limits, or a failure that is nobody's in it."""


@attrs.frozen(kw_only=True)
class Outcome:
    """One reset's or step's result, as gymnasium returns it."""

    observation: dict[str, Any]
    reward: float = 0.0
    terminated: bool = False
    truncated: bool = False
    info: dict[str, Any] = attrs.field(factory=dict)
    messages: Sequence[Message] = ()
    """The conversation messages the observation shows (for shaping), in bench's own form."""


def chat_view(side: Side, messages: Sequence[Message], setup: ConversationSetup | None) -> list[dict[str, Any]]:
    """Messages as the side's own chat holds them."""
    style = setup.profile.messages if setup is not None else None
    view = agent_view if side == "agent" else user_view
    return view(messages, style) if style is not None else view(messages)


def tools(episode: Episode) -> list[dict[str, Any]]:
    """The tools the policy may call: the agent's (with the profile's `done` tool when it works alone) or the user's."""
    setup = episode.setup
    assert setup is not None
    if episode.side == "user":
        return [dict(t) for t in setup.user_tools or []]
    found = [dict(t) for t in setup.agent_tools]
    return [*found, dict(setup.profile.done_tool)] if setup.mode is Mode.NO_USER else found


def instructions(episode: Episode) -> str:
    """The system prompt bench's own model participant of this side gets (policy, mode, ticket; or the scenario)."""
    assert episode.setup is not None
    return agent_instructions(episode.setup) if episode.side == "agent" else user_prompt(episode.setup)


def identity(episode: Episode, run_id: str) -> dict[str, Any]:
    """What every info says: which conversation this is."""
    seed = episode.setup.seed if episode.setup is not None else None
    return {
        "task_id": episode.task.id,
        "trial": episode.trial,
        "seed": seed,
        "run_id": run_id,
        "conversation_id": f"{run_id}/agent/{episode.task.id}/{episode.trial}",
        "side": episode.side,
    }


def opening(episode: Episode, run_id: str) -> Outcome:
    """The first observation: the conversation so far, the tools and the instructions (the ticket, working alone)."""
    setup = episode.setup
    if setup is None or episode.turns == 0:  # the conversation ended before the policy's first turn
        return attrs.evolve(ending(episode, run_id), terminated=False, truncated=False, reward=0.0)
    shown = new_messages(setup, episode.incoming, first=True)
    observation: dict[str, Any] = {"messages": chat_view(episode.side, shown, setup), "tools": tools(episode), "instructions": instructions(episode)}
    if episode.side == "agent":
        observation["policy"] = setup.policy
    if setup.mode is Mode.NO_USER:
        observation["ticket"] = setup.task.ticket
    info: dict[str, Any] = {**identity(episode, run_id), "task": setup.task, "policy": setup.policy, "mode": setup.mode.value}
    if setup.mode is Mode.NO_USER:
        info["done_tool"] = done_tool_name(setup.profile)
        info["stop_tokens"] = [setup.profile.solo_stop_token]
    if episode.side == "user":
        info["stop_tokens"] = list(setup.profile.user_stop_tokens)
    return Outcome(observation=observation, info=info, messages=shown)


def turn(episode: Episode, run_id: str) -> Outcome:
    """A step's observation while the conversation goes on: what arrived since the policy's action."""
    return Outcome(
        observation={"messages": chat_view(episode.side, episode.incoming, episode.setup)},
        info=identity(episode, run_id),
        messages=list(episode.incoming),
    )


def ending(episode: Episode, run_id: str) -> Outcome:
    """The last step: what was said after the policy's last action, bench's reward and every component's score."""
    result = episode.result
    assert result is not None
    shown = result.messages[episode.cursor :]
    reward_info = result.reward_info
    info = {
        **identity(episode, run_id),
        "seed": result.seed,
        "termination": result.termination_reason.value,
        "reward_info": reward_info,
        "components": _components(reward_info.components if reward_info is not None else ()),
        "error": result.error,
    }
    return Outcome(
        observation={"messages": chat_view(episode.side, shown, episode.setup)},
        reward=float(result.reward or 0.0),
        terminated=result.termination_reason not in LIMITS,
        truncated=result.termination_reason in LIMITS,
        info=info,
        messages=shown,
    )


def _components(components: Sequence[Any]) -> Mapping[str, float | None]:
    return {c.component: c.score for c in components}
