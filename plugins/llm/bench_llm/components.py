"""The components a run registers but may not use (http-agent, llm-judge, voice-user), light to import.

Every run that loads bench-llm registers them; each imports its module (the HTTP adapter, the judge, the voice user
with bench-duplex) only when a run uses it, so a text run with llm-fc and llm-user does not pay for them.
"""

from __future__ import annotations

import attrs

from bench_kernel import Agent, AgentSession, Check, ConversationSetup, Judge, JudgeRequest, Profile, UserSession, UserSimulator

VOICE_USER = "voice-user"


@attrs.define(kw_only=True)
class HttpAgent(Agent):
    """An agent served over HTTP by any framework: set the agent option `url` (and optionally `timeout_s`, `end_url`,
    `end_timeout_s`).

    Its fingerprint is empty: bench cannot see the code behind the URL, and the URL itself is already part of the
    run's identity through the agent options. Mark a new version of the service with an option of your own (say
    `version = "2"`): every agent option is part of the identity.
    """

    name: str = "http-agent"
    description: str = "POSTs each turn to the agent options' `url` and reads back content and tool calls."

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A session with its own HTTP client (no connection until the first turn)."""
        from .adapter import start_session

        return start_session(self.name, setup)


@attrs.define(kw_only=True)
class ModelJudge(Judge):
    """Asks the run's judge model whether each assertion holds on the conversation."""

    name: str = "llm-judge"
    description: str = "Model judge: grades each NL assertion from the transcript, answering in JSON."
    model_roles: tuple[str, ...] = ("judge",)

    async def profile_deviations(self, profile: Profile) -> list[str]:
        """None: its texts, transcript, statements, reply format and sampling are the profile's (docs/judges.md)."""
        return []

    async def judge(self, request: JudgeRequest) -> list[Check]:
        """One check per assertion, in order, with the model's reasoning as the detail."""
        from .judge import judge_assertions

        return await judge_assertions(self.name, request)


@attrs.define(kw_only=True)
class VoiceUser(UserSimulator):
    """A customer on a full-duplex phone line, played by the run's user model."""

    name: str = VOICE_USER
    description: str = (
        "Model-played caller for full duplex: our voice guidelines, tau2's turn-taking, the model's "
        "interrupt and backchannel decisions (optional user-decisions role)."
    )
    model_roles: tuple[str, ...] = ("user",)
    duplex_only: bool = True

    def start(self, setup: ConversationSetup) -> UserSession:
        """A voice session on the conversation's line (refused outside full duplex)."""
        from .voice import start_session

        return start_session(self.name, setup)
