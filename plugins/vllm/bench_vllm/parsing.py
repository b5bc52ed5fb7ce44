"""Tool calls and thinking that models write into the text of a reply; pure functions, no HTTP.

Formats read:

- Hermes/Qwen: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`, one block per call
  (whitespace and a ```json fence inside a block are tolerated; a last block may lack its closing tag);
- Mistral: `[TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]`, and the newer
  `[TOOL_CALLS]name[ARGS]{...}` (optionally `name[CALL_ID]id[ARGS]{...}`);
- thinking: `<think>...</think>` blocks, a reply that starts inside a block (only `</think>`),
  and a block never closed (it ends at the first tool call, else at the end of the text).

Tool calls inside thinking are not calls. Arguments may be a JSON object or a JSON string holding
one. A recognised block with broken JSON raises ModelResponseError naming the tool or the block.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import attrs
from bench_openai.parsing import arguments_object, snippet

from bench_kernel import ConfigError, ModelResponseError, ToolCall

TOOL_PARSERS = ("auto", "hermes", "mistral", "none")
"""Values of the `tool_parser` option: which text formats are read."""
REASONING_MODES = ("strip", "keep")
"""Values of the `reasoning` option: thinking removed from the content, or left in it too."""

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
HERMES_OPEN, HERMES_CLOSE = "<tool_call>", "</tool_call>"
MISTRAL_TAG = "[TOOL_CALLS]"

ArgumentParser = Callable[[str, Any], dict[str, Any]]
"""(tool name, raw arguments) -> arguments object; raises ModelResponseError."""

_HERMES_BLOCK = re.compile(re.escape(HERMES_OPEN) + r"(.*?)(?:" + re.escape(HERMES_CLOSE) + r"|\Z)", re.DOTALL)
_FENCE = re.compile(r"\A```[\w-]*[ \t]*\n?(.*?)\n?[ \t]*```\Z", re.DOTALL)
_MISTRAL_NAME = re.compile(r"([^\s\[\]{}\"]+)\s*(?:\[CALL_ID\]\s*[A-Za-z0-9_-]*\s*)?\[ARGS\]\s*")
_NAME_IN_JSON = re.compile(r'"name"\s*:\s*"([^"\\]{1,100})"')
_DECODER = json.JSONDecoder()


@attrs.frozen(kw_only=True)
class ParsedText:
    """A reply's text split into what is said, what is called and what was thought."""

    content: str | None
    tool_calls: list[ToolCall] = attrs.field(factory=list)
    reasoning: str | None = None


@attrs.frozen
class Segment:
    """A stretch of a reply: ordinary text (`thought` None) or a think block (`thought` its inside)."""

    text: str
    """As written, tags included."""
    thought: str | None = None


@attrs.frozen
class TextFormat:
    """A way of writing tool calls into text: the marker that starts one, and its extractor."""

    name: str
    marker: str
    extract: Callable[[str, int, ArgumentParser], tuple[list[str], list[ToolCall]]]


def call_id(index: int, name: str, arguments: dict[str, Any]) -> str:
    """A deterministic id for the index-th call of a reply, e.g. `call_0_3fa9c01b2`."""
    canonical = json.dumps([index, name, arguments], sort_keys=True, ensure_ascii=False, default=str)
    # Nine hex digits at the end: vLLM cuts Mistral tool-call ids to their last nine characters,
    # which Mistral's templates require to be alphanumeric.
    return f"call_{index}_{hashlib.sha256(canonical.encode()).hexdigest()[:9]}"


def parse_text(
    text: str | None,
    *,
    tool_parser: str = "auto",
    reasoning: str = "strip",
    parse_arguments: ArgumentParser = arguments_object,
) -> ParsedText:
    """Split a reply's text into content, tool calls (formats allowed by `tool_parser`) and reasoning."""
    check_modes(tool_parser, reasoning)
    if text is None:
        return ParsedText(content=None)
    formats = _FORMATS[tool_parser]
    segments = split_thinking(text, [f.marker for f in formats])
    pieces: list[str] = []
    calls: list[ToolCall] = []
    thoughts: list[str] = []
    for segment in segments:
        if segment.thought is not None:
            thoughts.append(segment.thought.strip())
            pieces += [segment.text] if reasoning == "keep" else []
            continue
        found_pieces, found = extract_tool_calls(segment.text, formats, parse_arguments, first_index=len(calls))
        pieces += found_pieces
        calls += found
    joined_thoughts = "\n\n".join(t for t in thoughts if t) or None
    if not calls and (not thoughts or reasoning == "keep"):
        return ParsedText(content=text, reasoning=joined_thoughts)
    content = "\n".join(p.strip() for p in pieces if p.strip()) or None
    return ParsedText(content=content, tool_calls=calls, reasoning=joined_thoughts)


def check_modes(tool_parser: str, reasoning: str) -> None:
    """Refuse an unknown `tool_parser` or `reasoning` value with a ConfigError listing the known ones."""
    if tool_parser not in TOOL_PARSERS:
        raise ConfigError(f"option tool_parser must be one of {', '.join(TOOL_PARSERS)}, not {tool_parser!r}")
    if reasoning not in REASONING_MODES:
        raise ConfigError(f"option reasoning must be one of {', '.join(REASONING_MODES)}, not {reasoning!r}")


def split_thinking(text: str, tool_markers: Sequence[str] = ()) -> list[Segment]:
    """The text as ordinary and think segments; an unclosed block ends at the first of `tool_markers`."""
    segments: list[Segment] = []
    rest = text
    close = rest.find(THINK_CLOSE)
    if close != -1 and THINK_OPEN not in rest[:close]:
        # The chat template opened the block in the prompt, so the reply starts inside it.
        segments.append(Segment(rest[: close + len(THINK_CLOSE)], rest[:close]))
        rest = rest[close + len(THINK_CLOSE) :]
    while (start := rest.find(THINK_OPEN)) != -1:
        if start:
            segments.append(Segment(rest[:start]))
        inner = start + len(THINK_OPEN)
        end = rest.find(THINK_CLOSE, inner)
        if end == -1:
            # Never closed: cut off by max_tokens, or the model went on to call a tool from inside it.
            stop = min((i for m in tool_markers if (i := rest.find(m, inner)) != -1), default=len(rest))
            segments.append(Segment(rest[start:stop], rest[inner:stop]))
            rest = rest[stop:]
            break
        segments.append(Segment(rest[start : end + len(THINK_CLOSE)], rest[inner:end]))
        rest = rest[end + len(THINK_CLOSE) :]
    if rest:
        segments.append(Segment(rest))
    return segments


def extract_tool_calls(
    text: str,
    formats: Sequence[TextFormat],
    parse_arguments: ArgumentParser = arguments_object,
    *,
    first_index: int = 0,
) -> tuple[list[str], list[ToolCall]]:
    """The calls written in `text` in the given formats, and the pieces of text around them."""
    pieces, calls = [text], list[ToolCall]()
    for text_format in formats:
        remaining: list[str] = []
        for piece in pieces:
            found_pieces, found = text_format.extract(piece, first_index + len(calls), parse_arguments)
            remaining += found_pieces
            calls += found
        pieces = remaining
    return pieces, calls


# --------------------------------------------------------------------------- Hermes / Qwen


def extract_hermes(text: str, first_index: int, parse_arguments: ArgumentParser) -> tuple[list[str], list[ToolCall]]:
    """Calls in `<tool_call>` blocks, and the text around the blocks."""
    pieces: list[str] = []
    calls: list[ToolCall] = []
    position = 0
    for match in _HERMES_BLOCK.finditer(text):
        pieces.append(text[position : match.start()])
        calls += _hermes_block(match.group(1), first_index + len(calls), parse_arguments)
        position = match.end()
    pieces.append(text[position:])
    return pieces, calls


def _hermes_block(inner: str, index: int, parse_arguments: ArgumentParser) -> list[ToolCall]:
    body = inner.strip()
    fenced = _FENCE.match(body)
    body = fenced.group(1).strip() if fenced else body
    if not body:
        raise ModelResponseError(f"an empty {HERMES_OPEN} block")
    try:
        value = json.loads(body)
    except ValueError as exc:
        raise ModelResponseError(f"{_which(body)} in a {HERMES_OPEN} block is not valid JSON ({exc}): {snippet(body)}") from None
    entries = value if isinstance(value, list) else [value]
    if not entries:
        raise ModelResponseError(f"a {HERMES_OPEN} block holds no call: {snippet(body)}")
    return [_call_from_object(entry, f"{HERMES_OPEN} block", index + n, parse_arguments) for n, entry in enumerate(entries)]


# --------------------------------------------------------------------------- Mistral


def extract_mistral(text: str, first_index: int, parse_arguments: ArgumentParser) -> tuple[list[str], list[ToolCall]]:
    """Calls after each `[TOOL_CALLS]` (a JSON list, or name[ARGS]{...}), and the text around them."""
    pieces: list[str] = []
    calls: list[ToolCall] = []
    position = 0
    while (start := text.find(MISTRAL_TAG, position)) != -1:
        pieces.append(text[position:start])
        found, position = _mistral_calls_at(text, start + len(MISTRAL_TAG), first_index + len(calls), parse_arguments)
        calls += found
    pieces.append(text[position:])
    return pieces, calls


def _mistral_calls_at(text: str, position: int, index: int, parse_arguments: ArgumentParser) -> tuple[list[ToolCall], int]:
    """The calls right after a [TOOL_CALLS] tag and where they end."""
    position = _skip_space(text, position)
    if text[position : position + 1] in ("[", "{"):
        try:
            value, end = _DECODER.raw_decode(text, position)
        except ValueError as exc:
            rest = text[position:]
            raise ModelResponseError(f"{_which(rest)} after {MISTRAL_TAG} is not valid JSON ({exc}): {snippet(rest)}") from None
        entries = value if isinstance(value, list) else [value]
        if not entries:
            raise ModelResponseError(f"{MISTRAL_TAG} is followed by an empty list")
        return [_call_from_object(e, f"{MISTRAL_TAG} list", index + n, parse_arguments) for n, e in enumerate(entries)], end
    match = _MISTRAL_NAME.match(text, position)
    if match is None:
        raise ModelResponseError(f"{MISTRAL_TAG} is followed by neither a JSON list nor name[ARGS]: {snippet(text[position:])}")
    name = match.group(1)
    try:
        raw, end = _DECODER.raw_decode(text, match.end())
    except ValueError as exc:
        rest = text[match.end() :]
        message = f"tool call {name!r}: the arguments after [ARGS] are not valid JSON ({exc}): {snippet(rest)}"
        raise ModelResponseError(message) from None
    arguments = parse_arguments(name, raw)
    return [ToolCall(id=call_id(index, name, arguments), name=name, arguments=arguments)], end


# --------------------------------------------------------------------------- shared


HERMES = TextFormat("hermes", HERMES_OPEN, extract_hermes)
MISTRAL = TextFormat("mistral", MISTRAL_TAG, extract_mistral)
_FORMATS: dict[str, tuple[TextFormat, ...]] = {"auto": (HERMES, MISTRAL), "hermes": (HERMES,), "mistral": (MISTRAL,), "none": ()}


def _call_from_object(entry: Any, where: str, index: int, parse_arguments: ArgumentParser) -> ToolCall:
    """A call from {"name": ..., "arguments": ...} ("parameters" is read when "arguments" is missing)."""
    name = entry.get("name") if isinstance(entry, dict) else None
    if not isinstance(name, str) or not name.strip():
        raise ModelResponseError(f"a call in a {where} has no function name: {snippet(entry)}")
    name = name.strip()
    raw = entry["arguments"] if "arguments" in entry else entry.get("parameters")
    arguments = parse_arguments(name, raw)
    return ToolCall(id=call_id(index, name, arguments), name=name, arguments=arguments)


def _which(broken_json: str) -> str:
    """'tool call NAME' when the name can still be read from broken JSON, else 'a tool call'."""
    match = _NAME_IN_JSON.search(broken_json)
    return f"tool call {match.group(1)!r}" if match else "a tool call"


def _skip_space(text: str, position: int) -> int:
    while position < len(text) and text[position].isspace():
        position += 1
    return position
