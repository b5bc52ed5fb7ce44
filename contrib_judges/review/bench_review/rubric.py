"""bench-review's rubric: the error categories, what the reviewer is asked, and the strict reading of its reply.

Two modes. `full`: the reviewer labels the agent's errors and the user simulator's errors. `user-only`: it labels only
the user simulator's errors, i.e. whether the simulated customer kept to its scenario. A critical user error makes the
task's verdict unreliable: the conversation did not test what the task meant to test.

The reply is one JSON object (optionally inside one ```json fence, nothing else around it) with exactly the keys the
mode asks for; every finding names a category of its side, the turn of the transcript it happened at, a severity and
a reason. Anything else is a `ReviewReplyError` naming the JSON path, recorded against that conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

MODES = ("full", "user-only")
SEVERITIES = ("minor", "critical")
SIDES = ("agent", "user")

AGENT_CATEGORIES: Mapping[str, str] = {
    "policy_violation": "did what the policy forbids, or skipped a step it requires (checking identity, getting the "
    "customer's explicit yes before a change, a limit or an eligibility rule)",
    "wrong_tool_call": "called the wrong tool, or the right tool with wrong arguments or on the wrong record",
    "missed_action": "left undone an action the customer asked for and the policy allows",
    "unsupported_claim": "told the customer something the tool results and the policy do not support, or contradict "
    "(an invented fact, price, status or rule)",
    "missing_information": "did not tell the customer something they needed (an outcome, an amount, a reason), or asked "
    "again for what the customer had already given",
    "premature_end": "ended or transferred the conversation before the request was handled, or transferred without the policy calling for it",
    "other": "an agent error none of the above describes (say what in the reason)",
}
USER_CATEGORIES: Mapping[str, str] = {
    "off_scenario_request": "asked for something the scenario does not ask for, or dropped or changed its goal when the scenario does not say to",
    "invented_detail": "gave a detail (a name, id, number, date, preference) the scenario does not contain, or one that contradicts it",
    "withheld_detail": "did not give a detail the scenario holds when the agent asked for it",
    "ignored_instruction": "did not follow an instruction of the scenario (what to insist on, what to accept or refuse, how to behave)",
    "early_stop": "ended the conversation before its goal was reached or refused, without the scenario saying to",
    "role_break": "spoke as the agent or the system, revealed its instructions, or answered like an assistant",
    "device_misreport": "performed a device action it was not asked for, or reported a device's state or an action's "
    "result other than what its tools returned",
    "other": "a user-simulator error none of the above describes (say what in the reason)",
}
CATEGORIES: Mapping[str, Mapping[str, str]] = {"agent": AGENT_CATEGORIES, "user": USER_CATEGORIES}
MAX_REASON = 400
MAX_SUMMARY = 600
MAX_TOOL_RESULT = 2000
"""Characters of a tool result shown to the reviewer (the rest is cut, and the cut said)."""

SYSTEM_FULL = """You review a finished conversation between a customer-service agent and a simulated customer, to find
the mistakes each side made. The agent must follow the policy below. The simulated customer must play the scenario
below: ask for what it asks, give only the details it holds, follow its instructions. The automatic check's verdict
and the reference solution are given to help you locate mistakes; judge every turn on the transcript itself.

Report each distinct mistake once, at the numbered turn of the transcript where it happened, with a category of its
side, a severity and a short reason (one sentence, quoting or naming what was wrong). Severity "critical": the
mistake by itself can change whether the task is solved (for the customer: the conversation no longer tests what
the task meant to test). Otherwise "minor". Report nothing you are unsure of; a clean conversation has no errors.

Agent categories:
{agent_categories}

Customer (user simulator) categories:
{user_categories}

Reply with one JSON object and nothing else, exactly in this form:
{{"agent_errors": [{{"category": "<agent category>", "turn": <turn number>, "severity": "minor" or "critical",
"reason": "<one sentence>"}}], "user_errors": [<the same form, customer categories>], "summary": "<one sentence>"}}"""

SYSTEM_USER_ONLY = """You check whether a simulated customer kept to its scenario in a finished conversation with a
customer-service agent. The customer must ask for what the scenario asks, give only the details it holds, follow its
instructions, and neither end early nor step out of its role. You judge the customer only, never the agent.

Report each distinct deviation once, at the numbered turn of the transcript where it happened, with a category, a
severity and a short reason (one sentence, quoting or naming what was wrong). Severity "critical": the deviation
can change whether the task is solved, so the conversation no longer tests what the task meant to test. Otherwise
"minor". Report nothing you are unsure of; a customer that kept to its scenario has no errors.

Customer (user simulator) categories:
{user_categories}

Reply with one JSON object and nothing else, exactly in this form:
{{"user_errors": [{{"category": "<category>", "turn": <turn number>, "severity": "minor" or "critical",
"reason": "<one sentence>"}}], "summary": "<one sentence>"}}"""


class ReviewReplyError(ValueError):
    """The reviewer's reply is not a review in the rubric's form; the message names the JSON path."""


@attrs.frozen(kw_only=True)
class Finding:
    """One mistake the reviewer found."""

    side: str
    category: str
    turn: int
    """The turn index of the transcript message where it happened (the message's stored `turn_idx`)."""
    severity: str
    reason: str


@attrs.frozen(kw_only=True)
class Review:
    """What a reviewer found in one conversation."""

    findings: tuple[Finding, ...]
    summary: str

    @property
    def unreliable(self) -> bool:
        """A critical user-simulator error: the task's verdict on this conversation does not mean what it should."""
        return any(f.side == "user" and f.severity == "critical" for f in self.findings)


@attrs.frozen(kw_only=True)
class Turn:
    """One message of a conversation as the reviewer sees it."""

    turn: int
    role: str
    """assistant, user or tool."""
    content: str | None
    tool_calls: tuple[tuple[str, str], ...] = ()
    """(name, arguments as JSON) of each call the message makes."""
    requestor: str | None = None
    """Whose call a tool message answers: assistant or user."""
    error: bool = False


def categories_text(side: str) -> str:
    """The categories of one side as the prompt lists them."""
    return "\n".join(f"- {name}: {meaning}" for name, meaning in CATEGORIES[side].items())


def system_prompt(mode: str) -> str:
    """The reviewer's instructions for a mode."""
    if mode == "user-only":
        return SYSTEM_USER_ONLY.format(user_categories=categories_text("user"))
    return SYSTEM_FULL.format(agent_categories=categories_text("agent"), user_categories=categories_text("user"))


def transcript(turns: Sequence[Turn]) -> str:
    """The conversation, one numbered line (or block) per message: who spoke, which tools they called, what tools returned."""
    lines = []
    for t in turns:
        who = {"assistant": "agent", "user": "customer"}.get(t.role)
        if who is not None:
            if t.content:
                lines.append(f"[{t.turn}] {who}: {t.content}")
            lines += [f"[{t.turn}] {who} calls {name}({arguments})" for name, arguments in t.tool_calls]
            if not t.content and not t.tool_calls:
                lines.append(f"[{t.turn}] {who}: (empty message)")
        elif t.role == "tool":
            owner = "customer's" if t.requestor == "user" else "agent's"
            text = t.content or ""
            if len(text) > MAX_TOOL_RESULT:
                text = text[:MAX_TOOL_RESULT] + f" ... ({len(text) - MAX_TOOL_RESULT} more characters not shown)"
            lines.append(f"[{t.turn}] result of the {owner} tool call{' (error)' if t.error else ''}: {text}")
    return "\n".join(lines)


def user_prompt(mode: str, *, scenario: str, policy: str | None, reference: str | None, verdict: str | None, turns: Sequence[Turn]) -> str:
    """What the reviewer reads: the scenario (and, in full mode, the policy, the reference and the verdict), then the transcript."""
    parts = [f"# Customer scenario\n{scenario}"]
    if mode == "full":
        parts.insert(0, f"# Policy the agent must follow\n{policy or '(none given)'}")
        parts += [f"# Reference solution\n{reference or '(none)'}", f"# Automatic check\n{verdict or '(not scored)'}"]
    parts.append(f"# Transcript (turn numbers in brackets)\n{transcript(turns)}")
    return "\n\n".join(parts)


def reference_text(actions: Sequence[Mapping[str, Any]], facts: Sequence[str]) -> str:
    """The task's gold actions and facts to communicate, one per line."""
    lines = [f"- {a.get('requestor', 'assistant')} calls {a['name']}({json.dumps(a.get('arguments') or {}, sort_keys=True)})" for a in actions]
    lines += [f"- the agent tells the customer: {fact}" for fact in facts]
    return "\n".join(lines)


FENCED = re.compile(r"\A```(?:json|JSON)?[ \t]*\n(.*)\n```\Z", re.DOTALL)


def parse_review(text: str | None, mode: str, turns: Sequence[int]) -> Review:
    """The reviewer's reply read strictly: one JSON object of the mode's form, every finding valid; else ReviewReplyError."""
    body = (text or "").strip()
    fenced = FENCED.match(body)
    if fenced:
        body = fenced.group(1).strip()
    try:
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        raise ReviewReplyError(f"$: not a JSON object ({exc.msg} at character {exc.pos}): {_quote(text)}") from None
    keys = {"agent_errors", "user_errors", "summary"} if mode == "full" else {"user_errors", "summary"}
    _exact_keys(value, keys, "$")
    summary = value["summary"]
    if not isinstance(summary, str) or len(summary) > MAX_SUMMARY:
        raise ReviewReplyError(f"$.summary: expected a string of at most {MAX_SUMMARY} characters, got {_quote(summary)}")
    findings: list[Finding] = []
    for side in SIDES:
        key = f"{side}_errors"
        if key in keys:
            findings += _findings(value[key], side, f"$.{key}", set(turns))
    return Review(findings=tuple(findings), summary=summary.strip())


def _findings(value: Any, side: str, path: str, turns: set[int]) -> list[Finding]:
    if not isinstance(value, list):
        raise ReviewReplyError(f"{path}: expected a list, got {_quote(value)}")
    return [_finding(item, side, f"{path}[{i}]", turns) for i, item in enumerate(value)]


def _finding(item: Any, side: str, path: str, turns: set[int]) -> Finding:
    _exact_keys(item, {"category", "turn", "severity", "reason"}, path)
    category, turn, severity, reason = item["category"], item["turn"], item["severity"], item["reason"]
    if category not in CATEGORIES[side]:
        raise ReviewReplyError(f"{path}.category: {_quote(category)} is not a category of {side} errors ({', '.join(CATEGORIES[side])})")
    if not isinstance(turn, int) or isinstance(turn, bool) or turn not in turns:
        shown = f"{min(turns)}..{max(turns)}" if turns else "none"
        raise ReviewReplyError(f"{path}.turn: {_quote(turn)} is not a turn of the transcript ({shown})")
    if severity not in SEVERITIES:
        raise ReviewReplyError(f"{path}.severity: {_quote(severity)} is not one of {', '.join(SEVERITIES)}")
    if not isinstance(reason, str) or not reason.strip() or len(reason) > MAX_REASON:
        raise ReviewReplyError(f"{path}.reason: expected a sentence of 1 to {MAX_REASON} characters, got {_quote(reason)}")
    return Finding(side=side, category=category, turn=turn, severity=severity, reason=reason.strip())


def _exact_keys(value: Any, keys: set[str], path: str) -> None:
    if not isinstance(value, dict):
        raise ReviewReplyError(f"{path}: expected an object, got {_quote(value)}")
    missing, extra = sorted(keys - set(value)), sorted(set(value) - keys)
    if missing or extra:
        said = [f"missing {', '.join(missing)}"] * bool(missing) + [f"unexpected {', '.join(extra)}"] * bool(extra)
        raise ReviewReplyError(f"{path}: {'; '.join(said)} (expected exactly {', '.join(sorted(keys))})")


def _quote(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return repr(text[:200] + ("..." if len(text) > 200 else ""))
