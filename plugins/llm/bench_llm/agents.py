"""Model-driven agents: native function calling (llm-fc) and text-formatted ReAct (llm-react) and Act (llm-act).

Each session keeps its own chat history in the OpenAI format and sends all of it every turn.
In the no-user mode the agent works from the task's ticket and ends by calling `done`
(function calling) or by taking the `done` action (text formats).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import attrs

from bench_kernel import (
    Agent,
    AgentSession,
    AssistantMessage,
    ChatResponse,
    ConfigError,
    ConversationSetup,
    Message,
    MessageStyle,
    Mode,
    ModelResponseError,
    Profile,
    ToolCall,
    ToolMessage,
    UserMessage,
)

from .chat import ChatLog, agent_view, chat_log, option, reasoning_data, require_model, speaker, usage_of
from .prompts import RESPOND_ACTION, agent_prompt, done_tool

if TYPE_CHECKING:
    from .replies import Reading


def solo_stop(setup: ConversationSetup, message: AssistantMessage) -> bool:
    """In the no-user mode, a message with the profile's stop token and no tool call ends the conversation."""
    return setup.mode is Mode.NO_USER and not message.tool_calls and setup.profile.solo_stop_token in (message.content or "")


def stop_message(
    setup: ConversationSetup, response: ChatResponse, dropped: Sequence[ToolCall] = (), extra: dict[str, Any] | None = None
) -> AssistantMessage:
    """The message that ends a solo conversation; calls made together with `done` are kept for the reader."""
    extra = {**(extra or {}), **({"dropped_tool_calls": [c.name for c in dropped]} if dropped else {})} or None
    return AssistantMessage(content=setup.profile.solo_stop_token, usage=usage_of(response), raw_data=reasoning_data(response, extra))


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
        response = await self.log.ask(self.tools, self.setup.agent_tool_choice())
        calls = self.log.name_calls(response.tool_calls, "assistant")
        done = done_tool(self.setup.profile)
        if solo and any(c.name == done for c in calls):
            return stop_message(self.setup, response, [c for c in calls if c.name != done])
        message = AssistantMessage(content=response.content, tool_calls=calls or None, usage=usage_of(response), raw_data=reasoning_data(response))
        self.log.remember(speaker("assistant", message.content, message.tool_calls, self.setup.profile.messages), response)
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
    calls_models_itself: bool = False

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A session with our instructions, the policy, and the mode's ticket, plan or `done` tool."""
        require_model(setup.models, "agent", f"agent {self.name!r}")
        if setup.mode is Mode.NO_USER:
            _refuse_clash(setup.agent_tools, done_tool(setup.profile), "to end the work in the no-user mode", self.name)
        return FunctionCallingSession(setup, chat_log(setup, "agent", agent_prompt(setup), agent_view), setup.agent_request_tools())

    async def profile_deviations(self, options: Mapping[str, Any], profile: Profile) -> list[str] | None:
        """Nothing: it sends the profile's prompt, tools array, greeting, tool_choice and sampling (bar kept reasoning)."""
        return keep_reasoning_deviation(options)


def keep_reasoning_deviation(options: Mapping[str, Any]) -> list[str]:
    """What `keep_reasoning` adds to a participant's requests beyond the profile's."""
    return ["keeps the model's reasoning in its history (keep_reasoning)"] if options.get("keep_reasoning") else []


def _refuse_clash(tools: Sequence[dict[str, Any]], name: str, purpose: str, agent: str) -> None:
    if any(t["function"]["name"] == name for t in tools):
        raise ConfigError(f"the domain has a tool named {name!r}, which agent {agent!r} reserves {purpose}")


# --------------------------------------------------------------------------- text formats (ReAct, Act)


ON_PARSE_ERROR = ("respond", "error")
"""What a text agent does with a reply it cannot read: send its text to the customer (tau-bench's way), or end."""


@attrs.frozen(kw_only=True)
class ReplyProblem:
    """A text agent's reply that could not be taken as written: no readable action, or actions that did not run."""

    kind: ClassVar[str] = "llm.reply_problem"
    problem: str
    """"unparsed" (no readable action) or "dropped_actions" (more than one action: only the first ran)."""
    detail: str
    handling: str
    """"sent_to_user", "ended" or "first_action_run"."""
    text: str
    """The whole reply, as the model wrote it."""
    llm_call: int | None = None
    """Which of the conversation's ledgered model calls wrote it (0-based, in the order of llm_calls)."""


def parse_action(text: str) -> tuple[str, dict[str, Any]]:
    """The action a text-format reply takes: its name and arguments; ModelResponseError when there is none."""
    from .replies import read_reply

    reading = read_reply(text)
    if reading.action is None:
        raise ModelResponseError(f"{reading.error}: {text[:300]!r}")
    return reading.action.name, reading.action.arguments


def action_text(name: str, arguments: dict[str, Any]) -> str:
    """One action as the text formats write it."""
    return "Action: " + json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


def text_view(messages: Sequence[Message], style: MessageStyle | None = None) -> list[dict[str, Any]]:
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
    on_parse_error: str = "respond"

    async def respond(self, incoming: Sequence[Message]) -> AssistantMessage:
        """Add what arrived as text, ask the model, and turn its action into a message or a tool call."""
        self.log.take(incoming)
        response = await self.log.ask()
        if response.tool_calls:
            return self._native(response)
        text = response.content or ""
        from .replies import read_reply  # the text formats' reader: llm-fc's runs never import it

        reading = read_reply(text, truncated=response.finish_reason == "length")
        if reading.action is None:
            return self._unreadable(text, reading.error or "no action", response)
        raw = {"text": text, **_reading_notes(reading)}
        if reading.dropped:
            self._report(
                "dropped_actions",
                f"{len(reading.dropped)} more action(s) after the first: " + ", ".join(a.name for a in reading.dropped),
                "first_action_run",
                text,
            )
        return self._act(reading.action.name, reading.action.arguments, reading.kept(), raw, response)

    def is_stop(self, message: AssistantMessage) -> bool:
        """Only a solo agent stops."""
        return solo_stop(self.setup, message)

    def _native(self, response: ChatResponse) -> AssistantMessage:
        """A backend returned native tool calls: the first is the action, as if written in text."""
        first, rest = response.tool_calls[0], response.tool_calls[1:]
        kept = "\n".join([*([response.content] if response.content else []), action_text(first.name, first.arguments)])
        raw: dict[str, Any] = {
            "text": response.content or "",
            "native_tool_calls": [{"name": c.name, "arguments": c.arguments} for c in response.tool_calls],
        }
        if rest:
            raw["dropped_actions"] = [{"name": c.name, "arguments": c.arguments} for c in rest]
            self._report(
                "dropped_actions",
                f"{len(rest)} more native tool call(s) after the first: " + ", ".join(c.name for c in rest),
                "first_action_run",
                json.dumps(raw, ensure_ascii=False),
            )
        return self._act(first.name, dict(first.arguments), kept, raw, response, call_id=first.id)

    def _act(
        self, name: str, arguments: dict[str, Any], kept: str, raw: dict[str, Any], response: ChatResponse, call_id: str = ""
    ) -> AssistantMessage:
        """The message an action makes: a stop, words to the customer or a tool call (remembered as `kept`)."""
        solo = self.setup.mode is Mode.NO_USER
        if name == RESPOND_ACTION and not solo:
            content = arguments.get("content")
            if not isinstance(content, str) or not content.strip():
                return self._unreadable(raw.get("text") or kept, f'the "{RESPOND_ACTION}" action needs a non-empty "content"', response)
        self.log.remember({"role": "assistant", "content": kept}, response)
        if solo and name == done_tool(self.setup.profile):
            return stop_message(self.setup, response, extra=raw)
        usage, data = usage_of(response), reasoning_data(response, raw)
        if name == RESPOND_ACTION and not solo:
            return AssistantMessage(content=arguments["content"], usage=usage, raw_data=data)
        calls = self.log.name_calls([ToolCall(id=call_id, name=name, arguments=arguments)], "assistant")
        return AssistantMessage(tool_calls=calls, usage=usage, raw_data=data)

    def _unreadable(self, text: str, error: str, response: ChatResponse) -> AssistantMessage:
        """No action to run: the text goes to the customer (tau-bench's way), or the conversation ends; stored either way."""
        from .replies import Reading

        said = Reading(text=text).said()
        if self.on_parse_error == "error" or not said:
            self._report("unparsed", error, "ended", text)
            raise ModelResponseError(f"{error} (whole reply in the {ReplyProblem.kind} event): {text[:200]!r}")
        self._report("unparsed", error, "sent_to_user", text)
        self.log.remember({"role": "assistant", "content": text}, response)
        raw = {"text": text, "parse_error": error}
        return AssistantMessage(content=said, usage=usage_of(response), raw_data=reasoning_data(response, raw))

    def _report(self, problem: str, detail: str, handling: str, text: str) -> None:
        ledger = getattr(self.setup.models, "ledger", None)
        call = len(ledger) - 1 if ledger else None
        self.setup.events.emit(ReplyProblem(problem=problem, detail=detail, handling=handling, text=text, llm_call=call), source="llm")


def _reading_notes(reading: Reading) -> dict[str, Any]:
    """What raw_data keeps about how a reply was read, beyond its text."""
    notes: dict[str, Any] = {}
    if reading.dropped:
        notes["dropped_actions"] = [{"name": a.name, "arguments": a.arguments} for a in reading.dropped]
    if reading.drafts:
        notes["draft_actions"] = reading.drafts
    if reading.action is not None and reading.action.repaired:
        notes["repaired"] = True
    return notes


@attrs.define(kw_only=True)
class TextActionAgent(Agent):
    """An agent without native tools: tool descriptions in the prompt, one JSON action per reply."""

    name: str
    description: str = ""
    model_roles: tuple[str, ...] = ("agent",)
    calls_models_itself: bool = False
    thought: bool = True
    """ReAct when True (a Thought line before the Action), Act when False."""

    def start(self, setup: ConversationSetup) -> AgentSession:
        """A session whose system prompt describes the tools and the reply format."""
        require_model(setup.models, "agent", f"agent {self.name!r}")
        tools = [t["function"] for t in setup.agent_tools]
        if setup.mode is Mode.NO_USER:
            _refuse_clash(setup.agent_tools, done_tool(setup.profile), "to end the work in the no-user mode", self.name)
        else:
            _refuse_clash(setup.agent_tools, RESPOND_ACTION, "to talk to the customer", self.name)
        system = agent_prompt(setup, text_tools=tools, thought=self.thought)
        on_parse_error = option(setup, "agent", "on_parse_error", "respond")
        if on_parse_error not in ON_PARSE_ERROR:
            raise ConfigError(f"agent {self.name!r}: on_parse_error must be one of {', '.join(ON_PARSE_ERROR)}, not {on_parse_error!r}")
        return TextActionSession(setup, chat_log(setup, "agent", system, text_view), on_parse_error)

    async def profile_deviations(self, options: Mapping[str, Any], profile: Profile) -> list[str] | None:
        """Its tools are described in its system prompt and answered in text, not sent as the profile's tools array."""
        return ["tools described in its system prompt, actions written as text (no tools array, no tool_choice)", *keep_reasoning_deviation(options)]
