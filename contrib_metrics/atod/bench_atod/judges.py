"""Who decides ATOD's judged items: written-down rules by default, a model through the `atod-judge` role when configured.

The rules (README, "The deterministic judge") are checks a reader can redo by hand. The model path
asks in our own words for a small JSON object and reads it tolerantly (the first JSON object in the
reply, numbers or yes/no as values); a reply that still cannot be read raises `JudgeReplyError`,
which the metric records as its error for that conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Protocol

import attrs

from bench_kernel import BenchError, ChatRequest, MetricContext, TerminationReason

from .dialogue import Dialogue, ProactiveTurn, Query, content_words, goal_words
from .goals import DECIDED

ROLE = "atod-judge"
STATUS_CUES: Mapping[str, tuple[str, ...]] = {
    "pending": ("pending", "processing", "in progress", "waiting", "awaiting", "submitted", "not yet confirmed", "being confirmed"),
    "completed": (
        "confirmed",
        "complete",
        "completed",
        "done",
        "booked",
        "reserved",
        "paid",
        "successful",
        "success",
        "all set",
        "scheduled",
        "set up",
        "finished",
        "went through",
        "is here",
        "here is",
        "here are",
        "found",
    ),
    "failed": (
        "failed",
        "unable",
        "could not",
        "couldn't",
        "cannot",
        "can't",
        "unavailable",
        "declined",
        "not possible",
        "was rejected",
        "did not go through",
        "didn't go through",
        "no longer available",
        "sold out",
    ),
}
LONG_REPLY_WORDS = 120


class JudgeReplyError(BenchError):
    """A judge model's reply could not be read as the JSON asked for."""


class Judgement(Protocol):
    """Decides the judged items of one dialogue."""

    async def recalls(self, query: Query) -> bool:
        """The agent's reply after a goal changed reflects that goal's state."""
        ...

    async def proactive(self, turn: ProactiveTurn) -> tuple[bool, bool]:
        """(grounded, beneficial) of a proactive agent turn."""
        ...

    async def turn_quality(self, index: int) -> int:
        """1-5 quality of the agent utterance at an index."""
        ...

    async def dialogue_quality(self) -> int:
        """1-5 coherence of the whole dialogue."""
        ...


def has_cue(text: str, status: str) -> bool:
    """The text uses one of the words that report this status."""
    lowered = text.lower()
    return any(re.search(rf"\b{re.escape(cue)}\b", lowered) for cue in STATUS_CUES.get(status, ()))


@attrs.define(kw_only=True)
class RuleJudge:
    """The deterministic judge: word overlap and status words, as the README writes them down."""

    dialogue: Dialogue
    termination: TerminationReason | None = None

    def mentions(self, index: int | None, query_goal: Any) -> bool:
        """The utterance at an index shares a content word with the goal (content, core content, intent, slot values)."""
        return bool(content_words(self.dialogue.text(index)) & goal_words(query_goal))

    async def recalls(self, query: Query) -> bool:
        """Recalled: the reply names the goal and, for pending / completed / failed, uses a word reporting that status."""
        if query.reply_index is None or not self.mentions(query.reply_index, query.goal):
            return False
        return query.status not in STATUS_CUES or has_cue(self.dialogue.text(query.reply_index), query.status)

    async def proactive(self, turn: ProactiveTurn) -> tuple[bool, bool]:
        """Grounded: the utterance names the goal and reports the recorded status (its status words); beneficial: the goal ends completed."""
        text = self.dialogue.text(turn.index)
        grounded = self.mentions(turn.index, turn.goal) and (turn.status not in STATUS_CUES or has_cue(text, turn.status))
        life = self.dialogue.lives.get(turn.goal.id)
        return grounded, life is not None and life.final_status == "completed"

    async def turn_quality(self, index: int) -> int:
        """1 plus one point each: on topic, not a verbatim repeat, no unbacked outcome claim, not overlong."""
        d = self.dialogue
        text = d.text(index)
        words = content_words(text)
        user = d.last_user_utterance(index)
        open_goals = [d.goal(g) for g, s in d.state_at(index).items() if s in ("open", "pending")]
        on_topic = bool(words & content_words(d.text(user))) or any(words & goal_words(g) for g in open_goals)
        earlier = [i for i in d.agent_utterances() if i < index]
        fresh = not earlier or " ".join(text.lower().split()) != " ".join(d.text(earlier[-1]).lower().split())
        claims = has_cue(text, "completed") or has_cue(text, "failed")
        backed = not claims or self._backed(index)
        concise = len(text.split()) <= LONG_REPLY_WORDS
        return 1 + on_topic + fresh + backed + concise

    def _backed(self, index: int) -> bool:
        """A tool result or a recorded decided status change lies before the utterance."""
        d = self.dialogue
        tool_before = any(getattr(d.messages[i], "role", "") == "tool" for i in range(index))
        decided_before = any(c.status in DECIDED and c.message_index is not None and c.message_index <= index for c in d.changes)
        return tool_before or decided_before

    async def dialogue_quality(self) -> int:
        """1 plus: up to 2 for the share of raised goals the agent named after they were raised, 1 for no verbatim
        repeats, 1 for ending by a stop."""
        d = self.dialogue
        raised = [
            (d.goal(g), next(c.message_index or 0 for c in life.changes if c.status != "not_mentioned"))
            for g, life in d.lives.items()
            if life.first_mentioned_turn is not None
        ]
        addressed = sum(any(self.mentions(i, goal) for i in d.agent_utterances() if i >= start) for goal, start in raised)
        share = addressed / len(raised) if raised else 1.0
        texts = [" ".join(d.text(i).lower().split()) for i in d.agent_utterances()]
        no_repeats = len(set(texts)) == len(texts)
        stopped = self.termination in (None, TerminationReason.USER_STOP, TerminationReason.AGENT_STOP)
        return 1 + int(2 * share + 0.5) + no_repeats + stopped  # half rounds up


SYSTEM_PROMPT = (
    "You grade one conversation between a customer (USER) and a service assistant (SYSTEM) in which the "
    "customer pursues several goals. Answer with one JSON object and nothing else."
)


def _transcript(lines: list[tuple[str, str]]) -> str:
    return "\n".join(f"{speaker}: {text}" for speaker, text in lines)


@attrs.define(kw_only=True)
class ModelJudgement:
    """The judged items asked of the model behind the `atod-judge` role."""

    dialogue: Dialogue
    context: MetricContext

    async def ask(self, question: str, keys: tuple[str, ...]) -> dict[str, int]:
        """One call; the reply's JSON object must give an integer (or yes/no) for every key."""
        request = ChatRequest(
            messages=[{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}],
            sampling={"temperature": 0.0},
            seed=self.context.result.seed,
        )
        reply = await self.context.complete(request, role=ROLE)
        return read_reply(reply.content or "", keys)

    async def recalls(self, query: Query) -> bool:
        """Does the reply after the change show the goal's true current status?"""
        if query.reply_index is None:
            return False
        question = (
            f"Recent conversation:\n{_transcript(self.dialogue.context(query.reply_index))}\n\n"
            f"Goal: {query.goal.content}\nIts true status now: {query.status}\n"
            "Does the SYSTEM's last message show that it knows this goal's current status (it names or clearly "
            'refers to the goal and says nothing that contradicts the status)? Reply {"match": 1} or {"match": 0}.'
        )
        return bool((await self.ask(question, ("match",)))["match"])

    async def proactive(self, turn: ProactiveTurn) -> tuple[bool, bool]:
        """Was the unprompted update backed by what the SYSTEM knew, and did it help the customer?"""
        question = (
            f"Recent conversation:\n{_transcript(self.dialogue.context(turn.index))}\n\n"
            f"In its last message the SYSTEM moved this goal to status {turn.status!r} without being asked: "
            f"{turn.goal.content}\n"
            "grounded: 1 if the update rests on something the SYSTEM actually checked or was told, else 0. "
            "beneficial: 1 if raising it then helped the customer reach their goals, else 0. "
            'Reply {"grounded": 0 or 1, "beneficial": 0 or 1}.'
        )
        found = await self.ask(question, ("grounded", "beneficial"))
        return bool(found["grounded"]), bool(found["beneficial"])

    async def turn_quality(self, index: int) -> int:
        """1-5 for one SYSTEM message in context."""
        question = (
            f"Recent conversation:\n{_transcript(self.dialogue.context(index))}\n\n"
            f"Goal statuses now: {json.dumps(self.dialogue.state_at(index))}\n"
            "Rate the SYSTEM's last message from 1 (irrelevant or wrong) to 5 (relevant, correct and helpful). "
            'Reply {"turn_quality": N}.'
        )
        return _clamped((await self.ask(question, ("turn_quality",)))["turn_quality"])

    async def dialogue_quality(self) -> int:
        """1-5 coherence of the whole conversation."""
        lines = self.dialogue.context(len(self.dialogue.messages), size=len(self.dialogue.messages))
        question = (
            f"Conversation:\n{_transcript(lines)}\n\n"
            "Rate how coherent the whole conversation is, from 1 (disjointed, goals lost) to 5 (every goal "
            'followed through in a sensible order). Reply {"dialogue_quality": N}.'
        )
        return _clamped((await self.ask(question, ("dialogue_quality",)))["dialogue_quality"])


def _clamped(value: int) -> int:
    return min(5, max(1, value))


OBJECT = re.compile(r"\{[^{}]*\}", re.S)
WORDS = {"yes": 1, "true": 1, "no": 0, "false": 0}


def read_reply(text: str, keys: tuple[str, ...]) -> dict[str, int]:
    """The first JSON object in a reply that gives every key a number (or yes/no, true/false, "3")."""
    for match in OBJECT.finditer(text):
        try:
            found = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(found, dict):
            values = {k: _number(found.get(k)) for k in keys}
            if all(v is not None for v in values.values()):
                return {k: int(v) for k, v in values.items() if v is not None}
    raise JudgeReplyError(f"the {ROLE} reply does not give {', '.join(keys)} as a JSON object: {text[:200]!r}")


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, str):
        stripped = value.strip().lower()
        if stripped in WORDS:
            return float(WORDS[stripped])
        try:
            return float(stripped)
        except ValueError:
            return None
    return None


def judgement_for(context: MetricContext, dialogue: Dialogue) -> tuple[Judgement, str]:
    """The model judgement when the run configured the atod-judge role, else the rules; with the judge's name."""
    models = context.models
    if models is not None and models.has(ROLE):
        return ModelJudgement(dialogue=dialogue, context=context), f"model:{models.config(ROLE).model}"
    return RuleJudge(dialogue=dialogue, termination=context.result.termination_reason), "rules"
