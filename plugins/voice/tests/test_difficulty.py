"""tau2's audio_difficulty.json per task, and the pass rate by difficulty of a full-duplex run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
from bench_voice import register_report_sections
from bench_voice.difficulty import DifficultySection, TaskDifficulty, difficulties, pass_rates


def test_each_domains_tasks_have_an_auth_method_and_difficulty(reference: Callable[[str], str]) -> None:
    airline, retail, telecom = (difficulties(reference(f"{d}/audio_difficulty.json").rsplit("/", 1)[0]) for d in ("airline", "retail", "telecom"))
    assert airline["0"].auth_method == "user_id" and airline["0"].fields["user_id"] == "medium"
    assert {t.auth_method for t in retail.values()} == {"name_zip", "email"}
    assert all(t.difficulty in ("easy", "medium", "hard") for t in [*airline.values(), *retail.values()])
    telecom_id = "[mobile_data_issue]user_abroad_roaming_enabled_off[PERSONA:None]"
    assert telecom[telecom_id] == TaskDifficulty(auth_method="phone_number", difficulty="easy", fields={})


def test_no_file_no_difficulties(tmp_path: Path) -> None:
    assert difficulties(str(tmp_path)) == {} and difficulties(None) == {}


def test_pass_rates_per_difficulty_level() -> None:
    known = {
        "a": TaskDifficulty(auth_method="email", difficulty="hard"),
        "b": TaskDifficulty(auth_method="email", difficulty="easy"),
        "c": TaskDifficulty(auth_method="email", difficulty="easy"),
    }
    rows = [
        {"task_id": "a", "reward": 0.0},
        {"task_id": "a", "reward": 1.0},
        {"task_id": "b", "reward": 1.0},
        {"task_id": "c", "reward": 1.0},
        {"task_id": "unrated", "reward": 0.0},
        {"task_id": "c", "reward": None},
    ]
    assert pass_rates(rows, known) == [["easy", 2, 2, 1.0], ["hard", 1, 2, 0.5]]


@attrs.define
class FakeView:
    config: dict[str, Any]
    duplex: bool
    rows: list[dict[str, Any]]
    run: Any = attrs.field(factory=lambda: type("Run", (), {"id": "r1"})())

    def query(self, sql: str, params: Any = ()) -> list[dict[str, Any]]:
        return [{"1": 1}] if self.duplex else []

    def conversations(self) -> list[dict[str, Any]]:
        return self.rows


def test_the_section_shows_only_for_full_duplex_runs_with_difficulties(reference: Callable[[str], str]) -> None:
    data_dir = reference("airline/audio_difficulty.json").rsplit("/", 1)[0]
    rows = [{"task_id": "0", "reward": 1.0}, {"task_id": "1", "reward": 0.0}]
    section = DifficultySection().build(FakeView({"data_dir": data_dir}, True, rows))  # type: ignore[arg-type]
    assert section is not None and section.tables[0].headers == ["difficulty", "tasks", "conversations", "pass rate"]
    assert sum(r[2] for r in section.tables[0].rows) == 2
    assert DifficultySection().build(FakeView({"data_dir": data_dir}, False, rows)) is None  # type: ignore[arg-type]
    assert DifficultySection().build(FakeView({}, True, rows)) is None  # type: ignore[arg-type]
    found: list[Any] = []
    register_report_sections(found.append)
    assert [s.name for s in found] == ["voice-difficulty"]
