"""The model-driven judge (llm-judge): grades a conversation against its natural-language assertions."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from bench_kernel import (
    AssistantMessage,
    ChatRequest,
    Check,
    JudgeRequest,
    JudgeStyle,
    Message,
    ModelResponseError,
    Profile,
    ToolMessage,
    UserMessage,
)

from .chat import require_model
from .jsontext import first_json
from .prompts import judge_prompt

SPEAKERS = {"assistant": "agent", "user": "customer"}


def transcript(messages: Sequence[Message]) -> str:
    """The conversation as one readable text: who spoke, which tools each side called, what the tools returned."""
    lines = []
    for m in messages:
        if isinstance(m, AssistantMessage | UserMessage):
            who = SPEAKERS[m.role]
            if m.has_text():
                lines.append(f"{who}: {m.content}")
            for call in m.tool_calls or []:
                lines.append(f"{who} calls {call.name}({json.dumps(call.arguments, ensure_ascii=False, sort_keys=True)})")
        elif isinstance(m, ToolMessage):
            lines.append(f"tool result for the {SPEAKERS[m.requestor]}{' (error)' if m.error else ''}: {m.content or ''}")
    return "\n".join(lines)


def judge_transcript(profile: Profile, messages: Sequence[Message]) -> str:
    """The conversation as the profile's judge shows it: bench's transcript, or one `judge_line` per message."""
    style = profile.judge
    if style.transcript == "bench":
        return transcript(messages)
    lines = [profile.render("judge_line", role=m.role, content=style.no_content if m.content is None else m.content) for m in messages]
    return style.line_separator.join(lines)


def read_verdicts(text: str | None, assertions: Sequence[str], style: JudgeStyle | None = None) -> list[Check]:
    """One check per assertion from the judge's reply, each verdict found by its assertion's id (docs/judges.md).

    ModelResponseError when the reply is empty or not JSON, has no list of verdicts, or has a verdict without a
    known id, two for one id, none for an assertion, or a `met` that is not true or false.
    """
    style = style or JudgeStyle()
    if not (text or "").strip():
        raise ModelResponseError("the judge's reply is empty")
    try:
        value = first_json(text or "")
    except ValueError:
        raise ModelResponseError(f"the judge's reply is not JSON: {(text or '')[:300]!r}") from None
    entries = value.get("verdicts", value.get("results")) if isinstance(value, dict) else value
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ModelResponseError(f"the judge's reply has no list of verdicts: {(text or '')[:300]!r}")
    found = _by_echo(entries, assertions) if style.verdicts == "echo" else _by_index(entries, len(assertions))
    return [_check(assertion, found[i]) for i, assertion in enumerate(assertions)]


def _by_index(entries: list[dict[str, Any]], count: int) -> dict[int, dict[str, Any]]:
    """Verdicts by their statement's number (any order); each must name one, once."""
    found: dict[int, dict[str, Any]] = {}
    for entry in entries:
        index = entry.get("index")
        if isinstance(index, bool) or not isinstance(index, int):
            raise ModelResponseError(f'a verdict names no statement number ("index"): {_short(entry)}')
        if not 1 <= index <= count:
            raise ModelResponseError(f"a verdict names statement {index}, which does not exist (1 to {count})")
        if index - 1 in found:
            raise ModelResponseError(f"two verdicts for statement {index}")
        found[index - 1] = entry
    _complete(found, count)
    return found


ECHO_FIELDS = ("expectedOutcome", "statement", "assertion")
"""Where an echoing verdict repeats its statement's text (tau2's judge: expectedOutcome)."""
QUOTES = re.compile("[\"'`\u2018\u2019\u201c\u201d]")


def normalized(text: str) -> str:
    """A statement as an echo is matched: quotes dropped, whitespace collapsed, case folded, a final full stop dropped."""
    return " ".join(QUOTES.sub("", text).split()).casefold().rstrip(".").rstrip()


def _by_echo(entries: list[dict[str, Any]], assertions: Sequence[str]) -> dict[int, dict[str, Any]]:
    """Verdicts by the statement text they repeat; identical statements take their verdicts in order."""
    slots: dict[str, list[int]] = {}
    for i, assertion in enumerate(assertions):
        slots.setdefault(normalized(assertion), []).append(i)
    found: dict[int, dict[str, Any]] = {}
    for entry in entries:
        echo = next((entry[f] for f in ECHO_FIELDS if isinstance(entry.get(f), str)), None)
        if echo is None:
            raise ModelResponseError(f"a verdict does not repeat its statement ({'/'.join(ECHO_FIELDS)}): {_short(entry)}")
        free = [i for i in slots.get(normalized(echo), []) if i not in found]
        if not free:
            known = normalized(echo) in slots
            raise ModelResponseError(f"{'two verdicts for' if known else 'a verdict for an unknown'} statement {echo[:120]!r}")
        found[free[0]] = entry
    _complete(found, len(assertions))
    return found


def _complete(found: dict[int, dict[str, Any]], count: int) -> None:
    missing = [i + 1 for i in range(count) if i not in found]
    if missing:
        raise ModelResponseError(f"the judge gave no verdict for statement(s) {missing} (of {count})")


def _short(entry: dict[str, Any]) -> str:
    return json.dumps(entry, ensure_ascii=False)[:200]


def _check(assertion: str, entry: dict[str, Any]) -> Check:
    met = entry.get("met", entry.get("metExpectation"))
    if not isinstance(met, bool):
        raise ModelResponseError(f'the judge\'s verdict on {assertion[:120]!r} has no true/false "met" (got {met!r})')
    return Check(subject=assertion, met=met, detail=str(entry.get("reasoning") or ""))


async def judge_assertions(name: str, request: JudgeRequest) -> list[Check]:
    """The checks of llm-judge (registered as `name`): one per assertion, in order, with the model's reasoning as the detail."""
    require_model(request.models, "judge", f"judge {name!r}")
    response = await request.models.complete("judge", judge_request(request))
    return read_verdicts(response.content, request.assertions, request.profile.judge)


def judge_request(request: JudgeRequest) -> ChatRequest:
    """The chat request of one judgment, shaped by the profile's judge style (a retry or panel member sends its seed)."""
    profile = request.profile
    style = profile.judge
    return ChatRequest(
        messages=judge_prompt(profile, judge_transcript(profile, request.messages), request.assertions),
        response_format={"type": "json_object"} if style.response_format else None,
        seed=request.seed if style.seed or not request.first else None,
    )
