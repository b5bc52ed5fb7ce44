"""The pydantic-ai runner: one user message through `Agent.run`, the history being the agent's own messages.

The factory returns a `pydantic_ai.Agent` (or any of its wrappers). Nothing here imports pydantic-ai until a
turn runs.
"""

from __future__ import annotations

import functools
import sys
from importlib import metadata
from typing import Any

_DISTRIBUTIONS = ("pydantic-ai", "pydantic-ai-slim")


class PydanticAIRunner:
    """Runs pydantic-ai agents: the agent keeps its own tool loop, this class feeds it one user message at a time."""

    name = "pydantic-ai"

    def __init__(self) -> None:
        self.distribution = _installed_distribution()

    def matches(self, agent: object) -> bool:
        """True for a pydantic-ai agent (any `AbstractAgent`); decided without importing pydantic-ai."""
        if "pydantic_ai" not in sys.modules:
            return False
        return any(cls.__name__ == "AbstractAgent" and cls.__module__.startswith("pydantic_ai.") for cls in type(agent).__mro__)

    def opening(self, messages: list[dict[str, Any]]) -> list[Any]:
        """The opening as pydantic-ai messages: the agent's words and calls as responses, the rest as requests."""
        from pydantic_ai.messages import (
            ModelRequest,
            ModelResponse,
            TextPart,
            ToolCallPart,
            ToolReturnPart,
            UserPromptPart,
        )

        history: list[Any] = []
        names = {c["id"]: c["function"]["name"] for m in messages for c in m.get("tool_calls") or []}
        for m in messages:
            if m["role"] == "assistant":
                parts: list[Any] = [TextPart(m["content"])] if m.get("content") else []
                parts += [ToolCallPart(c["function"]["name"], c["function"]["arguments"], tool_call_id=c["id"]) for c in m.get("tool_calls") or []]
                history.append(ModelResponse(parts=parts))
            elif m["role"] == "tool":
                history.append(ModelRequest(parts=[ToolReturnPart(names.get(m["tool_call_id"], ""), m["content"], tool_call_id=m["tool_call_id"])]))
            else:
                history.append(ModelRequest(parts=[UserPromptPart(m["content"])]))
        return history

    async def turn(self, agent: object, state: Any, message: str) -> tuple[str, Any]:
        """Run the agent on `message` after the history; returns its output as text and `all_messages()`."""
        run: Any = agent
        result = await run.run(message, message_history=state, capabilities=[_tool_errors_to_model()()])
        return _as_text(result.output), result.all_messages()


def _installed_distribution() -> str:
    """The pydantic-ai distribution present: the full one, else the slim one it is built on."""
    for name in _DISTRIBUTIONS:
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        return name
    return _DISTRIBUTIONS[0]


def _as_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    import pydantic_core

    return pydantic_core.to_json(output).decode()  # a structured output_type, as JSON


@functools.cache
def _tool_errors_to_model() -> type[Any]:
    """A capability class that hands a tool's exception to the model as a failed tool result.

    pydantic-ai ends the run on any exception from a tool but `ModelRetry` and `ToolFailed`; `ToolFailed`
    is the one meant for "this call is done and failed", and it does not spend the tool's retries.
    """
    from pydantic_ai.capabilities import AbstractCapability
    from pydantic_ai.exceptions import ToolFailed

    class ToolErrorsToModel(AbstractCapability[Any]):
        async def on_tool_execute_error(self, ctx: Any, *, call: Any, tool_def: Any, args: Any, error: Exception) -> Any:
            raise ToolFailed(str(error) or type(error).__name__) from error

    return ToolErrorsToModel
