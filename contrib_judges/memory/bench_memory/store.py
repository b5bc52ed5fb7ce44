"""The symbolic goal store: the memory's goals, their status history and their edges, in SQLite tables.

The evaluator keeps one conversation's memory in an in-memory database with these same tables, and
its final content is written to the run's database (online through the metric's rows, offline directly).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import attrs
from sqlite_utils import Database, Migrations

migrations = Migrations("bench-memory")

EDGE_KINDS = ("dependency", "link")


@migrations(name="m001_goal_store")
def m001_goal_store(db: Database) -> None:
    db.table("memory_goals").create(
        {
            "conversation_id": str,
            "goal_id": str,
            "domain": str,
            "intent": str,
            "status": str,
            "content": str,
            "core_content": str,
            "slots_json": str,
            "status_history_json": str,
            "first_turn": int,
            "last_turn": int,
            "gold_goal_id": str,
        },
        pk=("conversation_id", "goal_id"),
    )
    # kind 'dependency': goal_id waits for related_id; kind 'link': the two goals are related.
    db.table("memory_edges").create(
        {"conversation_id": str, "goal_id": str, "related_id": str, "kind": str}, pk=("conversation_id", "goal_id", "related_id", "kind")
    )
    db.table("memory_turns").create(
        {
            "conversation_id": str,
            "turn": int,
            "first_message": int,
            "last_message": int,
            "latency_ms": float,
            "judge_calls": int,
            "prompt_tokens": int,
            "completion_tokens": int,
            "candidates": int,
            "inserted": int,
            "updated": int,
            "audited": int,
            "statuses_compared": int,
            "statuses_correct": int,
        },
        pk=("conversation_id", "turn"),
    )


TABLES = ("memory_goals", "memory_edges", "memory_turns")


@attrs.frozen(kw_only=True)
class StoredGoal:
    """One goal of the memory, as read back from the store."""

    id: str
    domain: str
    intent: str
    status: str
    content: str
    core_content: str
    slots: dict[str, str]
    history: list[tuple[int, str]]
    first_turn: int
    last_turn: int

    def status_at(self, turn: int) -> str | None:
        """The goal's status at the end of a turn (None before it was stored)."""
        current = None
        for when, status in self.history:
            if when <= turn:
                current = status
        return current


class GoalStore:
    """One conversation's goals, dependencies and links in SQLite (the plugin's own tables)."""

    def __init__(self, conversation_id: str, db: Database | None = None) -> None:
        self.conversation_id = conversation_id
        self.db = db if db is not None else Database(memory=True)
        migrations.apply(self.db)

    def insert(self, *, domain: str, intent: str, content: str, core_content: str, slots: Mapping[str, str], status: str, turn: int) -> str:
        """Store a new goal; returns its id (g1, g2, ... in insertion order)."""
        goal_id = f"g{len(self.goals()) + 1}"
        self.db.table("memory_goals").insert(
            {
                "conversation_id": self.conversation_id,
                "goal_id": goal_id,
                "domain": domain,
                "intent": intent,
                "status": status,
                "content": content,
                "core_content": core_content,
                "slots_json": json.dumps(dict(slots)),
                "status_history_json": json.dumps([[turn, status]]),
                "first_turn": turn,
                "last_turn": turn,
            }
        )
        return goal_id

    def update(
        self,
        goal_id: str,
        *,
        turn: int,
        status: str | None = None,
        content: str | None = None,
        slots: Mapping[str, str] | None = None,
        core_content: str | None = None,
    ) -> bool:
        """Merge new facts into a goal; a status different from the current one is appended to its history. True if it changed."""
        goal = self.get(goal_id)
        changes: dict[str, Any] = {"last_turn": turn}
        if status is not None and status != goal.status:
            changes.update(status=status, status_history_json=json.dumps([*map(list, goal.history), [turn, status]]))
        if slots:
            changes["slots_json"] = json.dumps({**goal.slots, **slots})
        if content:
            changes["content"] = content
        if core_content and len(core_content) > len(goal.core_content):
            changes["core_content"] = core_content
        self.db.table("memory_goals").update((self.conversation_id, goal_id), changes)
        return "status" in changes

    def get(self, goal_id: str) -> StoredGoal:
        """One goal."""
        rows = list(self.db.query("select * from memory_goals where conversation_id = ? and goal_id = ?", [self.conversation_id, goal_id]))
        if not rows:
            raise KeyError(goal_id)
        return _goal(rows[0])

    def goals(self) -> list[StoredGoal]:
        """Every goal, in insertion order."""
        rows = self.db.query("select * from memory_goals where conversation_id = ? order by first_turn, rowid", [self.conversation_id])
        return [_goal(r) for r in rows]

    def by_core_content(self, core: str) -> list[StoredGoal]:
        """Goals whose core content is exactly this one."""
        return [g for g in self.goals() if g.core_content == core]

    def link(self, goal_id: str, related_id: str, kind: str) -> None:
        """Record an edge: a dependency (goal_id waits for related_id) or a link."""
        if kind not in EDGE_KINDS:
            raise ValueError(f"edge kind must be one of {EDGE_KINDS}, got {kind!r}")
        self.db.table("memory_edges").insert(
            {"conversation_id": self.conversation_id, "goal_id": goal_id, "related_id": related_id, "kind": kind}, replace=True
        )

    def edges(self, kind: str | None = None) -> list[tuple[str, str, str]]:
        """(goal, related, kind) edges, optionally of one kind."""
        rows = self.db.query("select goal_id, related_id, kind from memory_edges where conversation_id = ? order by rowid", [self.conversation_id])
        return [(r["goal_id"], r["related_id"], r["kind"]) for r in rows if kind is None or r["kind"] == kind]

    def dependencies(self, goal_id: str) -> list[str]:
        """The goals this one waits for."""
        return [related for goal, related, _ in self.edges("dependency") if goal == goal_id]

    def blocked(self, goal_id: str) -> bool:
        """True while any goal this one depends on is not finished (completed, failed or abandoned)."""
        finished = {g.id for g in self.goals() if g.status in ("completed", "failed", "abandoned")}
        return any(dep not in finished for dep in self.dependencies(goal_id))

    def rows(self) -> list[tuple[str, dict[str, Any]]]:
        """Every stored row of this conversation as (table, row), ready to copy into the run's database."""
        out = []
        for table in ("memory_goals", "memory_edges"):
            rows = self.db.query(f"select * from {table} where conversation_id = ? order by rowid", [self.conversation_id])
            out += [(table, dict(r)) for r in rows]
        return out

    def set_gold(self, matches: Mapping[str, str]) -> None:
        """Remember which gold goal each detected goal was matched to."""
        for goal_id, gold_id in matches.items():
            self.db.table("memory_goals").update((self.conversation_id, goal_id), {"gold_goal_id": gold_id})


def _goal(row: Mapping[str, Any]) -> StoredGoal:
    return StoredGoal(
        id=row["goal_id"],
        domain=row["domain"],
        intent=row["intent"],
        status=row["status"],
        content=row["content"],
        core_content=row["core_content"],
        slots=json.loads(row["slots_json"]),
        history=[(int(t), s) for t, s in json.loads(row["status_history_json"])],
        first_turn=row["first_turn"],
        last_turn=row["last_turn"],
    )
