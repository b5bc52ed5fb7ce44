"""The agent's system prompt every agent of bench renders from the run's profile (its LLM agents and the bridge's)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from bench_kernel.profiles.profile import Profile
from bench_kernel.schema.messages import Mode

if TYPE_CHECKING:
    from bench_kernel.conversation.participants import ConversationSetup
    from bench_kernel.schema.tasks import Action


def python_call(action: Action) -> str:
    """An action as `name(k=v, ...)`, each value as Python's str() shows it (how tau2's plans spell a step)."""
    return f"{action.name}({', '.join(f'{k}={v}' for k, v in action.arguments.items())})"


def plan_text(profile: Profile, actions: Sequence[Action]) -> str:
    """The gold actions as the profile's numbered plan: agent actions to perform, customer actions to ask for."""
    steps = []
    for n, action in enumerate(actions, start=1):
        key = "plan_step_user" if action.requestor == "user" else "plan_step_agent"
        arguments = json.dumps(action.arguments, ensure_ascii=False, sort_keys=True)
        steps.append(profile.render(key, n=str(n), name=action.name, call=python_call(action), arguments=arguments))
    return profile.text("plan_separator").join(steps)


def done_tool_name(profile: Profile) -> str:
    """The name of the tool a solo agent calls to end its work."""
    return str(profile.done_tool["function"]["name"])


def agent_instructions(setup: ConversationSetup, blocks: Sequence[str] = ()) -> str:
    """The mode's template (policy, ticket or plan), then `blocks` (e.g. a text-tool format), then the persona if shown."""
    profile, values = setup.profile, {"policy": setup.policy, "domain": setup.domain}
    if setup.mode is Mode.NO_USER:
        parts = [profile.render("agent_solo", **values, ticket=setup.task.ticket or "", done_tool=done_tool_name(profile))]
    elif setup.mode is Mode.ORACLE_PLAN:
        parts = [profile.render("agent_plan", **values, plan=plan_text(profile, setup.task.gold_actions()))]
    else:
        parts = [profile.render("agent", **values)]
    parts += blocks
    if setup.exposure == "persona" and setup.task.user_scenario.persona:
        parts.append(profile.render("persona", persona=setup.task.user_scenario.persona))
    return "\n\n".join(parts)
