"""MM-tau-p²'s counters, decided deterministically from a conversation and its voice-channel log.

MM-tau-p² labels every message with an LLM judge whose rubrics are unreleased. Here each counter has a
rule a reader can check (README, "Definitions"): errors are tool errors and misheard critical fields,
a recovery is the same tool succeeding later or the field heard exactly later, a clarification is
the agent asking the user to repeat, a confirmation is the agent asking before a state-changing call
and the user agreeing, a restatement is a user message that repeats an earlier one. What a message
says (asks to repeat, asks to confirm, agrees, restates, repeats itself) comes from per-message labels:
the rules of `labels.py` by default, a judge's when the run configures one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from bench_kernel import AssistantMessage, Message, ToolMessage, UserMessage

from .labels import Labels, rules_labels


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


def count(messages: Sequence[Message], voice_turns: Sequence[Any], mutating: set[str], labels: Labels | None = None) -> Counts:
    """The counters of one conversation; voice_turns are its user-side voice.turn events (message_index, data)."""
    labels = rules_labels(messages) if labels is None else labels
    repeats = _labelled(labels, "asks_repeat")
    misheard_at = {index for index, turn in voice_turns if turn.get("misheard")}
    heard_later = [(index, turn) for index, turn in voice_turns]
    agent = [(i, m) for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    users = [(i, m) for i, m in enumerate(messages) if isinstance(m, UserMessage) and m.content]
    errors, recovered, turns = _errors(messages, misheard_at, heard_later)
    asked = [i for i, _ in agent if i in repeats]
    useful = [i for i in asked if _last_turn_misheard(voice_turns, i)]
    irreversible, confirmed, critical, critical_ok = _confirmations(messages, mutating, voice_turns, labels)
    return Counts(
        fields_said=sum(int(t.get("fields_said", 0)) for _, t in voice_turns),
        fields_heard=sum(int(t.get("fields_heard", 0)) for _, t in voice_turns),
        agent_messages=len(agent),
        necessary_agent_messages=sum(1 for i, _ in agent if i not in repeats and i not in _labelled(labels, "redundant")),
        user_messages=len(users),
        restatements=len(_labelled(labels, "restates")),
        errors=errors,
        recovered=recovered,
        recovery_turns=turns,
        clarifications_asked=len(asked),
        clarifications_needed=len(misheard_at),
        clarifications_useful=len(useful),
        irreversible=irreversible,
        confirmed=confirmed,
        critical_irreversible=critical,
        critical_confirmed=critical_ok,
        misheard_turns=len(misheard_at),
    )


def _last_turn_misheard(voice_turns: Sequence[Any], before: int) -> bool:
    """Whether the user's last spoken turn before this message had a misheard field (a repeat request was needed)."""
    earlier = [turn for index, turn in voice_turns if index < before]
    return bool(earlier and earlier[-1].get("misheard"))


def _labelled(labels: Labels, label: str) -> set[int]:
    """The indices of the messages that carry a label."""
    return {index for index, values in labels.items() if values.get(label)}


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


def _confirmations(messages: Sequence[Message], mutating: set[str], voice_turns: Sequence[Any], labels: Labels) -> tuple[int, int, int, int]:
    """State-changing agent calls, how many the agent confirmed first (asked, then the user agreed), and the same for
    calls carrying a critical field the user said."""
    said = {str(v) for _, t in voice_turns for v in _said_values(t)}
    irreversible = confirmed = critical = critical_ok = 0
    asked = agreed = False
    asks, agrees = _labelled(labels, "asks_confirmation"), _labelled(labels, "agrees")
    for index, message in enumerate(messages):
        if isinstance(message, AssistantMessage):
            if index in asks:
                asked, agreed = True, False
            for call in message.tool_calls or ():
                if call.name not in mutating:
                    continue
                ok = asked and agreed
                irreversible, confirmed = irreversible + 1, confirmed + ok
                if any(str(v) in said for v in call.arguments.values()):
                    critical, critical_ok = critical + 1, critical_ok + ok
                asked = agreed = False
        elif isinstance(message, UserMessage) and asked and index in agrees:
            agreed = True
    return irreversible, confirmed, critical, critical_ok


def _said_values(turn: dict[str, Any]) -> list[str]:
    """The critical values the voice channel found in the turn."""
    return [str(v) for v in turn.get("fields") or []]
