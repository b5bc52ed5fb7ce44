"""Tests of task-file loading, the error messages of malformed files, rendering and message round trips."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import attrs
import pytest

from bench_kernel import DomainOptions, TaskExtension, TaskFileError, TaskVocabulary, read_tasks
from bench_kernel.errors import ConfigError
from bench_kernel.schema.messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from bench_kernel.schema.tasks import RewardType, StructuredUserInstructions, Task, UserScenario
from bench_kernel.serialization import content_hash, converter, structure, unstructure
from bench_kernel.tasks.loading import load_tasks

REFERENCE = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[2] / ".." / "shared" / "reference")

# (file, expected number of tasks)
REFERENCE_TASK_FILES = [
    ("tau2/airline/tasks.json", 50),
    ("tau2/retail/tasks.json", 114),
    ("tau2/mock/tasks.json", 10),
    ("tau2/telecom/tasks_small.json", 20),
    ("agentchangebench/banking/tasks.json", 50),
]


def reference_file(relative: str) -> Path:
    """A file of the shared reference data, or a skip when the data is not checked out."""
    path = REFERENCE / relative
    if not path.exists():
        pytest.skip(f"reference data not available: {path} (expected ../shared/reference beside the repo)")
    return path


def write_json(tmp_path: Path, data: Any, name: str = "tasks.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def minimal_task(task_id: str, **extra: Any) -> dict[str, Any]:
    return {"id": task_id, "user_scenario": {"instructions": "Say hello."}, **extra}


# --------------------------------------------------------------------------- reference task files


@pytest.mark.parametrize(("relative", "count"), REFERENCE_TASK_FILES)
def test_reference_task_files_load(relative: str, count: int) -> None:
    tasks = load_tasks(reference_file(relative), ACB_VOCABULARY)
    assert len(tasks) == count
    assert len({t.id for t in tasks}) == count


@pytest.mark.parametrize(("relative", "count"), REFERENCE_TASK_FILES)
def test_reference_tasks_survive_a_round_trip(relative: str, count: int) -> None:
    for task in load_tasks(reference_file(relative), ACB_VOCABULARY):
        # Extension data is plugin-typed; it round-trips as JSON through the kernel's converter.
        assert unstructure(converter.structure(unstructure(task), Task)) == unstructure(task)


@attrs.frozen(kw_only=True)
class GoalShifts:
    """AgentChangeBench's goal shifts, as a plugin would own them (this test's own copy)."""

    required_shifts: int
    goals: list[str]


@attrs.frozen(kw_only=True)
class AllowedTool:
    function_name: str
    params: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True)
class ActionSet:
    action_id: str
    allowed_tools: list[AllowedTool]
    required_parameters: Any = None
    max_score: float | None = None
    scoring_rules: dict[str, Any] | None = None


ACB_VOCABULARY = TaskVocabulary(
    extensions=[
        TaskExtension(name="goal_shifts", field="goal_shifts", parent="user_scenario", type=GoalShifts),
        TaskExtension(name="action_sets", field="action_sets", parent="evaluation_criteria", type=list[ActionSet]),
    ]
)


def airline_task(task_id: str) -> Task:
    return next(t for t in load_tasks(reference_file("tau2/airline/tasks.json")) if t.id == task_id)


def test_airline_task_1_fields() -> None:
    task = airline_task("1")
    criteria = task.evaluation_criteria
    assert criteria is not None
    assert [a.action_id for a in criteria.actions or []] == ["1_0", "1_1"]
    assert criteria.actions[0].arguments == {"user_id": "raj_sanchez_7340"}
    assert criteria.actions[0].requestor == "assistant"
    assert criteria.reward_basis == [RewardType.DB, RewardType.COMMUNICATE]
    assert criteria.nl_assertions == ["Agent should not approve the cancellation."]


def test_airline_task_1_renders_like_tau2() -> None:
    task = airline_task("1")
    text = task.user_scenario.render()
    assert text.startswith("Instructions:\n\tDomain: airline\n\tReason for call:\n\t\tYou recently spoke on the phone with a customer")
    assert "\n\tKnown info:\n\t\tYou are Raj Sanchez.\n\t\tYour user id is raj_sanchez_7340.\n\tTask instructions:\n" in text
    assert "Unknown info" not in text
    assert "Persona" not in text


def test_telecom_tasks_keep_user_requestor_and_initialization_actions() -> None:
    tasks = load_tasks(reference_file("tau2/telecom/tasks_small.json"))
    user_actions = [a for t in tasks for a in t.gold_actions() if a.requestor == "user"]
    assert user_actions, "telecom has gold actions the user performs"
    init_actions = [c for t in tasks if t.initial_state for c in t.initial_state.initialization_actions or []]
    assert init_actions and all(c.env_type in ("user", "assistant") for c in init_actions)


def test_mock_message_history_is_structured_by_role() -> None:
    tasks = {t.id: t for t in load_tasks(reference_file("tau2/mock/tasks.json"))}
    history = tasks["update_task_with_message_history"].initial_state.message_history
    assert [type(m) for m in history][:3] == [UserMessage, AssistantMessage, ToolMessage]
    assert history[1].tool_calls[0].name == "create_task"
    assert history[2].id == history[1].tool_calls[0].id


def test_mock_string_instructions_stay_strings() -> None:
    tasks = load_tasks(reference_file("tau2/mock/tasks.json"))
    assert any(isinstance(t.user_scenario.instructions, str) for t in tasks)


def test_agentchangebench_banking_keeps_goal_shifts_and_action_sets_through_extensions() -> None:
    path = reference_file("agentchangebench/banking/tasks.json")
    tasks = load_tasks(path, ACB_VOCABULARY)
    first = tasks[0]
    assert first.extension("goal_shifts") == GoalShifts(required_shifts=2, goals=["authentication", "transactions", "dispute"])
    assert first.extension("action_sets")[0].allowed_tools[0].function_name == "get_customer_by_phone"
    owners = {"user_scenario.goal_shifts": "changebench", "evaluation_criteria.action_sets": "changebench"}
    with pytest.raises(TaskFileError) as caught:
        load_tasks(path, TaskVocabulary(owners=lambda: owners))
    # Never a silent drop: the field, its path and the plugin that would own it are named.
    assert "extra fields found (goal_shifts) @ $[0].user_scenario (owned by plugin 'changebench': add --plugin changebench)" in str(caught.value)


def test_split_keeps_task_file_order() -> None:
    path = reference_file("tau2/airline/tasks.json")
    all_ids = [t.id for t in load_tasks(path)]
    test_ids = [t.id for t in read_tasks(path, DomainOptions(split="test"))]
    train_ids = [t.id for t in read_tasks(path, DomainOptions(split="train"))]
    assert (len(train_ids), len(test_ids)) == (30, 20)
    assert test_ids == [i for i in all_ids if i in set(test_ids)]
    assert set(train_ids).isdisjoint(test_ids)


def test_unknown_split_names_the_known_ones() -> None:
    path = reference_file("tau2/airline/tasks.json")
    with pytest.raises(ConfigError, match=r"unknown split 'nope'.*base"):
        read_tasks(path, DomainOptions(split="nope"))


# --------------------------------------------------------------------------- malformed files


def test_malformed_tasks_name_file_and_every_json_path(tmp_path: Path) -> None:
    bad_action = {"action_id": "1", "name": "n", "arguments": {}, "bogus": 1}
    path = write_json(
        tmp_path,
        [
            minimal_task("ok"),
            {"id": "missing-instructions", "user_scenario": {}},
            minimal_task("extra-key", evaluation_criteria={"actions": [bad_action]}),
        ],
    )
    with pytest.raises(TaskFileError) as info:
        load_tasks(path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert "$[1].user_scenario.instructions" in message
    assert "extra fields found (bogus) @ $[2].evaluation_criteria.actions[0]" in message
    assert len(info.value.problems) == 2
    assert info.value.path == str(path)


def test_bad_reward_type_names_its_index(tmp_path: Path) -> None:
    path = write_json(tmp_path, [minimal_task("a", evaluation_criteria={"reward_basis": ["DB", "NOPE"]})])
    with pytest.raises(TaskFileError, match=r"\$\[0\]\.evaluation_criteria\.reward_basis\[1\]"):
        load_tasks(path)


def test_unknown_message_role_names_its_path(tmp_path: Path) -> None:
    path = write_json(tmp_path, [minimal_task("a", initial_state={"message_history": [{"role": "robot"}]})])
    with pytest.raises(TaskFileError, match=r"\$\[0\]\.initial_state\.message_history\[0\]"):
        load_tasks(path)


def test_tasks_object_paths_start_at_tasks_key(tmp_path: Path) -> None:
    path = write_json(tmp_path, {"tasks": [minimal_task("a"), {"id": "b"}]})
    with pytest.raises(TaskFileError, match=r"\$\.tasks\[1\]\.user_scenario"):
        load_tasks(path)


def test_tasks_object_form_loads(tmp_path: Path) -> None:
    path = write_json(tmp_path, {"tasks": [minimal_task("a"), minimal_task("b")]})
    assert [t.id for t in load_tasks(path)] == ["a", "b"]


def test_non_json_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "tasks.json"
    path.write_text('[{"id": "a",\n  "x": }]', encoding="utf-8")
    with pytest.raises(TaskFileError, match=r"line 2 column 8") as info:
        load_tasks(path)
    assert str(path) in str(info.value)


def test_missing_file_is_a_task_file_error(tmp_path: Path) -> None:
    with pytest.raises(TaskFileError, match="file not found"):
        load_tasks(tmp_path / "absent.json")


def test_a_non_list_is_refused(tmp_path: Path) -> None:
    path = write_json(tmp_path, {"id": "a"})
    with pytest.raises(TaskFileError, match=r"expected a list of tasks @ \$"):
        load_tasks(path)


def test_duplicate_ids_name_both_positions(tmp_path: Path) -> None:
    path = write_json(tmp_path, [minimal_task("a"), minimal_task("b"), minimal_task("a")])
    with pytest.raises(TaskFileError, match=r"duplicate task id 'a' @ \$\[2\] \(first at \$\[0\]\)"):
        load_tasks(path)


def test_duplicate_ids_in_tasks_object_use_its_path(tmp_path: Path) -> None:
    path = write_json(tmp_path, {"tasks": [minimal_task("a"), minimal_task("a")]})
    with pytest.raises(TaskFileError, match=r"duplicate task id 'a' @ \$\.tasks\[1\] \(first at \$\.tasks\[0\]\)"):
        load_tasks(path)


def test_unknown_top_level_task_keys_are_refused(tmp_path: Path) -> None:
    path = write_json(tmp_path, [minimal_task("a", surprise=True)])
    with pytest.raises(TaskFileError, match=r"extra fields found \(surprise\) @ \$\[0\]"):
        load_tasks(path)


def test_structure_names_source_and_root() -> None:
    with pytest.raises(TaskFileError, match=r"^inline: required field missing @ \$\.x\.user_scenario$"):
        structure({"id": "a"}, Task, source="inline", root="$.x")


# --------------------------------------------------------------------------- rendering


def test_structured_instructions_render_with_tabs() -> None:
    instructions = StructuredUserInstructions(
        domain="airline",
        reason_for_call="Cancel a trip.\nIt was booked by phone.",
        known_info="You are Raj.",
        unknown_info=None,
        task_instructions="Ask for a refund.\n\nDo not accept a voucher.",
    )
    assert instructions.render() == (
        "Domain: airline\n"
        "Reason for call:\n\tCancel a trip.\n\tIt was booked by phone.\n"
        "Known info:\n\tYou are Raj.\n"
        "Task instructions:\n\tAsk for a refund.\n\n\tDo not accept a voucher."
    )


def test_scenario_render_indents_instructions_again_and_puts_persona_first() -> None:
    instructions = StructuredUserInstructions(
        domain="d",
        reason_for_call="r",
        known_info=None,
        unknown_info="u",
        task_instructions="t",
    )
    scenario = UserScenario(persona="Calm.\nPatient.", instructions=instructions)
    assert scenario.render() == (
        "Persona:\n\tCalm.\n\tPatient.\nInstructions:\n\tDomain: d\n\tReason for call:\n\t\tr\n\tUnknown info:\n\t\tu\n\tTask instructions:\n\t\tt"
    )


def test_scenario_render_with_plain_string_instructions() -> None:
    assert UserScenario(instructions="Line one.\nLine two.").render() == "Instructions:\n\tLine one.\n\tLine two."


# --------------------------------------------------------------------------- messages


MESSAGES: list[Message] = [
    SystemMessage(content="system text"),
    AssistantMessage(content="Hi! How can I help you today?", cost=0.0),
    UserMessage(content="Switch it on.", usage={"prompt_tokens": 3, "completion_tokens": 2}),
    AssistantMessage(tool_calls=[ToolCall(id="c1", name="increment", arguments={"name": "a", "by": 2})]),
    ToolMessage(id="c1", content='{"value": "2"}'),
    UserMessage(tool_calls=[ToolCall(id="u1", name="switch_lamp", arguments={"on": True}, requestor="user")]),
    ToolMessage(id="u1", content="ok", requestor="user", error=False),
]


def test_messages_round_trip_tagged_by_role() -> None:
    data = converter.unstructure(MESSAGES, list[Message])
    assert [d["role"] for d in data] == ["system", "assistant", "user", "assistant", "tool", "user", "tool"]
    assert converter.structure(json.loads(json.dumps(data)), list[Message]) == MESSAGES


def test_tool_call_message_unstructures_nested_calls() -> None:
    data = unstructure(MESSAGES[3])
    assert data["tool_calls"] == [{"id": "c1", "name": "increment", "arguments": {"name": "a", "by": 2}, "requestor": "assistant"}]


def test_message_without_role_is_refused() -> None:
    with pytest.raises(TaskFileError):
        structure([{"content": "no role"}], list[Message], source="inline")


def test_message_with_extra_key_is_refused() -> None:
    with pytest.raises(TaskFileError, match=r"extra fields found \(mood\) @ \$\[0\]"):
        structure([{"role": "user", "content": "x", "mood": "sad"}], list[Message], source="inline")


def test_content_hash_tells_int_from_float_and_ignores_key_order() -> None:
    assert content_hash({"a": 1, "b": 2}) == content_hash({"b": 2, "a": 1})
    assert content_hash({"a": 1}) != content_hash({"a": 1.0})
