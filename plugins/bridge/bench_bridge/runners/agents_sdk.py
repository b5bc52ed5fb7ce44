"""The OpenAI Agents SDK runner (`pip install 'bench-bridge[agents-sdk]'`): `agents.Agent` objects, played by `agents.Runner`."""

from __future__ import annotations

import json
from typing import Any, cast

import attrs

from . import current_context

MAX_TURNS = 100
"""Model calls the SDK may make for one user message (its own default, 10, ends long tool chains early);
the conversation's own limits (--max-steps, --conversation-timeout) still apply."""


@attrs.define
class AgentsSDKRunner:
    """Plays an `agents.Agent`: one `Runner.run` per user message, the SDK's input list as the history."""

    name: str = "openai-agents"
    distribution: str = "openai-agents"
    max_turns: int = MAX_TURNS

    def matches(self, agent: object) -> bool:
        """An instance of `agents.Agent` (or a subclass), recognised by its classes' modules."""
        return any(cls.__name__ == "Agent" and cls.__module__ in ("agents.agent", "agents") for cls in type(agent).__mro__)

    def opening(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The opening as the SDK's input items: messages, function calls and their outputs."""
        items: list[dict[str, Any]] = []
        for m in messages:
            if m["role"] == "tool":
                items.append({"type": "function_call_output", "call_id": m["tool_call_id"], "output": m["content"]})
                continue
            if m.get("content") is not None:
                items.append({"role": m["role"], "content": m["content"]})
            items += [
                {"type": "function_call", "call_id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
                for c in m.get("tool_calls") or []
            ]
        return items

    async def turn(self, agent: object, state: Any, message: str) -> tuple[str, Any]:
        """Run the SDK's loop on the history plus the user's message; the final output and the new input list."""
        from agents import Runner

        items = [*(state or []), {"role": "user", "content": message}]
        result = await Runner.run(cast(Any, agent), items, max_turns=self.max_turns, run_config=self._config())
        return _text(result.final_output), result.to_input_list()

    def _config(self) -> Any:
        """No tracing (it would upload to OpenAI); model names the agent gives as strings resolve to the bridge."""
        from agents import OpenAIProvider, RunConfig

        context = current_context()
        if context is None:
            return RunConfig(tracing_disabled=True)
        return RunConfig(tracing_disabled=True, model_provider=OpenAIProvider(openai_client=context.client))


def _text(output: Any) -> str:
    """The final output as text: strings as they are, structured outputs as JSON."""
    if isinstance(output, str):
        return output
    dump = getattr(output, "model_dump", None)
    return json.dumps(dump() if callable(dump) else output, ensure_ascii=False, default=str)
