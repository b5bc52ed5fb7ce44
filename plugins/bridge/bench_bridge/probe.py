"""The profile check of a framework agent: one probe turn before the run, its first model request read back.

bench cannot see inside a framework, but it sees every request the framework sends to the bridge's endpoint. Before
the run, the factory builds an agent for a made-up conversation (one probe tool, the profile's instructions and
greeting); the framework plays one customer message; the endpoint records its request and answers with text
without calling any model. What the request does not carry of the profile (system prompt, tools array byte for byte,
greeting first in the history, tool_choice, sampling) is what the run header reports as custom.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

import attrs

from bench_kernel import ChatRequest, ChatResponse, Profile

from .context import Factory, FactoryContext
from .endpoint import Endpoint
from .runners import framework_version, opening_state, reset_current_context, runner_for, set_current_context
from .tools import ToolExchange, tool_functions

PROBE_WAIT_S = 60.0
"""How long the probe turn may take (a framework's import and first call included)."""
PROBE_POLICY = "Help customers with their bookings."
PROBE_MESSAGE = "Hello, I need help with booking ABC123."
PROBE_REPLY = "Sure, I can help with that."
PROBE_TOOLS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": "find_booking",
            "description": "Find a booking by its code.",
            "parameters": {
                "$defs": {
                    "Passenger": {
                        "properties": {"name": {"description": "Full name.", "title": "Name", "type": "string"}},
                        "required": ["name"],
                        "title": "Passenger",
                        "type": "object",
                    }
                },
                "properties": {
                    "code": {"description": "The booking code, such as 'ABC123'.", "title": "Code", "type": "string"},
                    "passengers": {"items": {"$ref": "#/$defs/Passenger"}, "title": "Passengers", "type": "array"},
                    "cabin": {"anyOf": [{"enum": ["economy", "business"], "type": "string"}, {"type": "null"}], "default": None, "title": "Cabin"},
                },
                "required": ["code", "passengers"],
                "title": "parameters",
                "type": "object",
            },
        },
    }
]
"""The probe's one tool, shaped as pydantic (and tau2's tools) spell schemas: $defs, $ref, titles, enums, nulls."""


@attrs.define
class ProbeModel:
    """The endpoint's conversation during the probe: keeps each request, answers with text, calls no model."""

    model: str = "probe"
    requests: list[ChatRequest] = attrs.field(factory=list)

    async def complete(self, request: ChatRequest) -> ChatResponse:
        """Record the request; the reply ends the framework's turn."""
        self.requests.append(request)
        return ChatResponse(content=PROBE_REPLY)


@attrs.frozen(kw_only=True)
class Expected:
    """What the profile's own agent (`llm-fc`) sends in the probe's conversation."""

    instructions: str
    tools: list[dict[str, Any]]
    tool_choice: str
    greeting: str
    sampling: Mapping[str, Any]

    @classmethod
    def of(cls, profile: Profile) -> Expected:
        """The probe conversation's expected request under `profile` (default mode)."""
        return cls(
            instructions=profile.render("agent", policy=PROBE_POLICY, domain="probe"),
            tools=PROBE_TOOLS,
            tool_choice="auto",
            greeting=profile.greeting,
            sampling=dict(profile.sampling.get("agent") or {}),
        )


async def framework_deviations(factory: Factory, options: Mapping[str, Any], profile: Profile) -> list[str]:
    """The probe turn's findings, after the one every framework agent has: its own agent loop."""
    expected = Expected.of(profile)
    try:
        framework, requests = await asyncio.wait_for(probe_turn(factory, options, expected), PROBE_WAIT_S)
    except Exception as exc:  # noqa: BLE001 - reported: the run goes on, marked custom with the reason
        return [f"its probe turn failed ({type(exc).__name__}: {exc}), so what it sends is not known"]
    if framework is None:
        return ["a remote agent: what it sends is not checked before the run"]
    return [f"its own agent loop ({framework}), not the profile's agent", *request_deviations(requests, expected)]


async def probe_turn(factory: Factory, options: Mapping[str, Any], expected: Expected) -> tuple[str | None, list[ChatRequest]]:
    """Build the agent for the probe conversation and play one customer message; the framework and its requests."""
    endpoint, model = Endpoint.shared(), ProbeModel()
    exchange = ToolExchange(tool_names=frozenset(t["function"]["name"] for t in expected.tools), wait_s=PROBE_WAIT_S)
    history = [{"role": "assistant", "content": expected.greeting}]
    context = FactoryContext(
        model=model.model,
        base_url=endpoint.base_url,
        api_key=endpoint.register(model),
        tools=tool_functions(expected.tools, exchange),
        tool_schemas=[dict(t) for t in expected.tools],
        instructions=expected.instructions,
        mode="default",
        ticket=None,
        setup=None,
        options=dict(options),
        tool_choice=expected.tool_choice,
        history=history,
        probe=True,
        invoke=exchange.invoke,
    )
    try:
        agent = factory.function(context)
        runner = runner_for(agent)
        if runner.name == "remote":
            return None, []
        token = set_current_context(context)
        try:
            await runner.turn(agent, opening_state(runner, history), PROBE_MESSAGE)
        finally:
            reset_current_context(token)
        return f"{runner.name} {framework_version(runner) or 'unknown'}", model.requests
    finally:
        exchange.cancel()  # the probe's model proposes no call: a tool the framework invokes by itself gets no result
        endpoint.unregister(context.api_key)
        await context.aclose()


def request_deviations(requests: list[ChatRequest], expected: Expected) -> list[str]:
    """How the first request departs from the expected one, each in a few words."""
    if not requests:
        return ["made no model call through the bridge in its probe turn: its requests are its own"]
    request = requests[0]
    found = _prompt(request, expected.instructions) + _tools(request, expected.tools)
    if request.tool_choice != expected.tool_choice and "tool_choice" not in request.sampling:
        found.append(f"tool_choice {request.tool_choice!r} where the profile's agent sends {expected.tool_choice!r}")
    if _first_turn(request) != {"role": "assistant", "content": expected.greeting}:
        found.append("no greeting: its history does not open with the profile's greeting")
    found += [
        f"its own sampling {key}={value!r} (the profile's: {expected.sampling.get(key, 'none')!r})"
        for key, value in request.sampling.items()
        if expected.sampling.get(key) != value
    ]
    if request.seed is not None:
        found.append(f"its own seed ({request.seed}) instead of the conversation's")
    return found


def _prompt(request: ChatRequest, instructions: str) -> list[str]:
    system = [m.get("content") for m in request.messages if m.get("role") in ("system", "developer")]
    if system == [instructions]:
        return []
    if any(isinstance(s, str) and instructions in s for s in system):
        return ["adds its own text to the profile's system prompt"]
    return ["its own system prompt (not the profile's instructions)"]


def _tools(request: ChatRequest, tools: list[dict[str, Any]]) -> list[str]:
    if json.dumps(request.tools) == json.dumps(tools):
        return []
    names = [t.get("function", {}).get("name") for t in request.tools or []]
    if names == [t["function"]["name"] for t in tools]:
        return ["its own tool schemas: the profile's tools respelt by the framework, not its tools array byte for byte"]
    return [f"its own tools ({', '.join(map(str, names)) or 'none'}), not the profile's tools array"]


def _first_turn(request: ChatRequest) -> dict[str, Any] | None:
    """The first message after the system prompt, as role and content."""
    for m in request.messages:
        if m.get("role") not in ("system", "developer"):
            return {"role": m.get("role"), "content": m.get("content")}
    return None
