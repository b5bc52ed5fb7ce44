"""Per-message labels behind MM-tau-p²'s judge-based counters, from rules or from a judge, and how two labelers agree.

Agent messages get `asks_repeat` (asks the customer to say something again), `asks_confirmation` (asks
before acting) and `redundant` (repeats the agent's previous message); customer messages get `restates`
(repeats something said earlier) and `agrees` (accepts what the agent proposed). The rules labeler is
the default; a judge labels the same messages when the run configures the `mmtap-judge` model role, and
`mmtap-judge-2` (or, without it, the rules) is its second opinion for the agreement report.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from bench_kernel import AssistantMessage, ChatRequest, Message, UserMessage, judge_agreement

AGENT_LABELS = ("asks_repeat", "asks_confirmation", "redundant")
USER_LABELS = ("restates", "agrees")
LABELS = AGENT_LABELS + USER_LABELS
Labels = dict[int, dict[str, bool]]
"""Message index -> label -> value (only messages with text are labelled)."""

REPEAT = re.compile(r"\b(repeat|say that again|could not catch|didn't catch|did not catch|once more)\b", re.I)
ASK_CONFIRM = re.compile(r"\b(confirm|shall i|should i|do you want me to|is that correct|is that right|proceed)\b", re.I)
AGREE = re.compile(r"\b(yes|yeah|yep|confirm|confirmed|go ahead|please do|correct|that's right|sure)\b", re.I)
WORD = re.compile(r"[a-z]{4,}")

RUBRIC = """You label the messages of a customer-service conversation that happened by voice.
For every numbered message, decide each label below with true or false.
Agent messages:
- asks_repeat: the agent asks the customer to say, spell or repeat something because it did not get it.
- asks_confirmation: the agent asks the customer to confirm before it performs an action.
- redundant: the message says again what the agent's previous message already said, adding nothing.
Customer messages:
- restates: the customer says again something they already said earlier in the conversation.
- agrees: the customer accepts or confirms what the agent just proposed.
Answer with one JSON object and nothing else: {"labels": [{"index": <message number>, "<label>": true|false, ...}, ...]},
one entry per numbered message, with the agent labels for agent messages and the customer labels for customer messages."""


def labelled(messages: Sequence[Message]) -> list[tuple[int, Message]]:
    """The messages that get labels: agent and customer messages with text."""
    return [(i, m) for i, m in enumerate(messages) if isinstance(m, AssistantMessage | UserMessage) and m.content]


def rules_labels(messages: Sequence[Message]) -> Labels:
    """The deterministic labels: phrase patterns, exact repeats and word overlap (README, "Definitions")."""
    out: Labels = {}
    previous_agent: str | None = None
    seen: list[set[str]] = []
    for index, message in labelled(messages):
        text = message.content or ""
        if isinstance(message, AssistantMessage):
            out[index] = {
                "asks_repeat": bool(REPEAT.search(text)),
                "asks_confirmation": bool(ASK_CONFIRM.search(text)),
                "redundant": text == previous_agent,
            }
            previous_agent = text
        else:
            words = set(WORD.findall(text.lower()))
            restates = bool(words) and any(len(words & earlier) >= 0.6 * len(words) for earlier in seen)
            out[index] = {"restates": restates, "agrees": bool(AGREE.search(text))}
            seen.append(words)
    return out


def judge_request(messages: Sequence[Message], seed: int) -> ChatRequest:
    """The labelling request: the rubric, then the conversation with each message numbered."""
    lines = [f"[{i}] {'agent' if isinstance(m, AssistantMessage) else 'customer'}: {m.content}" for i, m in labelled(messages)]
    return ChatRequest(
        messages=[{"role": "system", "content": RUBRIC}, {"role": "user", "content": "\n".join(lines)}],
        response_format={"type": "json_object"},
        seed=seed,
        sampling={"temperature": 0},
    )


def parse_labels(reply: str | None, messages: Sequence[Message]) -> Labels:
    """A judge's reply as labels; a reply that is not JSON, or leaves a message or label out, is a ValueError."""
    wanted = {i: AGENT_LABELS if isinstance(m, AssistantMessage) else USER_LABELS for i, m in labelled(messages)}
    text = (reply or "").strip()
    start, end = text.find("{"), text.rfind("}")
    try:
        document = json.loads(text[start : end + 1]) if start >= 0 else None
    except json.JSONDecodeError as exc:
        raise ValueError(f"the judge's labels are not JSON ({exc.msg}): {text[:120]!r}") from exc
    entries = document.get("labels") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"the judge's reply has no 'labels' list: {text[:120]!r}")
    out: Labels = {}
    for entry in entries:
        index = _index(entry)
        if index in wanted:
            out[index] = {label: _boolean(entry.get(label), index, label) for label in wanted[index]}
    missing = sorted(set(wanted) - set(out))
    if missing:
        raise ValueError(f"the judge left messages {', '.join(map(str, missing))} without labels")
    return out


def _index(entry: Any) -> int | None:
    value = entry.get("index") if isinstance(entry, dict) else None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _boolean(value: Any, index: int, label: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "false", "no"):
        return value.strip().lower() in ("true", "yes")
    raise ValueError(f"the judge's label {label!r} of message {index} is {value!r}, not true or false")


async def judge_labels(models: Any, role: str, messages: Sequence[Message], conversation_id: str) -> Labels:
    """Labels from a judge model role (one request per conversation, seeded by the conversation and the role)."""
    if not labelled(messages):
        return {}
    seed = int(hashlib.sha256(f"{conversation_id}:{role}".encode()).hexdigest()[:8], 16)
    response = await models.complete(role, judge_request(messages, seed))
    return parse_labels(response.content, messages)


def agreement(first: Labels, second: Labels) -> dict[str, dict[str, int]]:
    """Per label, the 2x2 table of two labelers' verdicts on the messages both labelled: yes_yes, yes_no, no_yes, no_no."""
    table = {label: {"yes_yes": 0, "yes_no": 0, "no_yes": 0, "no_no": 0} for label in LABELS}
    for index in sorted(set(first) & set(second)):
        for label, a in first[index].items():
            if label in second[index]:
                b = second[index][label]
                table[label][("yes" if a else "no") + "_" + ("yes" if b else "no")] += 1
    return table


def kappa(cells: Mapping[str, int]) -> tuple[float | None, float | None]:
    """(observed agreement, Cohen's kappa) of a 2x2 table; kappa is None when chance agreement is 1 (one verdict only)."""
    found = judge_agreement(
        {(True, True): cells["yes_yes"], (True, False): cells["yes_no"], (False, True): cells["no_yes"], (False, False): cells["no_no"]}
    )
    return found.observed, found.kappa
