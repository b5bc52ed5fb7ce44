"""`bench import atod-dialogues`: ATOD's format loaded unchanged, stored as a run, scored; malformed files named precisely."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from atod_helpers import section_figures
from bench_atod.importer import import_dialogues, read_dialogues
from click.testing import CliRunner

from bench_kernel import BenchError, Store, get_plugin_manager
from bench_kernel.testing import bench_cli

FIXTURE = Path(__file__).parent / "data" / "dialogues.json"


def values(db: Path) -> dict[tuple[str, str], float | None]:
    store = Store(db)
    try:
        rows = store.db.query("select c.task_id, m.plugin, m.metric, m.value from metric_values m join conversations c on c.id = m.conversation_id")
        return {(r["task_id"], r["metric"] if r["plugin"] != "bench-kernel" else "kernel:" + r["metric"]): r["value"] for r in rows}
    finally:
        store.close()


def test_the_fixture_imports_and_its_figures_equal_the_hand_computed_ones(tmp_path: Path) -> None:
    db = tmp_path / "atod.db"
    out = CliRunner().invoke(bench_cli(["atod"]), ["import", "atod-dialogues", str(FIXTURE), "--plugin", "atod", "--db", str(db), "--format", "json"])
    assert out.exit_code == 0, out.output
    assert "imported 3 dialogues (1 complex, 2 medium)" in out.output
    found = values(db)
    hotel, trip, undecided = "demo-medium-hotel", "demo-complex-trip", "demo-medium-undecided"
    # hotel: both decided goals completed (the weather goal stays open): dGCR 1; NTC: hotel 1 -> 6, deposit 3 -> 8: 5 each.
    assert found[(hotel, "dgcr")] == 1.0 and found[(hotel, "ntc")] == 5.0
    # trip: the flight failed (1 -> 6, resumed once), the table (7 -> 10) and the balance (11 -> 12) completed; the hotel
    # (open, behind the flight), the tickets (pending, behind the hotel), the ride (abandoned) and the transfer (never
    # mentioned) are not decided. dGCR 2/3, NTC (5 + 3 + 1) / 3 = 3, completed only (3 + 1) / 2 = 2.
    assert found[(trip, "dgcr")] == pytest.approx(2 / 3) and found[(trip, "ntc")] == 3.0 and found[(trip, "ntc.completed_only")] == 2.0
    assert found[(undecided, "dgcr")] is None and found[(undecided, "ntc")] is None
    # The annotations agree with the events on this clean file.
    for dialogue in (hotel, trip, undecided):
        assert found[(dialogue, "dgcr.annotated")] == found[(dialogue, "dgcr")]
        assert found[(dialogue, "ntc.annotated")] == found[(dialogue, "ntc")]
    # Reward: goal-credit over every goal (2 of 3, 2 of 7, 0 of 2).
    assert found[(hotel, "kernel:reward")] == pytest.approx(2 / 3) and found[(trip, "kernel:reward")] == pytest.approx(2 / 7)
    assert found[(undecided, "kernel:reward")] == 0.0
    # The rule judge's proactive turns: hotel confirmed at turn 6 (the user asked about weather); in the trip, the
    # tickets held pending at 8 (grounded, but they end pending) and the table reserved at 10 (grounded, completed).
    assert found[(hotel, "pe")] == 1.0 and found[(trip, "pe")] == 0.5 and found[(undecided, "pe")] is None
    figures = section_figures(out.output)
    assert figures[("dGCR", "micro", "all")] == pytest.approx(4 / 5)  # pooled over goals: 4 completed of 5 decided
    assert figures[("dGCR", "per conversation", "all")] == pytest.approx((1 + 2 / 3) / 2, abs=1e-4)
    assert figures[("dGCR", "micro", "medium")] == 1.0 and figures[("dGCR", "micro", "complex")] == pytest.approx(2 / 3, abs=1e-4)
    assert figures[("dGCR", "conversations", "all")] == 2  # the undecided dialogue has no dGCR
    assert figures[("NTC", "micro", "all")] == pytest.approx((5 + 5 + 5 + 3 + 1) / 5) and figures[("NTC", "per conversation", "all")] == 4.0
    assert figures[("NTC", "micro", "complex")] == 3.0 and figures[("NTC", "micro", "medium")] == 5.0
    assert figures[("PE", "per conversation", "all")] == 0.75 and figures[("PE", "micro", "all")] == pytest.approx(2 / 3, abs=1e-4)


def test_messages_events_and_tasks_are_stored_at_the_right_places(tmp_path: Path) -> None:
    summary = import_dialogues(FIXTURE, tmp_path / "a.db", plugins=get_plugin_manager(["atod"]))
    assert summary.by_class == {"medium": 2, "complex": 1}
    store = Store(tmp_path / "a.db")
    try:
        cid = f"{summary.run_id}/agent/demo-complex-trip/0"
        roles = [m["role"] for m in store.messages(cid)]
        changes = [(e["message_index"], json.loads(e["data_json"])) for e in store.conversation_events(cid)]
        [row] = [c for c in store.conversations(summary.run_id) if c["task_id"] == "demo-complex-trip"]
    finally:
        store.close()
    assert roles == ["user", "assistant"] * 6
    assert changes[:3] == [
        (0, {"goal_id": "goal_1", "status": "open", "previous_status": "not_mentioned"}),
        (1, {"goal_id": "goal_1", "status": "pending", "previous_status": "open"}),
        (2, {"goal_id": "goal_2", "status": "open", "previous_status": "not_mentioned"}),
    ]
    assert changes[5] == (4, {"goal_id": "goal_1", "status": "open", "previous_status": "failed"})
    assert json.loads(row["attributes_json"])["complexity"] == "complex"


def test_importing_twice_keeps_one_conversation_per_dialogue(tmp_path: Path) -> None:
    plugins = get_plugin_manager(["atod"])
    first = import_dialogues(FIXTURE, tmp_path / "a.db", plugins=plugins)
    again = import_dialogues(FIXTURE, tmp_path / "a.db", plugins=get_plugin_manager(["atod"]))
    store = Store(tmp_path / "a.db")
    try:
        assert first.run_id == again.run_id and len(store.conversations(first.run_id)) == 3
    finally:
        store.close()


def broken(tmp_path: Path, edit: Any) -> Path:
    document = copy.deepcopy(json.loads(FIXTURE.read_text()))
    edited = edit(document)
    document = document if edited is None else edited
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(document))
    return path


def _set(path: list[Any], value: Any) -> Any:
    def edit(doc: Any) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value

    return edit


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda doc: {"dialogues": doc}, "a JSON array of dialogues, got dict @ $"),
        (lambda doc: [], "the file holds no dialogue @ $"),
        (_set([1, "turns", 3, "speaker"], "AGENT"), "must be USER or SYSTEM, got 'AGENT' @ $[1].turns[3].speaker"),
        (_set([0, "turns", 2, "utterance"], KeyError), "missing required field 'utterance' @ $[0].turns[2]"),
        (_set([0, "turns", 2, "turn_id"], "3"), "expected int, got str '3' @ $[0].turns[2].turn_id"),
        (_set([2, "complexity_class"], "hard"), "must be one of medium, complex, got 'hard' @ $[2].complexity_class"),
        (
            _set([1, "turns", 5, "goal_status_changes", 0, "new_status"], "done"),
            "must be one of not_mentioned, open, pending, completed, failed, abandoned, got 'done' @ $[1].turns[5].goal_status_changes[0].new_status",
        ),
        (_set([0, "goal_list", 1, "core_content"], KeyError), "missing required field 'core_content' @ $[0].goal_list[1]"),
        (_set([0, "goal_list"], []), "a dialogue needs at least one goal @ $[0].goal_list"),
        (_set([2, "dialogue_id"], "demo-medium-hotel"), "dialogue id 'demo-medium-hotel' appears twice @ $[2].dialogue_id"),
        (_set([0, "turns"], {}), "expected list, got dict {} @ $[0].turns"),
    ],
)
def test_malformed_files_name_the_file_and_the_json_path(tmp_path: Path, edit: Any, message: str) -> None:
    path = broken(tmp_path, edit)
    with pytest.raises(BenchError) as caught:
        read_dialogues(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_a_bad_goal_field_and_bad_json_are_clean_errors_on_the_command_line(tmp_path: Path) -> None:
    path = broken(tmp_path, _set([1, "goal_list", 0, "status_history", 1, "status"], "unknown"))
    out = CliRunner().invoke(bench_cli(["atod"]), ["import", "atod-dialogues", str(path), "--db", str(tmp_path / "x.db")])
    assert out.exit_code != 0 and "Traceback" not in out.output
    assert str(path) in out.output and "got 'unknown' @ $[1].goal_list[0].status_history[1]" in out.output
    path.write_text("[{")
    out = CliRunner().invoke(bench_cli(["atod"]), ["import", "atod-dialogues", str(path), "--db", str(tmp_path / "x.db")])
    assert out.exit_code != 0 and "not valid JSON" in out.output and "Traceback" not in out.output


EDGES = Path(__file__).parent / "data" / "edge_cases.json"


def test_edge_cases_upper_case_statuses_an_unknown_goal_extra_fields_and_a_goal_done_in_one_turn(tmp_path: Path) -> None:
    summary = import_dialogues(EDGES, tmp_path / "e.db", plugins=get_plugin_manager(["atod"]))
    found = values(tmp_path / "e.db")
    first, second = "edge-upper-case-and-unknown-goal", "edge-done-in-one-turn"
    # first: balance completed (turn 1 -> 2), seats failed (3 -> 4), museum never mentioned; goal_99 is not in the goal
    # list and is ignored. dGCR 1/2, NTC (1 + 1) / 2.
    assert found[(first, "dgcr")] == 0.5 and found[(first, "ntc")] == 1.0 and found[(first, "dgcr.goals")] == 3
    # second: opened and completed in the system's turn 2: zero turns.
    assert found[(second, "dgcr")] == 1.0 and found[(second, "ntc")] == 0.0
    for dialogue in (first, second):
        assert found[(dialogue, "dgcr.annotated")] == found[(dialogue, "dgcr")]
        assert found[(dialogue, "ntc.annotated")] == found[(dialogue, "ntc")]
    store = Store(tmp_path / "e.db")
    try:
        [row] = [r for r in store.metric_values(summary.run_id) if r["metric"] == "dgcr" and first in r["conversation_id"]]
    finally:
        store.close()
    assert json.loads(row["details_json"])["ignored_goal_ids"] == ["goal_99"]
    assert summary.problems == []


def test_an_inconsistent_goal_list_is_imported_and_named(tmp_path: Path) -> None:
    path = broken(tmp_path, _set([0, "goal_list", 0, "dependencies"], ["goal_2", "goal_7"]))  # goal_2 depends on goal_1: a cycle
    out = CliRunner().invoke(bench_cli(["atod"]), ["import", "atod-dialogues", str(path), "--plugin", "atod", "--db", str(tmp_path / "p.db")])
    assert out.exit_code == 0, out.output
    assert "goal list: demo-medium-hotel: goal 'goal_1' depends on unknown goal 'goal_7'" in out.output
    assert "demo-medium-hotel: dependency cycle: goal_1 -> goal_2 -> goal_1" in out.output


def test_an_offline_import_judged_through_the_atod_judge_role(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_kernel.testing import FakeOpenAIServer, Reply

    def world(body: dict[str, Any]) -> Reply:
        asked = body["messages"][-1]["content"]
        if '"match"' in asked:
            return Reply.text('{"match": 0}' if "Oslo" in asked else '{"match": 1}')
        if '"grounded"' in asked:
            return Reply.text('{"grounded": 1, "beneficial": 0}')
        if '"turn_quality"' in asked:
            return Reply.text('{"turn_quality": 3}')
        return Reply.text("nonsense")  # the dialogue score: garbage

    monkeypatch.setenv("ATOD_IMPORT_KEY", "sk-atod-import-0123456789")
    db = tmp_path / "j.db"
    with FakeOpenAIServer(world, api_key="sk-atod-import-0123456789") as server:
        out = CliRunner().invoke(
            bench_cli(["atod", "openai"]),
            [
                "import",
                "atod-dialogues",
                str(FIXTURE),
                "--plugin",
                "atod",
                "--plugin",
                "openai",
                "--db",
                str(db),
                "--model-option",
                "atod-judge.backend=openai",
                "--model-option",
                "atod-judge.model=fake-judge",
                "--model-option",
                f"atod-judge.base_url={server.base_url}",
                "--model-option",
                "atod-judge.api_key_env=ATOD_IMPORT_KEY",
            ],
        )
    assert out.exit_code == 0, out.output
    found = values(db)
    assert found[("demo-medium-hotel", "mra")] == 1.0 and found[("demo-medium-undecided", "mra")] == 0.0
    assert found[("demo-complex-trip", "pe")] == 0.0 and found[("demo-medium-hotel", "turn_quality")] == pytest.approx(0.6)
    assert found[("demo-medium-hotel", "dialogue_quality")] is None  # the garbage dialogue score: that metric's error
    assert found[("demo-medium-hotel", "dgcr")] == 1.0
    store = Store(db)
    try:
        calls = list(store.db.query("select role, conversation_id from llm_calls"))
        errors = {r["metric"]: r["error"] for r in store.db.query("select metric, error from metric_values where error is not null")}
    finally:
        store.close()
    assert calls and {c["role"] for c in calls} == {"atod-judge"} and all(c["conversation_id"].startswith("atod-") for c in calls)
    assert "JudgeReplyError" in errors["dialogue_quality"]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ("atod-judge=fake", "expects ROLE.KEY=VALUE"),
        ("atod-judge.backend=openai", "the atod-judge role needs a model"),
    ],
)
def test_bad_model_options_are_clean_errors(tmp_path: Path, option: str, message: str) -> None:
    out = CliRunner().invoke(
        bench_cli(["atod"]), ["import", "atod-dialogues", str(FIXTURE), "--db", str(tmp_path / "x.db"), "--model-option", option]
    )
    assert out.exit_code != 0 and message in out.output and "Traceback" not in out.output
