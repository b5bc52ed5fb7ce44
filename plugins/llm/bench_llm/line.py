"""What the voice user heard on a full-duplex line, and how its model reads it.

The voice user keeps its own record of the call, tick by tick: the agent's chunks as they arrived (text and speech
flag), the chunks it actually said itself (an utterance it stopped mid-way counts only up to where it stopped), its
tool calls and their results. `Line.items` writes the record out in tau2's containment-aware way: each side's speech
runs (a short gap continues a run), a run that lies wholly inside the other side's splits that one where it ends,
notes of long silences first at their tick, tool calls at their tick followed by their results, consecutive lines of
one speaker merged. `chat_messages` gives that with roles flipped (the agent is the model's "user"), `transcript`
as `ROLE: text` lines for the yes/no decisions.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Literal

import attrs
from bench_duplex import Chunk

from bench_kernel import MessageStyle, ToolCall, ToolMessage

from .chat import OPENAI, speaker, tool_result

Kind = Literal["agent", "user", "silence", "tools"]
LABELS = {"agent": "AGENT", "user": "CUSTOMER", "silence": "SYSTEM"}


@attrs.frozen
class Heard:
    """One side's chunk at one tick, as the voice user keeps it."""

    tick: int
    text: str
    speech: bool


@attrs.define
class ToolTurn:
    """The user's tool calls made at one tick, and their results as they arrive."""

    tick: int
    calls: tuple[ToolCall, ...]
    results: list[ToolMessage] = attrs.field(factory=list)


@attrs.frozen
class Item:
    """One line of the call written out: a side's words, a silence note, or the user's tool calls and results."""

    kind: Kind
    text: str = ""
    tools: ToolTurn | None = None


@attrs.define
class Line:
    """The call so far, as heard by the user (ticks are the user's: the agent's chunk heard at tick t is noted at t)."""

    tick_s: float
    integration_ticks: int
    """A gap of at most this many ticks continues a speech run."""
    silence_ticks: int
    """Silence of at least this many ticks gets a note."""
    agent: list[Heard] = attrs.field(factory=list)
    user: list[Heard] = attrs.field(factory=list)
    tools: list[ToolTurn] = attrs.field(factory=list)
    now: int = 0

    def hear(self, tick: int, chunk: Chunk) -> None:
        """Note the agent's chunk heard at this tick."""
        self.now = tick
        if chunk.speech or chunk.text:
            self.agent.append(Heard(tick, chunk.text, chunk.speech))

    def said(self, tick: int, chunk: Chunk) -> None:
        """Note the user's own chunk of this tick (a stop token is not speech)."""
        if chunk.tool_calls:
            self.tools.append(ToolTurn(tick, tuple(chunk.tool_calls)))
        if (chunk.speech or chunk.text) and not chunk.stop:
            self.user.append(Heard(tick, chunk.text, chunk.speech))

    def results(self, results: Sequence[ToolMessage]) -> None:
        """File tool results under the call they answer (else under the latest calls)."""
        for result in results:
            turn = next((t for t in reversed(self.tools) if any(c.id == result.id for c in t.calls)), self.tools[-1] if self.tools else None)
            if turn is not None:
                turn.results.append(result)

    def agent_speaking(self) -> bool:
        """True when the chunk heard last carried the agent's speech (it is mid-utterance)."""
        return bool(self.agent) and self.agent[-1].tick == self.now and self.agent[-1].speech

    def items(self, note: Callable[[str], str], incomplete: str) -> list[Item]:
        """The call written out in order; `note(seconds)` words a silence, `incomplete` marks the agent's ongoing speech."""
        runs = {"agent": speech_runs(self.agent, self.integration_ticks), "user": speech_runs(self.user, self.integration_ticks)}
        keyed: list[tuple[tuple[int, int, int], Item]] = []
        for side, other in (("agent", "user"), ("user", "agent")):
            rank = 0 if side == "agent" else 1  # on a tie the other side (the agent) comes first
            for run in runs[side]:
                keyed += [
                    ((piece[0].tick, 0, rank), Item(side, "".join(h.text for h in piece).strip()))  # type: ignore[arg-type]
                    for piece in split_at_contained(run, runs[other])
                ]
        keyed += [((tick, -1, 0), Item("silence", note(f"{ticks * self.tick_s:.1f}"))) for tick, ticks in self.silences()]
        keyed += [((turn.tick, 1, 0), Item("tools", tools=turn)) for turn in self.tools]
        ordered = [item for _, item in sorted(keyed, key=lambda pair: pair[0])]
        if self.agent_speaking():
            ordered = mark_last_agent(ordered, incomplete)
        return merged(ordered)

    def silences(self) -> list[tuple[int, int]]:
        """(tick the note goes at, silent ticks) for every stretch without speech long enough to note."""
        spoken = sorted({h.tick for h in [*self.agent, *self.user] if h.speech})
        found = []
        previous = -1
        for tick in spoken:
            if tick - previous - 1 >= self.silence_ticks:
                found.append((tick, tick - previous - 1))
            previous = tick
        # The silence going on now goes last: up to this tick, whose own chunk the user has not said yet.
        if self.now - previous - 1 >= self.silence_ticks:
            found.append((self.now + 1, self.now - previous - 1))
        return found


def speech_runs(heard: Sequence[Heard], integration_ticks: int) -> list[list[Heard]]:
    """A side's chunks grouped into runs: a gap of at most `integration_ticks` continues one."""
    runs: list[list[Heard]] = []
    for chunk in heard:
        if runs and chunk.tick - runs[-1][-1].tick - 1 <= integration_ticks:
            runs[-1].append(chunk)
        else:
            runs.append([chunk])
    return runs


def split_at_contained(run: list[Heard], others: Sequence[list[Heard]]) -> list[list[Heard]]:
    """The run cut where each of the other side's runs lying wholly inside it ends (so that one is read in between)."""
    start, end = run[0].tick, run[-1].tick
    cuts = sorted({o[-1].tick for o in others if start <= o[0].tick and o[-1].tick < end})
    pieces: list[list[Heard]] = []
    for cut in [*cuts, end]:
        piece = [h for h in run if (not pieces or h.tick > pieces[-1][-1].tick) and h.tick <= cut]
        if piece:
            pieces.append(piece)
    return pieces


def mark_last_agent(items: list[Item], incomplete: str) -> list[Item]:
    """The items with the incomplete-speech marker after the agent's last words."""
    for i in range(len(items) - 1, -1, -1):
        if items[i].kind == "agent":
            return [*items[:i], attrs.evolve(items[i], text=f"{items[i].text} {incomplete}".strip()), *items[i + 1 :]]
    return items


def merged(items: Sequence[Item]) -> list[Item]:
    """Consecutive words of one side as one line; empty lines dropped."""
    out: list[Item] = []
    for item in items:
        if item.kind in ("agent", "user") and not item.text.strip():
            continue
        if out and item.kind == out[-1].kind and item.kind in ("agent", "user"):
            out[-1] = attrs.evolve(out[-1], text=f"{out[-1].text} {item.text}")
        else:
            out.append(item)
    return out


def chat_messages(items: Sequence[Item], style: MessageStyle = OPENAI) -> list[dict[str, Any]]:
    """The call as the user model's chat: its own words as `assistant`, the agent's as `user`, notes as `system`."""
    messages: list[dict[str, Any]] = []
    for item in items:
        if item.tools is not None:
            messages.append(speaker("assistant", None, item.tools.calls, style))
            messages += [tool_result(r, style) for r in item.tools.results]
        else:
            role = {"agent": "user", "user": "assistant", "silence": "system"}[item.kind]
            messages.append({"role": role, "content": item.text})
    return messages


def transcript(items: Sequence[Item], last: int = 100) -> str:
    """The call's last lines as `ROLE: text` (the decision prompts' view)."""
    lines: list[str] = []
    for item in items:
        if item.tools is None:
            lines.append(f"{LABELS[item.kind]}: {item.text}")
            continue
        lines += [f"CUSTOMER: (tool call) {c.name}({json.dumps(c.arguments, sort_keys=True)})" for c in item.tools.calls]
        lines += [f"TOOL RESULT: {r.content or ''}" for r in item.tools.results]
    return "\n".join(lines[-last:])
