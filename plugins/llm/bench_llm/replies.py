"""Reading the action out of what a text-format model (ReAct, Act) wrote: one tolerant parser for every text agent.

Models write the action in many slightly wrong ways. What this parser accepts, and why:

- a marker line `Action:` in any common markdown dress (`**Action:**`, `### Action:`), the JSON right
  after it, bare or in a ``` fence; with no marker, a reply that is (or fences) the action object;
- a code fence *inside* a JSON string (the JSON is read from where the action starts, never from
  the first fence anywhere);
- raw newlines and tabs inside JSON strings (models write them in long messages);
- missing closing brackets at the end of the action (the outer object is completed; an inner object
  never becomes the action), unless the reply was cut short by the token limit;
- `"arguments"` as an object, a JSON string, `null` or absent (`"parameters"` is read the same way);
- drafts inside `<think>` blocks never run; of the actions outside them the first runs, and any
  further ones are reported as dropped (a model that writes on after its action is usually
  imagining the observation).
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

from .jsontext import DECODER

MARKER = re.compile(r"^[ \t]*(?:#{1,6}[ \t]*)?[*_]{0,2}Action[*_]{0,2}[ \t]*:[*_]{0,2}", re.MULTILINE | re.IGNORECASE)
THINK = re.compile(r"</?think>", re.IGNORECASE)
FENCE_OPEN = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?")
BARE_START = re.compile(r"^[ \t]*(?:```[A-Za-z0-9_-]*[ \t]*\n[ \t]*)?\{", re.MULTILINE)
CLOSERS = {"{": "}", "[": "]"}
MAX_CANDIDATES = 64
"""Places an action may start that are tried at most (each failed try costs a pass over the text)."""


@attrs.frozen(kw_only=True)
class TextAction:
    """One action found in a reply, with where it sits in the text."""

    name: str
    arguments: dict[str, Any]
    start: int
    end: int
    repaired: bool = False
    """True when missing closing brackets were added to read it."""


@attrs.frozen(kw_only=True)
class Reading:
    """What a reply says: the action to run (if any), the actions not run, and what to do without one."""

    text: str
    action: TextAction | None = None
    dropped: tuple[TextAction, ...] = ()
    """Further actions outside think blocks: never run, and cut from the agent's history."""
    drafts: int = 0
    """Actions inside think blocks (never run)."""
    error: str | None = None
    """Why no action could be read (None when one was)."""

    def kept(self) -> str:
        """The reply as the agent's history keeps it: cut after the action that ran when others were dropped."""
        if self.action is None or not self.dropped:
            return self.text
        return self.text[: self.action.end]

    def said(self) -> str:
        """tau-bench's fallback for a reply without an action: the text after the last `Action:` marker, else all of it
        (think blocks left out either way)."""
        visible = _without(self.text, _think_spans(self.text, []))
        markers = list(MARKER.finditer(visible))
        return (visible[markers[-1].end() :] if markers else visible).strip()


def read_reply(text: str, *, truncated: bool = False) -> Reading:
    """Read a text-format reply; `truncated` (the model hit its token limit) forbids completing missing brackets."""
    found, errors = _actions(text, repair=not truncated)
    thinking = _think_spans(text, [(a.start, a.end) for a in found])
    live = [a for a in found if not _inside(a.start, thinking)]
    drafts = len(found) - len(live)
    if not live:
        error = errors[0] if errors else "no action in the reply"
        if drafts:
            error = f"{error} (only drafts inside think blocks)" if errors else "the only actions are drafts inside think blocks"
        return Reading(text=text, drafts=drafts, error=error)
    return Reading(text=text, action=live[0], dropped=tuple(live[1:]), drafts=drafts)


def _actions(text: str, *, repair: bool) -> tuple[list[TextAction], list[str]]:
    """Every action the text holds, in order, and why the other candidates failed."""
    markers = list(MARKER.finditer(text))
    starts = [m.end() for m in markers] if markers else [m.end() - 1 for m in BARE_START.finditer(text)]
    origins = [m.start() for m in markers] if markers else starts
    starts, origins = starts[:MAX_CANDIDATES], origins[: MAX_CANDIDATES + 1]
    found: list[TextAction] = []
    errors: list[str] = []
    for i, start in enumerate(starts):
        if found and start < found[-1].end:
            continue  # a marker inside the previous action's JSON string
        limit = origins[i + 1] if i + 1 < len(origins) else len(text)
        action, error = _decode_action(text, start, limit, origins[i], repair=repair)
        if action is not None:
            found.append(action)
        elif error is not None:
            errors.append(error)
    return found, errors


def _decode_action(text: str, at: int, limit: int, origin: int, *, repair: bool) -> tuple[TextAction | None, str | None]:
    """The action written from `at` (after a marker, or at a bare object) up to at most `limit`."""
    pos = _skip_space(text, at)
    fence = FENCE_OPEN.match(text, pos)
    if fence:
        pos = _skip_space(text, fence.end())
    if not text.startswith("{", pos):
        return None, f"the action is not a JSON object: {text[pos : pos + 60]!r}"
    value, end, repaired = _decode_object(text, pos, limit, repair=repair)
    if value is None:
        return None, "the action is not valid JSON"
    if fence:
        closing = re.compile(r"\s*```").match(text, end)
        end = closing.end() if closing else end
    return _as_action(value, origin, end, repaired)


def _decode_object(text: str, pos: int, limit: int, *, repair: bool) -> tuple[Any, int, bool]:
    try:
        value, end = DECODER.raw_decode(text, pos)
        return value, end, False
    except json.JSONDecodeError:
        pass
    except RecursionError:
        return None, pos, False  # nested deeper than any action
    if not repair:
        return None, pos, False
    segment = text[pos:limit].rstrip()
    segment = segment[:-3].rstrip() if segment.endswith("```") else segment
    last = max(segment.rfind("}"), segment.rfind("]"))
    for candidate in (segment, segment[: last + 1] if last >= 0 else ""):
        completed = _closed(candidate)
        if completed is None:
            continue
        try:
            return DECODER.decode(completed), pos + len(candidate), True
        except (json.JSONDecodeError, RecursionError):
            continue
    return None, pos, False


def _closed(segment: str) -> str | None:
    """The segment with its missing closing brackets added; None when nothing is missing or a string is left open."""
    stack: list[str] = []
    in_string = escaped = False
    for char in segment:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in CLOSERS:
            stack.append(CLOSERS[char])
        elif char in "}]" and (not stack or stack.pop() != char):
            return None
    if in_string or not stack:
        return None
    return segment + "".join(reversed(stack))


def _as_action(value: Any, start: int, end: int, repaired: bool) -> tuple[TextAction | None, str | None]:
    if not isinstance(value, dict) or not isinstance(value.get("name"), str) or not value["name"].strip():
        return None, 'the action needs a "name"'
    raw = value["arguments"] if "arguments" in value else value.get("parameters")
    if isinstance(raw, str):
        try:
            raw = DECODER.decode(raw) if raw.strip() else None
        except json.JSONDecodeError:
            return None, 'the action\'s "arguments" are not JSON'
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return None, 'the action\'s "arguments" must be an object'
    return TextAction(name=value["name"].strip(), arguments=raw, start=start, end=end, repaired=repaired), None


def _think_spans(text: str, actions: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Think blocks: <think>...</think>, a leading block whose opening tag the template ate, an unclosed one to the end."""
    spans: list[tuple[int, int]] = []
    opened: int | None = None
    for tag in THINK.finditer(text):
        if _inside(tag.start(), actions):
            continue  # a tag written inside an action's JSON string is text
        closing = tag.group().startswith("</")
        if not closing and opened is None:
            opened = tag.start()
        elif closing:
            spans.append((opened if opened is not None else (spans[-1][1] if spans else 0), tag.end()))
            opened = None
    if opened is not None:
        spans.append((opened, len(text)))
    return spans


def _inside(position: int, spans: list[tuple[int, int]]) -> bool:
    return any(start <= position < end for start, end in spans)


def _without(text: str, spans: list[tuple[int, int]]) -> str:
    kept, last = [], 0
    for start, end in spans:
        kept.append(text[last:start])
        last = max(last, end)
    return "".join(kept) + text[last:]


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return pos
