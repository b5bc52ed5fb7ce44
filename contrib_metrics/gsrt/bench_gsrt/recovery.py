"""How an agent recovers from each goal shift: turns to acknowledgement, to the first relevant tool step, to the outcome.

Turns are message indexes, as AgentChangeBench counts them (tool calls and results are messages
too), measured from the true shift turn: the `GoalShift` event the user simulator emitted when it
moved on, not a judge's guess. A shift is recovered when the agent acknowledged the new goal and did
not hand the customer to a human instead.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from bench_kernel import AssistantMessage, Message, UserMessage

TRANSFER_TOOL = "transfer_to_human_agents"
TRANSFER_PHRASES = (
    "transfer you",
    "transferring you",
    "being transferred",
    "human agent",
    "connect you with a specialist",
    "connecting you to a specialist",
    "get a human",
)
STOPWORDS = frozenset(
    [
        "about",
        "after",
        "again",
        "also",
        "been",
        "before",
        "being",
        "could",
        "does",
        "doing",
        "from",
        "have",
        "having",
        "here",
        "into",
        "just",
        "like",
        "more",
        "most",
        "much",
        "need",
        "only",
        "other",
        "over",
        "please",
        "really",
        "should",
        "some",
        "than",
        "that",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "very",
        "want",
        "what",
        "when",
        "where",
        "which",
        "while",
        "will",
        "with",
        "would",
        "your",
        "yours",
        "you're",
        "okay",
        "thanks",
        "thank",
    ]
)


@attrs.frozen(kw_only=True)
class Shift:
    """One goal shift: when it happened, the goal it moved to, and the tools that goal needs."""

    turn: int
    goal_index: int
    goal: str
    tools: frozenset[str] = frozenset()


@attrs.frozen(kw_only=True)
class Recovery:
    """What the agent did after one shift (turn numbers are message indexes; deltas are from the shift turn)."""

    shift: Shift
    acknowledgment_turn: int | None
    tool_turn: int | None
    outcome_turn: int | None
    transferred: bool

    @property
    def recovered(self) -> bool:
        """Acknowledged, and not handed to a human."""
        return self.acknowledgment_turn is not None and not self.transferred

    def delta(self, turn: int | None) -> int | None:
        """Turns from the shift to `turn`."""
        return None if turn is None else turn - self.shift.turn


def words(text: str) -> set[str]:
    """The content words of a text (four letters or more, not function words)."""
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 4 and w not in STOPWORDS}


def acknowledges(reply: AssistantMessage, shift_text: str, tools: frozenset[str]) -> bool:
    """The deterministic judge: the reply takes up the new goal (a relevant tool, or the goal's own words) and is no transfer."""
    called = {c.name for c in reply.tool_calls or ()}
    if called & tools:
        return True
    text = reply.content or ""
    if not text or is_transfer(reply):
        return False
    mentioned = {t for t in tools if t in text}
    return bool(mentioned) or bool(words(text) & words(shift_text))


def is_transfer(message: AssistantMessage) -> bool:
    """A hand-over to a human: the transfer tool, or words announcing one."""
    if any(c.name == TRANSFER_TOOL for c in message.tool_calls or ()):
        return True
    return any(p in (message.content or "").lower() for p in TRANSFER_PHRASES)


def recover(messages: Sequence[Message], shift: Shift, until: int | None = None) -> Recovery:
    """Follow the conversation from a shift (up to the next shift's turn) and see what the agent did."""
    end = len(messages) if until is None else until
    shift_text = _text_at(messages, shift.turn)
    ack = tool = outcome = None
    transferred = False
    pending = set(shift.tools)
    for index in range(shift.turn + 1, end):
        message = messages[index]
        if isinstance(message, AssistantMessage):
            transferred = transferred or is_transfer(message)
            if ack is None and acknowledges(message, shift_text, shift.tools):
                ack = index
            if tool is None and _relevant_step(message, shift.tools):
                tool = index
        if isinstance(message, AssistantMessage | UserMessage):
            pending -= {c.name for c in message.tool_calls or ()}
        if outcome is None and shift.tools and not pending:
            outcome = index
    if outcome is None and not shift.tools:
        outcome = ack
    return Recovery(shift=shift, acknowledgment_turn=ack, tool_turn=tool, outcome_turn=outcome, transferred=transferred)


def _relevant_step(message: AssistantMessage, tools: frozenset[str]) -> bool:
    """A call of one of the goal's tools, or a request that the customer run one on their side."""
    return bool({c.name for c in message.tool_calls or ()} & tools) or any(t in (message.content or "") for t in tools)


def _text_at(messages: Sequence[Message], index: int) -> str:
    if 0 <= index < len(messages) and isinstance(messages[index], UserMessage):
        return messages[index].content or ""
    return ""
