"""The prompts this plugin's models get, rendered from the run's profile (bench's own words unless `--profile` says otherwise).

The texts themselves live in the profile (docs/profiles.md); this module only decides which text a
participant needs and what goes into its placeholders.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bench_kernel import ConversationSetup, Mode, Profile, agent_instructions, done_tool_name

from .texts import own_render, own_text

RESPOND_ACTION = "respond"


def done_tool(profile: Profile) -> str:
    """The name of the tool a solo agent calls to end its work."""
    return done_tool_name(profile)


def agent_prompt(setup: ConversationSetup, *, text_tools: Sequence[dict[str, Any]] | None = None, thought: bool = True) -> str:
    """The agent's system prompt: the kernel's (mode template, persona) with the text tool format when it applies."""
    if text_tools is None:
        return agent_instructions(setup)
    profile = setup.profile
    speak = (
        profile.render("speak_solo", done_tool=done_tool(profile))
        if setup.mode is Mode.NO_USER
        else profile.render("speak_to_user", respond=RESPOND_ACTION)
    )
    return agent_instructions(
        setup,
        [
            profile.render("text_tools", tools=json.dumps(list(text_tools), indent=2, ensure_ascii=False)),
            profile.render("react_format" if thought else "act_format", speak=speak),
        ],
    )


def user_prompt(setup: ConversationSetup) -> str:
    """The simulated user's system prompt: the profile's guidelines (with tools, when it has some) and the scenario."""
    key = "user" if setup.user_tools is None else "user_tools"
    return setup.profile.render(key, scenario=setup.task.user_scenario.render())


def voice_user_prompt(setup: ConversationSetup) -> str:
    """The voice user's system prompt: the profile's voice guidelines (with tools, when it has some), persona, scenario."""
    key = "voice_user" if setup.user_tools is None else "voice_user_tools"
    profile = setup.profile
    return own_render(profile, key, persona=own_text(profile, "voice_persona"), scenario=setup.task.user_scenario.render())


def judge_prompt(profile: Profile, transcript: str, assertions: Sequence[str]) -> list[dict[str, Any]]:
    """The judge's messages: the profile's rules, then the transcript and the statements (their ids: docs/judges.md)."""
    question = profile.render("judge_user", transcript=transcript, statements=judge_statements(profile, assertions))
    return [{"role": "system", "content": profile.text("judge_system")}, {"role": "user", "content": question}]


def judge_statements(profile: Profile, assertions: Sequence[str]) -> str:
    """The statements as the profile's judge lists them: numbered (the number is the id) or as a Python list."""
    if profile.judge.statements == "python_list":
        return repr(list(assertions))  # the texts are the ids: the judge repeats the one it grades
    return "\n".join(f"{i}. {a}" for i, a in enumerate(assertions, start=1))
