"""bench-llm: model-driven agents, user simulator and judge for bench, and adapters for other agent frameworks."""

from __future__ import annotations

from collections.abc import Callable

from bench_kernel import Agent, Judge, UserSimulator, hookimpl

from .agents import FunctionCallingAgent, TextActionAgent
from .components import HttpAgent, ModelJudge, VoiceUser
from .user import ModelUser

__all__ = [
    "FunctionCallingAgent",
    "HttpAgent",
    "ModelJudge",
    "ModelUser",
    "TextActionAgent",
    "VoiceUser",
    "register_agents",
    "register_judges",
    "register_user_simulators",
]


@hookimpl
def register_agents(register: Callable[[Agent], None]) -> None:
    """The function-calling, ReAct and Act agents, and the HTTP agent adapter."""
    register(FunctionCallingAgent())
    register(
        TextActionAgent(
            name="llm-react", thought=True, description="ReAct agent: tools described in the prompt, a Thought then a JSON Action each turn."
        )
    )
    register(
        TextActionAgent(
            name="llm-act", thought=False, description="Act agent: tools described in the prompt, one JSON Action each turn (no Thought)."
        )
    )
    register(HttpAgent())


@hookimpl
def register_user_simulators(register: Callable[[UserSimulator], None]) -> None:
    """The model-played customer, in text and on a full-duplex line."""
    register(ModelUser())
    register(VoiceUser())


@hookimpl
def register_judges(register: Callable[[Judge], None]) -> None:
    """The model judge for natural-language assertions."""
    register(ModelJudge())
