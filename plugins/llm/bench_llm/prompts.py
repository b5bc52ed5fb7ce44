"""The prompts this plugin's models get, rendered from the run's profile (bench's own words unless `--profile` says otherwise).

The texts themselves live in the profile (docs/profiles.md); this module only decides which text a
participant needs and what goes into its placeholders.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bench_kernel import Action, ConversationSetup, Mode, Profile

RESPOND_ACTION = "respond"


def done_tool(profile: Profile) -> str:
    """The name of the tool a solo agent calls to end its work."""
    return str(profile.done_tool["function"]["name"])


def python_call(action: Action) -> str:
    """An action as `name(k=v, ...)`, each value as Python's str() shows it (how tau2's plans spell a step)."""
    return f"{action.name}({', '.join(f'{k}={v}' for k, v in action.arguments.items())})"


def plan_steps(profile: Profile, actions: Sequence[Action]) -> str:
    """The gold actions as the profile's numbered plan: agent actions to perform, customer actions to ask for."""
    steps = []
    for n, action in enumerate(actions, start=1):
        key = "plan_step_user" if action.requestor == "user" else "plan_step_agent"
        steps.append(profile.render(key, n=str(n), name=action.name, call=python_call(action),
                                    arguments=json.dumps(action.arguments, ensure_ascii=False, sort_keys=True)))
    return profile.text("plan_separator").join(steps)


def agent_prompt(setup: ConversationSetup, *, text_tools: Sequence[dict[str, Any]] | None = None,
                 thought: bool = True) -> str:
    """The agent's system prompt: the mode's template, then the text tool format and the persona when they apply."""
    profile, solo = setup.profile, setup.mode is Mode.NO_USER
    values = {"policy": setup.policy, "domain": setup.domain}
    if solo:
        parts = [profile.render("agent_solo", **values, ticket=setup.task.ticket or "", done_tool=done_tool(profile))]
    elif setup.mode is Mode.ORACLE_PLAN:
        parts = [profile.render("agent_plan", **values, plan=plan_steps(profile, setup.task.gold_actions()))]
    else:
        parts = [profile.render("agent", **values)]
    if text_tools is not None:
        speak = (profile.render("speak_solo", done_tool=done_tool(profile)) if solo
                 else profile.render("speak_to_user", respond=RESPOND_ACTION))
        parts.append(profile.render("text_tools", tools=json.dumps(list(text_tools), indent=2, ensure_ascii=False)))
        parts.append(profile.render("react_format" if thought else "act_format", speak=speak))
    if setup.exposure == "persona" and setup.task.user_scenario.persona:
        parts.append(profile.render("persona", persona=setup.task.user_scenario.persona))
    return "\n\n".join(parts)


def user_prompt(setup: ConversationSetup) -> str:
    """The simulated user's system prompt: the profile's guidelines (with tools, when it has some) and the scenario."""
    key = "user" if setup.user_tools is None else "user_tools"
    return setup.profile.render(key, scenario=setup.task.user_scenario.render())


def judge_prompt(profile: Profile, transcript: str, assertions: Sequence[str]) -> list[dict[str, Any]]:
    """The judge's messages: the profile's rules, then the transcript and the numbered statements."""
    statements = "\n".join(f"{i}. {a}" for i, a in enumerate(assertions, start=1))
    question = profile.render("judge_user", transcript=transcript, statements=statements)
    return [{"role": "system", "content": profile.text("judge_system")}, {"role": "user", "content": question}]
