"""MM-tau-p²'s counters, decided deterministically from a conversation and its voice-channel log.

MM-tau-p² labels every message with an LLM judge whose rubrics are unreleased. Here each counter has a
rule a reader can check (README, "Definitions"): errors are tool errors and misheard critical fields,
a recovery is the same tool succeeding later or the field heard exactly later, a clarification is
the agent asking the user to repeat, a confirmation is the agent asking before a state-changing call
and the user agreeing, a restatement is a user message that repeats an earlier one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import AssistantMessage, Message, ToolMessage, UserMessage

REPEAT = re.compile(r"\b(repeat|say that again|could not catch|didn't catch|did not catch|once more)\b", re.I)
ASK_CONFIRM = re.compile(r"\b(confirm|shall i|should i|do you want me to|is that correct|is that right|proceed)\b", re.I)
AGREE = re.compile(r"\b(yes|yeah|yep|confirm|confirmed|go ahead|please do|correct|that's right|sure)\b", re.I)
WORD = re.compile(r"[a-z]{4,}")


@attrs.frozen(kw_only=True)
class Counts:
    """One conversation's counters (summed over conversations for micro averages)."""

    fields_said: int = 0
    fields_heard: int = 0
    agent_messages: int = 0
    necessary_agent_messages: int = 0
    user_messages: int = 0
    restatements: int = 0
    errors: int = 0
    recovered: int = 0
    recovery_turns: int = 0
    clarifications_asked: int = 0
    clarifications_needed: int = 0
    clarifications_useful: int = 0
    irreversible: int = 0
    confirmed: int = 0
    critical_irreversible: int = 0
    critical_confirmed: int = 0
    misheard_turns: int = 0

    def as_dict(self) -> dict[str, int]:
        """JSON-ready."""
        return attrs.asdict(self)


def count(messages: Sequence[Message], voice_turns: Sequence[Any], mutating: set[str]) -> Counts:
    """The counters of one conversation; voice_turns are its user-side voice.turn events (message_index, data)."""
    misheard_at = {index for index, turn in voice_turns if turn.get("misheard")}
    heard_later = [(index, turn) for index, turn in voice_turns]
    agent = [(i, m) for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    users = [(i, m) for i, m in enumerate(messages) if isinstance(m, UserMessage) and m.content]
    errors, recovered, turns = _errors(messages, misheard_at, heard_later)
    asked = [i for i, m in agent if m.content and REPEAT.search(m.content)]
    useful = [i for i in asked if _last_turn_misheard(voice_turns, i)]
    irreversible, confirmed, critical, critical_ok = _confirmations(messages, mutating, voice_turns)
    return Counts(
        fields_said=sum(int(t.get("fields_said", 0)) for _, t in voice_turns),
        fields_heard=sum(int(t.get("fields_heard", 0)) for _, t in voice_turns),
        agent_messages=len(agent),
        necessary_agent_messages=sum(1 for k, (i, m) in enumerate(agent) if not _redundant(m, agent[k - 1][1] if k else None)),
        user_messages=len(users), restatements=_restatements(users),
        errors=errors, recovered=recovered, recovery_turns=turns,
        clarifications_asked=len(asked), clarifications_needed=len(misheard_at), clarifications_useful=len(useful),
        irreversible=irreversible, confirmed=confirmed, critical_irreversible=critical, critical_confirmed=critical_ok,
        misheard_turns=len(misheard_at))


def _last_turn_misheard(voice_turns: Sequence[Any], before: int) -> bool:
    """Whether the user's last spoken turn before this message had a misheard field (a repeat request was needed)."""
    earlier = [turn for index, turn in voice_turns if index < before]
    return bool(earlier and earlier[-1].get("misheard"))


def _redundant(message: AssistantMessage, previous: AssistantMessage | None) -> bool:
    """A request to repeat, or the same text as the agent's previous message."""
    text = message.content or ""
    return bool(text and REPEAT.search(text)) or (previous is not None and bool(text) and text == previous.content)


def _restatements(users: Sequence[tuple[int, UserMessage]]) -> int:
    seen: list[set[str]] = []
    found = 0
    for _, message in users:
        words = set(WORD.findall((message.content or "").lower()))
        if words and any(len(words & earlier) >= 0.6 * len(words) for earlier in seen):
            found += 1
        seen.append(words)
    return found


def _errors(messages: Sequence[Message], misheard_at: set[int], voice_turns: Sequence[Any]) -> tuple[int, int, int]:
    """(errors, recovered, turns to recover): failed tool calls and misheard turns, and what later undid them."""
    calls = {c.id: c.name for m in messages if isinstance(m, AssistantMessage | UserMessage) for c in m.tool_calls or ()}
    results = [(i, calls.get(m.id, ""), m.error) for i, m in enumerate(messages) if isinstance(m, ToolMessage)]
    errors = recovered = turns = 0
    for i, name, error in results:
        if error:
            errors += 1
            later = next((j for j, n, e in results if j > i and n == name and not e), None)
            if later is not None:
                recovered, turns = recovered + 1, turns + (later - i)
    for i in sorted(misheard_at):
        errors += 1
        later = next((j for j, turn in voice_turns if j > i and turn.get("fields_said") and not turn.get("misheard")), None)
        if later is not None:
            recovered, turns = recovered + 1, turns + (later - i)
    return errors, recovered, turns


def _confirmations(messages: Sequence[Message], mutating: set[str], voice_turns: Sequence[Any]) -> tuple[int, int, int, int]:
    """State-changing agent calls, how many the agent confirmed first (asked, then the user agreed), and the same for
    calls carrying a critical field the user said."""
    said = {str(v) for _, t in voice_turns for v in _said_values(t)}
    irreversible = confirmed = critical = critical_ok = 0
    asked = agreed = False
    for message in messages:
        if isinstance(message, AssistantMessage):
            if message.content and ASK_CONFIRM.search(message.content):
                asked, agreed = True, False
            for call in message.tool_calls or ():
                if call.name not in mutating:
                    continue
                ok = asked and agreed
                irreversible, confirmed = irreversible + 1, confirmed + ok
                if any(str(v) in said for v in call.arguments.values()):
                    critical, critical_ok = critical + 1, critical_ok + ok
                asked = agreed = False
        elif isinstance(message, UserMessage) and message.content and asked and AGREE.search(message.content):
            agreed = True
    return irreversible, confirmed, critical, critical_ok


def _said_values(turn: dict[str, Any]) -> list[str]:
    """The critical values the voice channel found in the turn."""
    return [str(v) for v in turn.get("fields") or []]
