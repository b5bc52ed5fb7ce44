"""Scripted multi-turn worlds: one model playing both the agent and the customer from a script, for any adapter's tests.

A world answers a chat request the way a model would, reading where the conversation stands from the
request alone (so it serves any number of conversations at once, and cached or replayed runs): the
agent's requests are those that offer `agent_tool`; the step it is at is the number of user messages
and of tool results since the last one. The customer's requests are the others; its line is the number
of its own earlier messages.

    world = plan_change_world()
    with FakeOpenAIServer(world) as server:             # chat completions and /v1/responses, plain or streamed
        ...
    ScriptedModel(scripts={"agent": world.respond})      # or in process, ChatRequest -> ChatResponse

`plan_change_world` plays the mock domain's `upgrade_by_email` task over three customer messages, with
sequential and parallel tool calls (and, in the no-user mode, from the ticket to a final answer or `done`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from bench_kernel.modelhub.api import ChatRequest, ChatResponse
from bench_kernel.schema.messages import ToolCall


@attrs.frozen(kw_only=True)
class AgentStep:
    """One reply of the agent's model: tool calls (several at once are parallel calls), or text."""

    calls: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    text: str | None = None


@attrs.frozen(kw_only=True)
class ScriptedWorld:
    """An agent's and a customer's replies, scripted per customer message."""

    agent_turns: tuple[tuple[AgentStep, ...], ...]
    """For each customer message, the agent's model replies until its answer (tool-call steps, then text)."""
    user_lines: tuple[str, ...]
    """The customer's messages in order; the last usually carries a stop token."""
    solo: tuple[AgentStep, ...] = ()
    """The agent's replies in the no-user mode (requests that offer `done_tool`), from the ticket on."""
    agent_tool: str = "change_plan"
    """A tool only the agent is offered: it tells the agent's requests from the customer's."""
    done_tool: str = "done"
    prompt_tokens: int = 10
    completion_tokens: int = 5

    def __call__(self, body: Mapping[str, Any]) -> dict[str, Any]:
        """The assistant message answering a chat-completions body (a FakeOpenAIServer responder)."""
        names = [t.get("function", t).get("name") for t in body.get("tools") or []]
        messages = list(body.get("messages") or [])
        if self.agent_tool in names:
            return _message(*self._agent_step(messages, solo=self.done_tool in names))
        return {"role": "assistant", "content": self._user_line(messages)}

    def respond(self, request: ChatRequest) -> ChatResponse:
        """The same answer as a ChatResponse (an in-process scripted backend's script)."""
        message = self({"messages": request.messages, "tools": request.tools or []})
        calls = [
            ToolCall(id=c["id"], name=c["function"]["name"], arguments=json.loads(c["function"]["arguments"]))
            for c in message.get("tool_calls") or []
        ]
        return ChatResponse(
            content=message.get("content"),
            tool_calls=calls,
            finish_reason="tool_calls" if calls else "stop",
            prompt_tokens=self.prompt_tokens,
            completion_tokens=self.completion_tokens,
        )

    def _agent_step(self, messages: Sequence[Mapping[str, Any]], *, solo: bool) -> tuple[AgentStep, str]:
        users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
        if solo:
            steps, turn, since = self.solo, 0, 0
        else:
            turn = max(len(users) - 1, 0)
            steps, since = (self.agent_turns[turn] if turn < len(self.agent_turns) else ()), users[-1] if users else 0
        results = sum(1 for m in messages[since:] if m.get("role") == "tool")
        done = 0
        for index, step in enumerate(steps):
            if done >= results:
                return step, f"call_{'solo' if solo else turn}_{index}"
            done += len(step.calls)
        return AgentStep(text="(the script has no more steps here)"), "call_end"

    def _user_line(self, messages: Sequence[Mapping[str, Any]]) -> str:
        said = sum(1 for m in messages if m.get("role") == "assistant")
        return self.user_lines[said] if said < len(self.user_lines) else self.user_lines[-1]


def _message(step: AgentStep, prefix: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": step.text}
    if step.calls:
        message["tool_calls"] = [
            {"id": f"{prefix}_{i}", "type": "function", "function": {"name": name, "arguments": json.dumps(dict(arguments))}}
            for i, (name, arguments) in enumerate(step.calls)
        ]
    return message


EMAIL = "ada.okafor@example.net"


def plan_change_world(*, parallel: bool = True, solo_done: bool = False) -> ScriptedWorld:
    """The mock domain's `upgrade_by_email` over three customer messages; reward 1.0 for an agent that follows it.

    The agent asks for the email, then looks the customer up, reads the account and the plans (at once when
    `parallel`, else one after the other), changes the plan and says so; the customer asks, gives the email and
    stops. In the no-user mode the agent does the same from the ticket and ends with a final answer, or by calling
    `done` when `solo_done`.
    """
    look_up = AgentStep(calls=(("find_customer_by_email", {"email": EMAIL}),))
    account: tuple[str, Mapping[str, Any]] = ("get_customer", {"customer_id": "C-1001"})
    plans: tuple[str, Mapping[str, Any]] = ("list_plans", {})
    reads = (AgentStep(calls=(account, plans)),) if parallel else (AgentStep(calls=(account,)), AgentStep(calls=(plans,)))
    change = AgentStep(calls=(("change_plan", {"customer_id": "C-1001", "plan_id": "fiber-1000"}),))
    end = AgentStep(calls=(("done", {}),)) if solo_done else AgentStep(text=f"Moved {EMAIL} to Fiber 1000.")
    return ScriptedWorld(
        agent_turns=(
            (AgentStep(text="Sure. What is the email address on your account?"),),
            (look_up, *reads, change, AgentStep(text="Done: you are now on Fiber 1000.")),
        ),
        user_lines=("Hi, I'd like faster internet: please move me to the Fiber 1000 plan.", f"It's {EMAIL}.", "Thanks, that's all. ###STOP###"),
        solo=(look_up, *reads, change, end),
    )
