"""A scripted, in-process model backend for tests: answers come from Python callables, no network.

    model = ScriptedModel(scripts={"agent-m": lambda request: ChatResponse(content="Hello")})
    plugins = get_plugin_manager(["mock", "llm"], extra=[("scripted-model", ScriptedModelPlugin(model))])
    run(RunConfig(..., models={"agent": ModelConfig(backend="scripted", model="agent-m")}), path, plugins=plugins)

Each script gets the ChatRequest and returns a ChatResponse (or raises a ModelError). Every
request is kept in `model.requests[model_name]`, so tests can check what participants sent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from bench_kernel import ChatRequest, ChatResponse, ConfigError, Model, ModelClient, ModelConfig, ToolCall, hookimpl

Script = Callable[[ChatRequest], ChatResponse]


@attrs.define
class ScriptedClient(ModelClient):
    """Answers every request of one model name from its script."""

    script: Script
    requests: list[ChatRequest]

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """The script's answer, after recording the request."""
        self.requests.append(request)
        return self.script(request)


@attrs.define(kw_only=True)
class ScriptedModel(Model):
    """A backend whose "models" are scripts, by model name."""

    name: str = "scripted"
    description: str = "Scripted in-process answers for tests."
    scripts: dict[str, Script] = attrs.field(factory=dict)
    requests: dict[str, list[ChatRequest]] = attrs.field(factory=dict)

    def client(self, config: ModelConfig) -> ModelClient:
        """A client answering from the script named by config.model."""
        if config.model not in self.scripts:
            raise ConfigError(f"no script for model {config.model!r} (scripts: {', '.join(self.scripts)})")
        return ScriptedClient(self.scripts[config.model], self.requests.setdefault(config.model, []))


@attrs.define(eq=False)  # pluggy keeps plugins in sets: they must hash by identity
class ScriptedModelPlugin:
    """A plugin object registering one ScriptedModel: pass it to get_plugin_manager(extra=[(name, plugin)])."""

    model: ScriptedModel

    @hookimpl
    def register_models(self, register: Callable[[Any], None]) -> None:
        """Register the scripted backend."""
        register(self.model)


def tool_reply(name: str, arguments: dict[str, Any] | None = None, call_id: str = "") -> ChatResponse:
    """A model reply that calls one tool."""
    return ChatResponse(
        content=None, tool_calls=[ToolCall(id=call_id, name=name, arguments=arguments or {})], prompt_tokens=100, completion_tokens=10
    )


def text_reply(text: str, reasoning: str | None = None) -> ChatResponse:
    """A model reply with text only."""
    return ChatResponse(content=text, reasoning=reasoning, prompt_tokens=100, completion_tokens=10)


def own_tool_turns(request: ChatRequest) -> int:
    """How many tool-calling turns of its own the caller has in the request's history."""
    return sum(1 for m in request.messages if m["role"] == "assistant" and m.get("tool_calls"))
