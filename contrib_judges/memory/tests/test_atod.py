"""ATOD's released dialogue format read as it is, and `bench memory evaluate-file` over it."""

from __future__ import annotations

import json
from pathlib import Path

import attrs
import pytest
from bench_memory import read_atod
from click.testing import CliRunner
from dialogues import COMPLEX, DENSE, MEDIUM, to_atod

from bench_kernel import ConfigError
from bench_kernel.testing import bench_cli


def write(tmp_path: Path, entries: list[dict]) -> Path:
    path = tmp_path / "annotated_dialogues.json"
    path.write_text(json.dumps(entries))
    return path


def test_turns_become_messages_and_status_changes_events(tmp_path: Path) -> None:
    [dialogue] = read_atod(write(tmp_path, [to_atod(MEDIUM, "medium")]))
    assert dialogue.id == "medium-1" and dialogue.complexity == "medium" and len(dialogue.messages) == 12  # the tool call and result dropped
    assert [(e.data["goal_id"], e.data["status"], e.message_index) for e in dialogue.events][:3] == [
        ("goal_1", "open", 1),
        ("goal_1", "pending", 2),
        ("goal_2", "open", 3),
    ]
    assert dialogue.goals[0].status_history[2].turn == 3 and dialogue.goals[2].dependencies == ["goal_1"]


@pytest.mark.parametrize("with_changes", [True, False], ids=["status-changes", "histories-only"])
def test_evaluate_file_reproduces_clean_annotations_per_complexity_class(tmp_path: Path, with_changes: bool) -> None:
    path = write(
        tmp_path,
        [
            to_atod(MEDIUM, "medium", with_changes=with_changes),
            to_atod(COMPLEX, "complex", with_changes=with_changes),
            to_atod(attrs.evolve(DENSE, id="dense-1"), "medium", with_changes=with_changes),
        ],
    )
    result = CliRunner().invoke(bench_cli(["memory"]), ["memory", "evaluate-file", str(path)])
    assert result.exit_code == 0, result.output
    sections = result.output.split("\n")
    complex_part = "\n".join(sections[sections.index("complex:") : sections.index("medium:")])
    assert "detection_f1 (macro): 1.0000" in complex_part and "status_accuracy (micro): 1.0000" in complex_part
    assert "conversations: 3.0000" in result.output  # all three under 'all'
    limited = CliRunner().invoke(bench_cli(["memory"]), ["memory", "evaluate-file", str(path), "--limit", "1"])
    assert "conversations: 1.0000" in limited.output


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d["turns"][0].update(speaker="BOT"), r"\$\[0\]\.turns\[0\]: speaker must be USER or SYSTEM"),
        (lambda d: d["turns"][1]["goal_status_changes"][0].update(new_status="done"), r"turns\[1\]\.goal_status_changes\[0\]"),
        (lambda d: d["goal_list"][0].pop("content"), r"\$\[0\]\.goal_list\[0\]: not a goal"),
        (lambda d: d.pop("turns"), r"\$\[0\]: a dialogue needs"),
    ],
)
def test_bad_files_are_errors_naming_the_json_path(tmp_path: Path, mutate, message: str) -> None:
    entry = to_atod(MEDIUM, "medium")
    mutate(entry)
    with pytest.raises(ConfigError, match=message):
        read_atod(write(tmp_path, [entry]))
