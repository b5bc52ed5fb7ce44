"""The instructions this plugin gives its models, written for bench (not taken from any other benchmark)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bench_kernel import Action, ConversationSetup, Mode

DONE_TOOL = "done"
RESPOND_ACTION = "respond"

AGENT_RULES = """\
You are a customer-service agent for the {domain} service, helping one customer in a chat.
- The policy below is binding. Where it is silent, act as a careful and honest support agent would.
- Each turn, do exactly one thing: write one message to the customer, or make tool calls. Never both in the same turn.
- Take facts only from the customer or from your tools. Never make up an identifier, an amount, a rule or a tool result.
- Ask for what you need to know before you act, and do not change anything the customer has not asked for.
- If the request is outside what the policy and your tools allow, say so plainly, or hand over as the policy says."""

SOLO_RULES = """\
You are a customer-service agent for the {domain} service, working alone on the ticket below.
Nobody will read or answer a message: act only through tool calls.
- The policy below is binding. Where it is silent, act as a careful and honest support agent would.
- Take facts only from the ticket or from your tools. Never make up an identifier, an amount or a tool result.
- Do what the ticket asks and nothing more. When it is resolved, or when the policy says not to act, call the `done` tool."""

PLAN_INTRO = """\
These steps are known to resolve this customer's request. Carry them out in this order, still
talking with the customer as usual; steps for the customer are things to ask them to do."""

TEXT_TOOLS_INTRO = """\
You have no direct tool access. The tools you may use are described below as JSON function
specifications; you use one by writing an action, and its result comes back to you in a message
that starts with "Observation:"."""

REACT_FORMAT = """\
Answer every turn in exactly this form, and nothing else:
Thought: <a short reasoning about what to do next>
Action: {{"name": "<tool name>", "arguments": {{<the tool's arguments>}}}}
The action is a single JSON object on one line. Take one action per turn.
{speak}"""

ACT_FORMAT = """\
Answer every turn with exactly one line, and nothing else:
Action: {{"name": "<tool name>", "arguments": {{<the tool's arguments>}}}}
The action is a single JSON object. Take one action per turn.
{speak}"""

SPEAK_TO_USER = f'To write to the customer, use the action "{RESPOND_ACTION}" with {{"content": "<your message>"}}.'
SPEAK_SOLO = f'When the ticket is resolved, or when the policy says not to act, use the action "{DONE_TOOL}" with {{}}.'

USER_RULES = """\
You are playing a customer who has contacted a support agent through a chat. The scenario below
says who you are, why you got in touch and what you know. Stay in that role for the whole
conversation: you are the customer, never the agent.
- Write one short, natural message per turn, the way a person types in a chat.
- Give details only when the agent asks for them or when they are needed to move on. Do not
  recite the whole scenario at once.
- Never make up details the scenario does not give you, such as ids, numbers or addresses. If you
  are asked for something you do not know, say so.
- Follow the scenario's instructions, and let the agent do its own work.
- When everything you came for is done, or the scenario says you are finished, write ###STOP###
  as your whole message.
- If the agent hands you over to a human or another department, write ###TRANSFER###.
- If the agent cannot help with your request, or it is out of the agent's scope, write ###OUT-OF-SCOPE###."""

USER_TOOL_RULES = """\
- You can act on your own devices with the tools you have. Each turn, either call one tool or write
  one message, never both.
- Use a tool only when the agent asks you to, or when the scenario tells you to.
- The agent cannot see your tool calls or their results: tell the agent what happened, truthfully.
  Never invent a result you did not get from a tool.
- Write ###TRANSFER### only after the agent has actually handed you over."""

JUDGE_RULES = """\
You review a finished conversation between a customer-service agent and a customer. The
transcript shows every message, the tool calls each side made and what the tools returned.
You are given numbered statements about how the conversation should have gone. For each
statement, decide from the transcript alone whether it holds. Judge each statement on its own;
a statement the transcript gives no evidence for does not hold.
Reply with a JSON object only, in this form, with one verdict per statement, in order:
{"verdicts": [{"index": 1, "reasoning": "<one or two sentences>", "met": true}, ...]}"""


PERSONA_INTRO = "Who the customer is (adapt how you speak to them; the policy still decides what you may do):"


def tagged(tag: str, body: str) -> str:
    """A block of the prompt between <tag> and </tag>."""
    return f"<{tag}>\n{body.strip()}\n</{tag}>"


def plan_steps(actions: Sequence[Action]) -> str:
    """The gold actions as a numbered plan: agent actions to perform, customer actions to ask for."""
    lines = []
    for i, action in enumerate(actions, start=1):
        arguments = json.dumps(action.arguments, ensure_ascii=False, sort_keys=True)
        if action.requestor == "user":
            lines.append(f"{i}. Ask the customer to run `{action.name}` on their side with arguments {arguments}.")
        else:
            lines.append(f"{i}. Call `{action.name}` with arguments {arguments}.")
    return "\n".join(lines)


def agent_prompt(setup: ConversationSetup, *, text_tools: Sequence[dict[str, Any]] | None = None,
                 thought: bool = True) -> str:
    """The agent's system prompt: our rules, the policy, and the ticket, plan or text tool format its mode needs."""
    solo = setup.mode is Mode.NO_USER
    parts = [tagged("instructions", (SOLO_RULES if solo else AGENT_RULES).format(domain=setup.domain))]
    if text_tools is not None:
        template = REACT_FORMAT if thought else ACT_FORMAT
        body = f"{TEXT_TOOLS_INTRO}\n\n{json.dumps(list(text_tools), indent=2, ensure_ascii=False)}"
        parts += [tagged("tools", body), tagged("format", template.format(speak=SPEAK_SOLO if solo else SPEAK_TO_USER))]
    parts.append(tagged("policy", setup.policy))
    if solo:
        parts.append(tagged("ticket", setup.task.ticket or ""))
    if setup.exposure == "persona" and setup.task.user_scenario.persona:
        parts.append(tagged("customer_persona", f"{PERSONA_INTRO}\n\n{setup.task.user_scenario.persona}"))
    if setup.mode is Mode.ORACLE_PLAN:
        parts.append(tagged("plan", f"{PLAN_INTRO}\n\n{plan_steps(setup.task.gold_actions())}"))
    return "\n\n".join(parts)


def user_prompt(setup: ConversationSetup) -> str:
    """The simulated user's system prompt: our guidelines, tool rules when it has tools, and the scenario."""
    rules = USER_RULES if setup.user_tools is None else f"{USER_RULES}\n{USER_TOOL_RULES}"
    return f"{tagged('guidelines', rules)}\n\n{tagged('scenario', setup.task.user_scenario.render())}"


def judge_prompt(transcript: str, assertions: Sequence[str]) -> list[dict[str, Any]]:
    """The judge's messages: our rules, then the transcript and the numbered statements."""
    statements = "\n".join(f"{i}. {a}" for i, a in enumerate(assertions, start=1))
    question = f"{tagged('transcript', transcript)}\n\n{tagged('statements', statements)}"
    return [{"role": "system", "content": JUDGE_RULES}, {"role": "user", "content": question}]
