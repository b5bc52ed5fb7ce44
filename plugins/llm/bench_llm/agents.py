"""Model-driven agents: native function calling (llm-fc) and text-formatted ReAct (llm-react) and Act (llm-act).

Each session keeps its own chat history in the OpenAI format and sends all of it every turn.
In the no-user mode the agent works from the task's ticket and ends by calling `done`
(function calling) or by taking the `done` action (text formats).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import (
    STOP_TOKENS,
    Agent,
    AgentSession,
    AssistantMessage,
    ChatResponse,
    ConfigError,
    ConversationSetup,
    Message,
    Mode,
    ModelResponseError,
    ToolCall,
    ToolMessage,
    UserMessage,
)

from .chat import ChatLog, agent_view, chat_log, reasoning_data, require_model, speaker, usage_of
from .jsontext import first_json
from .prompts import DONE_TOOL, RESPOND_ACTION, agent_prompt

STOP = STOP_TOKENS[0]
DONE_SCHEMA = {
    "type": "function",
    "function": {
        "name": DONE_TOOL,
        "description": "Call this once the ticket is resolved, or when the policy says not to act. It ends your work.",
        "parameters": {"type": "object", "properties": {}, "required": []},
    },
}


def solo_stop(setup: ConversationSetup, message: AssistantMessage) -> bool:
    """In the no-user mode, a message with the stop token and no tool call ends the conversation."""
    return setup.mode is Mode.NO_USER and not message.tool_calls and STOP in (message.content or "")


def stop_message(response: ChatResponse, dropped: Sequence[ToolCall] = ()) -> AssistantMessage:
    """The message that ends a solo conversation; calls made together with `done` are kept for the reader."""
    extra = {"dropped_tool_calls": [c.name for c in dropped]} if dropped else None
    return AssistantMessage(content=STOP, usage=usage_of(response), raw_data=reasoning_data(response, extra))


@attrs.define
class FunctionCallingSession(AgentSession):
    """An agent that answers with text or native tool calls."""

    setup: ConversationSetup
    log: ChatLog
    tools: list[dict[str, Any]]

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """Add what arrived to the history, ask the model, and turn its reply into a message."""
        self.log.take(incoming)
        solo = self.setup.mode is Mode.NO_USER
        response = await self.log.ask(self.tools, "required" if solo else "auto")
        calls = self.log.name_calls(response.tool_calls, "assistant")
        if solo and any(c.name == DONE_TOOL for c in calls):
            return stop_message(response, [c for c in calls if c.name != DONE_TOOL])
        message = AssistantMessage(content=response.content, tool_calls=calls or None, usage=usage_of(response),
                                   raw_data=reasoning_data(response))
        self.log.remember(speaker("assistant", message.content, message.tool_calls), response)
        return message

    def is_stop(self, message: AssistantMessage) -> bool:
        """Only a solo agent stops."""
        return solo_stop(self.setup, message)


@attrs.define(kw_only=True)
class FunctionCallingAgent(Agent):
    """The agent with native function calling: the policy in its system prompt, the tools as tool schemas."""

    name: str = "llm-fc"
    description: str = "Function-calling agent: the policy as its system prompt, the domain tools as native tools."
    model_roles: tuple[str, ...] = ("agent",)

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A session with our instructions, the policy, and the mode's ticket, plan or `done` tool."""
        require_model(setup.models, "agent", f"agent {self.name!r}")
        tools = list(setup.agent_tools)
        if setup.mode is Mode.NO_USER:
            _refuse_clash(tools, DONE_TOOL, self.name)
            tools.append(DONE_SCHEMA)
        return FunctionCallingSession(setup, chat_log(setup, "agent", agent_prompt(setup), agent_view), tools)


RESERVED_FOR = {DONE_TOOL: "to end the work in the no-user mode", RESPOND_ACTION: "to talk to the customer"}


def _refuse_clash(tools: Sequence[dict[str, Any]], name: str, agent: str) -> None:
    if any(t["function"]["name"] == name for t in tools):
        raise ConfigError(f"the domain has a tool named {name!r}, which agent {agent!r} reserves {RESERVED_FOR[name]}")


# --------------------------------------------------------------------------- text formats (ReAct, Act)


ACTION_LINE = re.compile(r"^[ \t]*\**Action\**[ \t]*:", re.MULTILINE | re.IGNORECASE)


def parse_action(text: str) -> tuple[str, dict[str, Any]]:
    """The action a text-format reply takes: its name and arguments; ModelResponseError when there is none."""
    match = ACTION_LINE.search(text)
    body = text[match.end():] if match else text
    try:
        value = first_json(body, "{")
    except ValueError:
        raise ModelResponseError(f"no action JSON in the reply: {text[:300]!r}") from None
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"].strip():
        raise ModelResponseError(f"the action needs a \"name\": {text[:300]!r}")
    arguments = value.get("arguments", {})
    if isinstance(arguments, str):
        arguments = _json_arguments(arguments, text)
    if not isinstance(arguments, dict):
        raise ModelResponseError(f"the action's \"arguments\" must be an object: {text[:300]!r}")
    return value["name"].strip(), arguments


def _json_arguments(arguments: str, text: str) -> Any:
    try:
        return json.loads(arguments or "{}")
    except json.JSONDecodeError:
        raise ModelResponseError(f"the action's \"arguments\" are not JSON: {text[:300]!r}") from None


def action_text(name: str, arguments: dict[str, Any]) -> str:
    """One action as the text formats write it."""
    return "Action: " + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


def text_view(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as a text-format agent sees it: actions as text, tool results as observations."""
    view = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            actions = [action_text(c.name, c.arguments) for c in m.tool_calls or []]
            if m.has_text() and not actions:
                actions = [action_text(RESPOND_ACTION, {"content": m.content})]
            view.append({"role": "assistant", "content": "\n".join(actions)})
        elif isinstance(m, UserMessage) and m.has_text():
            view.append({"role": "user", "content": m.content or ""})
        elif isinstance(m, ToolMessage) and m.requestor == "assistant":
            view.append({"role": "user", "content": f"Observation: {m.content or ''}"})
    return view


@attrs.define
class TextActionSession(AgentSession):
    """An agent that writes its actions as JSON in text (with a Thought first, for ReAct)."""

    setup: ConversationSetup
    log: ChatLog

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """Add what arrived as text, ask the model, and turn its action into a message or a tool call."""
        self.log.take(incoming)
        response = await self.log.ask()
        text = response.content or ""
        name, arguments = parse_action(text)
        self.log.remember({"role": "assistant", "content": text}, response)
        return self._message(name, arguments, text, response)

    def is_stop(self, message: AssistantMessage) -> bool:
        """Only a solo agent stops."""
        return solo_stop(self.setup, message)

    def _message(self, name: str, arguments: dict[str, Any], text: str, response: ChatResponse) -> AssistantMessage:
        solo = self.setup.mode is Mode.NO_USER
        if solo and name == DONE_TOOL:
            return stop_message(response)
        usage, raw = usage_of(response), reasoning_data(response, {"text": text})
        if name == RESPOND_ACTION and not solo:
            content = arguments.get("content")
            if not isinstance(content, str) or not content.strip():
                raise ModelResponseError(f"the \"{RESPOND_ACTION}\" action needs a non-empty \"content\": {text[:300]!r}")
            return AssistantMessage(content=content, usage=usage, raw_data=raw)
        calls = self.log.name_calls([ToolCall(name=name, arguments=arguments)], "assistant")
        return AssistantMessage(tool_calls=calls, usage=usage, raw_data=raw)


@attrs.define(kw_only=True)
class TextActionAgent(Agent):
    """An agent without native tools: tool descriptions in the prompt, one JSON action per reply."""

    name: str
    description: str = ""
    model_roles: tuple[str, ...] = ("agent",)
    thought: bool = True
    """ReAct when True (a Thought line before the Action), Act when False."""

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A session whose system prompt describes the tools and the reply format."""
        require_model(setup.models, "agent", f"agent {self.name!r}")
        tools = [t["function"] for t in setup.agent_tools]
        reserved = DONE_TOOL if setup.mode is Mode.NO_USER else RESPOND_ACTION
        _refuse_clash(setup.agent_tools, reserved, self.name)
        system = agent_prompt(setup, text_tools=tools, thought=self.thought)
        return TextActionSession(setup, chat_log(setup, "agent", system, text_view))
