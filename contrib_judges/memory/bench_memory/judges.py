"""The memory evaluator's decision steps behind one interface: a deterministic rules judge and a model judge.

Each step is a method: `extract` (candidate goals of a turn), `same_goal` (does a candidate restate a
stored goal), `relation` (link / dependency / none between a new goal and a stored one) and `audit`
(has an unfinished goal's status changed this turn). The model judge asks a chat role for JSON and
refuses replies it cannot read with a `MemoryJudgeError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from bench_kernel import BenchError, ChatRequest, ChatResponse

from . import catalogue as cat
from .store import StoredGoal
from .turns import ToolResult, Turn

STATUSES = ("open", "pending", "completed", "failed", "abandoned")
RELATIONS = ("link", "dependency", "none")
_DEPENDENCY_CUE = re.compile(r"\b(after|once|as soon as|when|then|for (the|my|that|this))\b", re.I)
_GENERIC = re.compile(r"\b(booking|reservation|request|order|it|everything)\b", re.I)


class MemoryJudgeError(BenchError):
    """A model judge's reply that cannot be read (not JSON, or not the shape asked for)."""


@attrs.frozen(kw_only=True)
class Candidate:
    """A goal as a turn mentions it; `status` None means the turn says nothing of its progress."""

    domain: str
    intent: str
    content: str
    core_content: str
    slots: dict[str, str] = attrs.field(factory=dict)
    status: str | None = None
    speaker: str = "user"
    """Who mentioned it: user, system or tool."""


@attrs.define
class MemoryJudge:
    """The interface; counters say how many model calls and tokens the judge spent."""

    name: str = "judge"
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    async def extract(self, turn: Turn) -> list[Candidate]:
        """The goals a turn mentions."""
        raise NotImplementedError

    async def same_goal(self, candidate: Candidate, goal: StoredGoal, turn: Turn) -> bool:
        """True when the candidate is the stored goal again."""
        raise NotImplementedError

    async def relation(self, candidate: Candidate, goal: StoredGoal, turn: Turn) -> str:
        """link, dependency (the candidate waits for the goal) or none."""
        raise NotImplementedError

    async def audit(self, goal: StoredGoal, turn: Turn, goals: Sequence[StoredGoal]) -> str | None:
        """The goal's new status if this turn changed it, else None."""
        raise NotImplementedError


# --------------------------------------------------------------------------- rules


@attrs.define
class RulesJudge(MemoryJudge):
    """Deterministic: families by keyword, slots by pattern, statuses by cue words and by what tool calls returned."""

    name: str = "rules"
    seen: ToolMemory = attrs.field(factory=lambda: ToolMemory())

    async def extract(self, turn: Turn) -> list[Candidate]:
        """User requests and abandonments, system news, and what the turn's tool calls did."""
        return rules_extract(turn, self.seen)

    async def same_goal(self, candidate: Candidate, goal: StoredGoal, turn: Turn) -> bool:
        """Same canonical intent and no slot given two different values."""
        return candidate.intent == goal.intent and not any(goal.slots.get(k) not in (None, v) for k, v in candidate.slots.items())

    async def relation(self, candidate: Candidate, goal: StoredGoal, turn: Turn) -> str:
        """A prerequisite (a booking's search, a payment's booking, a transfer's balance check) or a cue naming the goal: dependency."""
        family = cat.INTENT_FAMILY.get(goal.intent)
        if family is None:
            return "none"
        if cat.prerequisite(candidate.intent, candidate.slots, goal.intent, goal.slots):
            return "dependency"
        named = any(f.name == family.name for _, f in cat.families_in(candidate.content)) or candidate.slots.get("for") == family.name
        own = cat.INTENT_FAMILY.get(candidate.intent)
        waits = (
            named and own is not family and _DEPENDENCY_CUE.search(candidate.content) and (goal.intent == family.book or family.book == family.search)
        )
        if waits:
            return "dependency"
        return "link" if candidate.domain == goal.domain or named else "none"

    async def audit(self, goal: StoredGoal, turn: Turn, goals: Sequence[StoredGoal]) -> str | None:
        """The status the reply gives the goal where it names it or says 'it' right after, else if it is the one goal in question."""
        found, last = None, None
        for sentence in cat.clauses(turn.system):
            for part in cat.parts(sentence):
                if cat.families_in(part):
                    refers = _names(goal, part, goals)
                    last = part
                elif _GENERIC.search(part):
                    refers = _sole_goal_in_question(goal, goals, turn) if last is None else _names(goal, last, goals)
                else:
                    refers = False
                if refers:
                    found = cat.system_status(part, goal.intent) or found
        return found if found != goal.status else None


def _names(goal: StoredGoal, text: str, goals: Sequence[StoredGoal]) -> bool:
    """The text names the goal: its family, and its distinguishing value when another goal of the family is stored."""
    family = cat.INTENT_FAMILY.get(goal.intent)
    if family is None or family.name not in {f.name for _, f in cat.families_in(text)}:
        return False
    key = goal.slots.get(family.key_slot)
    alone = sum(1 for g in goals if cat.INTENT_FAMILY.get(g.intent) is family) == 1
    return alone or key is None or key in text.lower()


def rules_extract(turn: Turn, seen: ToolMemory | None = None) -> list[Candidate]:
    """The rules judge's candidates of a turn (synchronous: a scripted model may answer with it)."""
    out = [_candidate(f, piece, "user", cat.user_status(piece)) for s in cat.clauses(turn.user) for f, piece in cat.segments(s)]
    for sentence in cat.clauses(turn.system):
        for family, piece in cat.segments(sentence):
            out.append(_candidate(family, piece, "system", cat.system_status(piece, cat.intent_of(family, piece))))
    memory = seen if seen is not None else ToolMemory()
    for tool in turn.tools:
        out += tool_candidates(tool, memory)
    return out


def _sole_goal_in_question(goal: StoredGoal, goals: Sequence[StoredGoal], turn: Turn) -> bool:
    """Generic words ('your reservation') point at the one pending goal, else at the one open goal mentioned this turn."""
    pending = [g for g in goals if g.status == "pending"]
    if pending:
        return len(pending) == 1 and pending[0].id == goal.id
    recent = [g for g in goals if g.status == "open" and g.last_turn == turn.number]
    return len(recent) == 1 and recent[0].id == goal.id


def _candidate(family: cat.Family, piece: str, speaker: str, status: str | None) -> Candidate:
    intent = cat.intent_of(family, piece)
    slots = cat.slots_in(piece, family)
    return Candidate(
        domain=family.domain, intent=intent, content=piece, core_content=cat.core_content(intent, slots), slots=slots, status=status, speaker=speaker
    )


_ARGUMENT_SLOTS = (
    ("place", re.compile(r"^(city|location|destination|place|venue)$")),
    ("date", re.compile(r"^date$")),
    ("name", re.compile(r"^(restaurant|hotel|restaurant_name|hotel_name|event_name|name)$")),
    ("time", re.compile(r"^time$")),
    ("item", re.compile(r"^item_id$")),
    ("account", re.compile(r"^(account_id|from_account)$")),
    ("amount", re.compile(r"^amount$")),
)
_REFUSED = re.compile(r"^\W*(error|fail|invalid|not found|unknown|refused|cannot|denied)", re.I)
_SEARCHING = re.compile(r"^(search|find|list|get|check)(?!.*(book|status|reservation))", re.I)


@attrs.define
class ToolMemory:
    """What earlier tool results of the conversation said about items and bookings (offers listed, bookings made)."""

    items: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    bookings: dict[str, str] = attrs.field(factory=dict)
    """booking id -> item id."""

    def learn(self, record: dict[str, Any]) -> None:
        """Remember an offer (item id with its service, city, date, name) or a booking (booking id -> item id)."""
        item = record.get("item_id")
        if not isinstance(item, str):
            return
        known = self.items.setdefault(item, {})
        for key in ("service", "city", "date", "name"):
            if record.get(key) and key not in known and not (key == "name" and "booking_id" in record):
                known[key] = record[key]
        if isinstance(record.get("booking_id"), str):
            self.bookings[record["booking_id"]] = item

    def item_of(self, record: dict[str, Any]) -> dict[str, Any]:
        """The offer a call or result concerns, with what is known of it."""
        item = record.get("item_id") or self.bookings.get(str(record.get("booking_id", "")))
        return {"item_id": item, **self.items.get(str(item), {})} if item else {}


def _records(content: str) -> list[dict[str, Any]]:
    try:
        value = json.loads(content)
    except (TypeError, ValueError):
        return []
    values = value if isinstance(value, list) else [value]
    return [v for v in values if isinstance(v, dict)]


def tool_candidates(tool: ToolResult, seen: ToolMemory) -> list[Candidate]:
    """What one tool call did: the goal it served (family from the tool's name, else the service it concerns) and its status.

    A result's `status` field gives the status (a listing of bookings gives one per booking); any other result of a call
    that did not fail completes what it was asked (a search answered, a balance read, a payment made, a record added).
    """
    records = _records(tool.content)
    for record in records:
        seen.learn(record)
    if tool.error:
        return []
    statused = [r for r in records if "status" in r]
    if statused and isinstance(_safe_json(tool.content), list):  # a listing: one status per entry
        return [c for r in statused for c in _tool_candidate(tool.name, {**tool.arguments, **r}, json.dumps(r), seen)]
    return _tool_candidate(tool.name, tool.arguments, tool.content, seen)


def _safe_json(content: str) -> Any:
    try:
        return json.loads(content)
    except (TypeError, ValueError):
        return None


def _tool_candidate(name: str, arguments: dict[str, Any], content: str, seen: ToolMemory) -> list[Candidate]:
    records = _records(content)
    result = records[0] if records and not isinstance(_safe_json(content), list) else {}
    item = seen.item_of({**arguments, **result})
    service = str(arguments.get("service") or result.get("service") or item.get("service") or "")
    words = name.replace("_", " ")
    named = cat.families_in(words) or cat.families_in(service)
    status = cat.tool_status(content)
    if status is None and "status" not in result and not _REFUSED.search(content[:120]):
        status = "completed"
    if not named or status is None:
        return []
    family = named[0][1]
    intent = family.search if _SEARCHING.search(name) and family.search != family.book else family.book
    slots = _tool_slots({**{k: v for k, v in item.items() if k in ("city", "date")}, **arguments, **{"item_id": item.get("item_id")}})
    if item.get("name"):
        slots["name"] = str(item["name"]).strip().lower()
    served = cat.families_in(service) if family.name == "payment" else []
    if served:
        slots["for"] = served[0][1].name
    return [
        Candidate(
            domain=family.domain,
            intent=intent,
            content=f"{name}({json.dumps(arguments, sort_keys=True)})",
            core_content=cat.core_content(intent, slots),
            slots=slots,
            status=status,
            speaker="tool",
        )
    ]


def _tool_slots(arguments: dict[str, Any]) -> dict[str, str]:
    """A call's arguments under the slot names the user's words get (city -> place, item_id -> item, ...)."""
    slots: dict[str, str] = {}
    for key, value in arguments.items():
        if value is None or isinstance(value, bool) or not isinstance(value, str | int | float):
            continue
        for slot, rx in _ARGUMENT_SLOTS:
            if rx.search(key) and slot not in slots:
                slots[slot] = cat.amount(value) if slot == "amount" else str(value).strip().lower()
    return slots


# --------------------------------------------------------------------------- model


EXTRACT_PROMPT = """You keep a record of what a user wants done over a long conversation with an assistant.
Read one exchange (the user's words, any tool calls with their results, the assistant's reply) and list every task of the user
that the exchange talks about: new requests, changes to earlier ones, and news about their progress.
For each task give:
- "content": one sentence saying what the user wants, with the details given (places, dates, people),
- "core_content": a short label, a verb and an object such as "book hotel", "book flight", "book restaurant", "search restaurant",
  "book ticket", "search events", "search attractions", "check weather", "check account", "transfer money", "make payment", "book ride";
  add the place when it tells two tasks apart ("book hotel paris"),
- "domain": the service area in one word (Hotels, Flights, Restaurants, Events, Travel, Weather, Banks, Payment, RideSharing, ...),
- "status": "open" (asked for, not under way yet), "pending" (submitted, outcome awaited), "completed", "failed", "abandoned" (the
  user gave it up), or null when the exchange says nothing about its progress.
Reply with JSON only: {"goals": [{"content": "...", "core_content": "...", "domain": "...", "status": "..."}]}, with an empty list
when the exchange names no task."""

SAME_PROMPT = """Two descriptions of user tasks follow. Are they the same task (same service, same request; details may have
been added or changed since)?
Reply with JSON only: {"same": true} or {"same": false}."""

RELATION_PROMPT = """A new user task has just been recorded; an earlier task follows it. How does the new task relate to the earlier one?
"dependency": the new task can only be carried out once the earlier one is finished (paying for a booking needs the booking).
"link": related (same trip, same service) but in no particular order.
"none": unrelated.
Reply with JSON only: {"relation": "dependency"} (or "link", or "none")."""

AUDIT_PROMPT = """A user task and the latest exchange of the conversation follow. Did this exchange change the task's status?
Statuses: "open" (asked for, not under way), "pending" (submitted, outcome awaited), "completed", "failed", "abandoned" (given up
by the user).
Reply with JSON only: {"status": "<new status>"}, or {"status": null} when the exchange does not change it."""


def parse_json(text: str | None) -> Any:
    """The first JSON object or array in a reply (code fences and prose around it are ignored)."""
    body = (text or "").strip()
    starts = [i for i in (body.find("{"), body.find("[")) if i >= 0]
    if not starts:
        raise MemoryJudgeError(f"memory judge: no JSON in the reply {body[:120]!r}")
    try:
        value, _ = json.JSONDecoder().raw_decode(body[min(starts) :])
    except json.JSONDecodeError as exc:
        raise MemoryJudgeError(f"memory judge: unreadable JSON in the reply {body[:120]!r} ({exc.msg})") from exc
    return value


def _status(value: Any, where: str) -> str | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "null", "none", "unchanged")):
        return None
    word = cat.STATUS_WORDS.get(str(value).strip().lower().replace(" ", "_"))
    if word is None:
        raise MemoryJudgeError(f"memory judge: {where} has an unknown status {value!r} (expected one of {', '.join(STATUSES)} or null)")
    return word


@attrs.define
class LLMJudge(MemoryJudge):
    """Every step asks a chat role (prompts above); tokens are counted from the replies."""

    complete: Callable[[ChatRequest], Awaitable[ChatResponse]] | None = None
    seed: int | None = None
    name: str = "llm"

    async def _ask(self, system: str, user: str) -> Any:
        assert self.complete is not None
        request = ChatRequest(
            messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            seed=self.seed,
            response_format={"type": "json_object"},
        )
        response = await self.complete(request)
        self.calls += 1
        self.prompt_tokens += response.prompt_tokens or 0
        self.completion_tokens += response.completion_tokens or 0
        return parse_json(response.content)

    async def extract(self, turn: Turn) -> list[Candidate]:
        """The model's goal list for the turn."""
        answer = await self._ask(EXTRACT_PROMPT, turn.transcript())
        goals = answer.get("goals") if isinstance(answer, dict) else answer
        if not isinstance(goals, list):
            raise MemoryJudgeError(f"memory judge: extraction reply has no 'goals' list: {json.dumps(answer)[:120]}")
        return [self._candidate(g, i) for i, g in enumerate(goals)]

    def _candidate(self, raw: Any, i: int) -> Candidate:
        where = f"goals[{i}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("content") or raw.get("core_content"), str):
            raise MemoryJudgeError(f"memory judge: {where} is not a goal with a content: {json.dumps(raw)[:120]}")
        content = str(raw.get("content") or raw.get("core_content"))
        core = str(raw.get("core_content") or content).strip().lower()
        domain = str(raw.get("domain") or "")
        intent = cat.canonical_intent(domain, "", content, core)
        return Candidate(
            domain=domain,
            intent=intent,
            content=content,
            core_content=core,
            slots=cat.slots_in(content, cat.INTENT_FAMILY.get(intent)),
            status=_status(raw.get("status"), where),
        )

    async def same_goal(self, candidate: Candidate, goal: StoredGoal, turn: Turn) -> bool:
        """The model's yes or no."""
        answer = await self._ask(SAME_PROMPT, f"A: {candidate.content} ({candidate.core_content})\nB: {goal.content} ({goal.core_content})")
        if not isinstance(answer, dict) or not isinstance(answer.get("same"), bool):
            raise MemoryJudgeError(f'memory judge: expected {{"same": true|false}}, got {json.dumps(answer)[:120]}')
        return bool(answer["same"])

    async def relation(self, candidate: Candidate, goal: StoredGoal, turn: Turn) -> str:
        """The model's label."""
        answer = await self._ask(RELATION_PROMPT, f"New task: {candidate.content}\nEarlier task: {goal.content}")
        label = str(answer.get("relation", "")).strip().lower() if isinstance(answer, dict) else ""
        if label not in RELATIONS:
            raise MemoryJudgeError(f"memory judge: expected a relation among {', '.join(RELATIONS)}, got {json.dumps(answer)[:120]}")
        return label

    async def audit(self, goal: StoredGoal, turn: Turn, goals: Sequence[StoredGoal]) -> str | None:
        """The model's new status, or None."""
        answer = await self._ask(AUDIT_PROMPT, f"Task: {goal.content} (status now: {goal.status})\nExchange:\n{turn.transcript()}")
        if not isinstance(answer, dict) or "status" not in answer:
            raise MemoryJudgeError(f'memory judge: expected {{"status": ...}}, got {json.dumps(answer)[:120]}')
        status = _status(answer["status"], "audit")
        return status if status != goal.status else None
