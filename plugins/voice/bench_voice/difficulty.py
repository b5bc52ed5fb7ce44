"""Transcription difficulty of tau2's tasks (`audio_difficulty.json`) and the `voice-difficulty` report section.

tau2 rates, per task, how hard the caller's authentication details are to transcribe (easy, medium, hard: name
frequency, homophones, spelling) and by which method the caller authenticates (user id, name and zip, email, phone
number). The section gives a full-duplex run's pass rate per difficulty level, so a reader sees whether speech fails
on the hard names.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from bench_kernel import ReportSection, RunView, Section, SectionTable

LEVELS = ("easy", "medium", "hard")
TIMELINE = "duplex.timeline"


@attrs.frozen(kw_only=True)
class TaskDifficulty:
    """One task's authentication method, overall difficulty and per-field difficulty."""

    auth_method: str | None
    difficulty: str | None
    fields: Mapping[str, str] = attrs.field(factory=dict)


def difficulties(data_dir: str | None) -> dict[str, TaskDifficulty]:
    """Per task id, from `<data_dir>/audio_difficulty.json` (empty when there is none)."""
    if not data_dir:
        return {}
    return _read(str(Path(data_dir) / "audio_difficulty.json"))


@functools.cache
def _read(path: str) -> dict[str, TaskDifficulty]:
    file = Path(path)
    if not file.is_file():
        return {}
    tasks = json.loads(file.read_text(encoding="utf-8")).get("tasks", {})
    # airline and retail key tasks by their id; telecom by an index, with the task id inside the entry.
    return {
        str(entry.get("task_id", key)): TaskDifficulty(
            auth_method=entry.get("auth_method"),
            difficulty=entry.get("authentication_difficulty"),
            fields=dict(entry.get("field_difficulties") or {}),
        )
        for key, entry in tasks.items()
        if isinstance(entry, Mapping)
    }


def pass_rates(rows: list[dict[str, Any]], known: Mapping[str, TaskDifficulty]) -> list[list[Any]]:
    """Rows of (difficulty, tasks, conversations, pass rate) for the conversations of rated tasks."""
    by_level: dict[str, list[float]] = defaultdict(list)
    tasks: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        rated = known.get(row["task_id"])
        if rated is None or row.get("reward") is None:
            continue
        level = rated.difficulty or "unrated"
        by_level[level].append(1.0 if row["reward"] >= 1.0 - 1e-6 else 0.0)
        tasks[level].add(row["task_id"])
    order = [*LEVELS, *sorted(set(by_level) - set(LEVELS))]
    return [
        [level, len(tasks[level]), len(by_level[level]), round(sum(by_level[level]) / len(by_level[level]), 3)] for level in order if by_level[level]
    ]


@attrs.define(kw_only=True)
class DifficultySection(ReportSection):
    """Pass rate by transcription difficulty of the caller's authentication details (full-duplex runs)."""

    name: str = "voice-difficulty"
    title: str = "Pass rate by transcription difficulty (tau2's audio_difficulty.json)"
    description: str = "A full-duplex run's pass rate per authentication difficulty level of its tasks."

    def build(self, view: RunView) -> Section | None:
        """The table, or None when the run is not full duplex or its data has no difficulty file."""
        known = difficulties(view.config.get("data_dir"))
        if not known or not view.query("select 1 from conversation_events where run_id = ? and kind = ? limit 1", [view.run.id, TIMELINE]):
            return None
        rows = pass_rates(view.conversations(), known)
        return Section(
            title=self.title,
            tables=[SectionTable(headers=["difficulty", "tasks", "conversations", "pass rate"], rows=rows)],
            notes=[
                "difficulty: tau2's authentication_difficulty of the task (how hard the caller's name, id, email or "
                "phone number is to transcribe); pass: reward 1"
            ],
        )
