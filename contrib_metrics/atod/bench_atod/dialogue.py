"""One finished multi-goal conversation as ATOD's judged metrics see it: utterances, goals, status changes.

It finds what gets judged: memory queries (one per goal status change), proactive agent turns, and
the agent's utterances for quality. Who judges them is `judges.py`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from bench_kernel import AssistantMessage, Message, ToolMessage, UserMessage

from .goals import Goal
from .tracking import NOT_MENTIONED, Change, Lifecycle, is_utterance

STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "been",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "he",
        "her",
        "here",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "just",
        "me",
        "my",
        "no",
        "not",
        "now",
        "of",
        "off",
        "ok",
        "okay",
        "on",
        "one",
        "or",
        "our",
        "out",
        "please",
        "she",
        "so",
        "some",
        "than",
        "thank",
        "thanks",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "to",
        "too",
        "up",
        "us",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "why",
        "will",
        "with",
        "would",
        "yes",
        "you",
        "your",
        "also",
        "about",
        "after",
        "again",
        "all",
        "am",
        "before",
        "being",
        "both",
        "each",
        "few",
        "more",
        "most",
        "other",
        "own",
        "same",
        "should",
        "such",
        "only",
        "over",
        "under",
        "until",
        "want",
        "need",
        "like",
        "get",
        "got",
        "let",
        "lets",
        "make",
        "sure",
        "know",
        "see",
    ]
)
WORD = re.compile(r"[a-z0-9]+")
CONTEXT_UTTERANCES = 8
"""Utterances of context a judge sees before the judged one (ATOD's judges see the last 8)."""


def content_words(text: str) -> set[str]:
    """Words of three characters or more that are not function words (ATOD's overlap test)."""
    return {w for w in WORD.findall(text.lower()) if len(w) >= 3 and w not in STOPWORDS}


def goal_words(goal: Goal) -> set[str]:
    """What names a goal in conversation: its content, core content, intent and slot values."""
    intent = re.sub(r"(?<!^)(?=[A-Z])", " ", goal.intent)
    values = " ".join(str(v) for v in goal.slot_values.values())
    return content_words(" ".join([goal.content, goal.core_content, intent, values]))


@attrs.frozen(kw_only=True)
class Query:
    """A memory query: after a goal changed, does the agent's next utterance reflect its state?"""

    goal: Goal
    status: str
    change_index: int | None
    reply_index: int | None
    """The agent utterance that answers the query (None when the agent never spoke again)."""


@attrs.frozen(kw_only=True)
class ProactiveTurn:
    """An agent utterance that moved an already-tracked goal on without the user asking about it."""

    goal: Goal
    status: str
    index: int
    checked: bool
    """A tool result lies between the user's last utterance and this one (the agent looked)."""


@attrs.frozen(kw_only=True)
class Dialogue:
    """The messages, the task's goals and their lifecycles (from events) of one conversation."""

    messages: Sequence[Message]
    goals: Sequence[Goal]
    changes: Sequence[Change]
    lives: dict[str, Lifecycle]

    def goal(self, goal_id: str) -> Goal:
        """The task's goal with this id (a stand-in for an id the task does not list)."""
        return next((g for g in self.goals if g.id == goal_id), Goal(id=goal_id, domain="", intent="", content=goal_id))

    def agent_utterances(self) -> list[int]:
        """Indexes of the agent's utterances."""
        return [i for i, m in enumerate(self.messages) if isinstance(m, AssistantMessage) and m.has_text()]

    def next_agent_utterance(self, index: int | None) -> int | None:
        """The first agent utterance at or after an index."""
        start = 0 if index is None else index
        return next((i for i in self.agent_utterances() if i >= start), None)

    def last_user_utterance(self, before: int) -> int | None:
        """The user's last utterance before an index."""
        return next((i for i in range(before - 1, -1, -1) if isinstance(self.messages[i], UserMessage) and is_utterance(self.messages[i])), None)

    def text(self, index: int | None) -> str:
        """A message's text ('' for none)."""
        if index is None or not 0 <= index < len(self.messages):
            return ""
        return getattr(self.messages[index], "content", None) or ""

    def queries(self) -> list[Query]:
        """One memory query per (turn, goal) with a status change; the last change of a goal in a turn counts."""
        last: dict[tuple[int, str], Change] = {}
        for change in self.changes:
            if change.status != NOT_MENTIONED:
                last[(change.turn, change.goal_id)] = change
        return [
            Query(goal=self.goal(c.goal_id), status=c.status, change_index=c.message_index, reply_index=self.next_agent_utterance(c.message_index))
            for c in last.values()
        ]

    def proactive_turns(self) -> list[ProactiveTurn]:
        """Agent utterances reporting a change of a goal tracked before, whose words the user's last utterance did not use."""
        found: dict[tuple[int, str], ProactiveTurn] = {}
        for change in self.changes:
            reply = self.next_agent_utterance(change.message_index)
            life = self.lives.get(change.goal_id)
            if reply is None or life is None or life.status_before(change.turn) == NOT_MENTIONED:
                continue
            goal = self.goal(change.goal_id)
            user = self.last_user_utterance(reply)
            if content_words(self.text(user)) & goal_words(goal):
                continue
            start = -1 if user is None else user
            checked = any(isinstance(self.messages[i], ToolMessage) for i in range(start + 1, reply))
            found[(reply, change.goal_id)] = ProactiveTurn(goal=goal, status=change.status, index=reply, checked=checked)
        return list(found.values())

    def context(self, upto: int, size: int = CONTEXT_UTTERANCES) -> list[tuple[str, str]]:
        """The last `size` utterances up to and including an index, as (speaker, text)."""
        said = [
            (("USER" if isinstance(self.messages[i], UserMessage) else "SYSTEM"), self.text(i))
            for i in range(0, min(upto + 1, len(self.messages)))
            if is_utterance(self.messages[i])
        ]
        return said[-size:]

    def state_at(self, index: int) -> dict[str, str]:
        """Every goal's status as of a message index (changes recorded at or before it)."""
        state = {g.id: NOT_MENTIONED for g in self.goals}
        for change in self.changes:
            if change.message_index is not None and change.message_index <= index:
                state[change.goal_id] = change.status
        return state
