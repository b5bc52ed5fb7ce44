"""What a failed check says: ACTION (expected call, closest calls and the keys that differ), DB (the records that
differ) and ENV_ASSERTION (expected against returned); and task ids listed in reading order everywhere."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from plugin_factory import needs_report
from test_cli import invoke
from toy_domain import TASKS, ToyDomain

from bench_kernel import DomainOptions, build_environment, task_id_key
from bench_kernel.evaluation.evaluator import action_component, action_matches, db_component, env_assertion_component, replay_gold
from bench_kernel.schema.messages import AssistantMessage, ToolCall
from bench_kernel.schema.tasks import Action
from bench_kernel.tasks.domain import DomainData


@pytest.fixture
def data() -> DomainData:
    return ToyDomain().load(DomainOptions())


def calls(*pairs: tuple[str, dict[str, Any]]) -> list[AssistantMessage]:
    return [AssistantMessage(tool_calls=[ToolCall(id=f"c{n}", name=name, arguments=args)]) for n, (name, args) in enumerate(pairs)]


def action(arguments: dict[str, Any], compare_args: list[str] | None = None) -> Action:
    return Action(action_id="a1", name="book", arguments=arguments, compare_args=compare_args)


def test_a_met_action_check_says_what_was_expected() -> None:
    check = action_component([action({"id": "X", "n": 2})], calls(("book", {"id": "X", "n": 2}))).checks[0]
    assert check.met and check.detail == 'expected book(id="X", n=2), compared on the keys the call gives: called'


def test_a_wrong_argument_names_the_closest_call_and_the_keys_that_differ() -> None:
    messages = calls(("book", {"id": "Y", "n": 3}), ("book", {"id": "X", "n": 3}), ("look", {"id": "X"}))
    check = action_component([action({"id": "X", "n": 2}, ["id", "n"])], messages).checks[0]
    assert not check.met
    assert check.detail == (
        'expected book(id="X", n=2), compared on id, n; closest calls: book(id="X", n=3) differs on n; book(id="Y", n=3) differs on id, n'
    )


def test_a_key_the_gold_lacks_is_named_when_the_call_keys_are_compared() -> None:
    check = action_component([action({"id": "X"})], calls(("book", {"id": "X", "note": "hi"}))).checks[0]
    assert not check.met and check.detail.endswith('closest call: book(id="X", note="hi") differs on note (not expected)')


def test_a_tool_never_called_says_so_and_lists_what_was_called() -> None:
    assert action_component([action({"id": "X"})], calls(("look", {"id": "X"}))).checks[0].detail.endswith("never called (tools called: look)")
    assert action_component([action({"id": "X"})], []).checks[0].detail.endswith("never called (no tool called)")


def test_many_calls_of_the_tool_show_the_three_closest() -> None:
    messages = calls(*[("book", {"id": f"Z{n}"}) for n in range(5)])
    detail = action_component([action({"id": "X"})], messages).checks[0].detail
    assert detail.count("differs on id") == 3 and detail.endswith("(and 2 more calls of book)")


@pytest.mark.parametrize("compare_args", [None, [], ["id"], ["id", "n"], ["missing"]])
@pytest.mark.parametrize("arguments", [{"id": "X", "n": 2}, {"id": "X"}, {"id": "Y", "n": 2}, {"n": 2, "extra": 1}, {}])
def test_details_never_change_whether_a_check_is_met(compare_args: list[str] | None, arguments: dict[str, Any]) -> None:
    gold = action({"id": "X", "n": 2}, compare_args)
    check = action_component([gold], calls(("book", arguments))).checks[0]
    assert check.met is action_matches(gold, ToolCall(id="c", name="book", arguments=arguments))
    assert check.detail.endswith(": called") is check.met


def test_a_failed_db_check_names_the_records_and_fields_that_differ(data: DomainData) -> None:
    task = data.task("inc-a")
    gold = replay_gold(data, task)
    env = build_environment(data, task)
    env.execute(ToolCall(id="c", name="increment", arguments={"name": "b"}))
    check = db_component(env, gold).checks[0]
    assert not check.met
    assert check.detail.endswith("2 records differ: counters/a: value differs; counters/b: value differs")
    env.execute(ToolCall(id="d", name="increment", arguments={"name": "a"}))
    assert db_component(env, gold).checks[0].detail.endswith("1 record differs: counters/b: value differs")


def test_a_failed_user_db_check_names_its_records(data: DomainData) -> None:
    lamp = data.task("lamp")
    checks = db_component(build_environment(data, lamp), replay_gold(data, lamp)).checks
    assert [(c.subject, c.met) for c in checks] == [("agent db", True), ("user db", False)]
    assert checks[1].detail.endswith("1 record differs: device/lamp: on differs")


def test_a_failed_env_assertion_says_what_it_expected_and_got(data: DomainData) -> None:
    lamp = data.task("lamp")
    check = env_assertion_component(build_environment(data, lamp), lamp).checks[0]
    assert not check.met and check.detail.startswith("returned False, expected True")


def test_task_ids_sort_as_numbers_and_naturally() -> None:
    ids = ["task_10", "10", "b", "2", "task_9", "1", "[x]a|12", "[x]a|3"]
    assert sorted(ids, key=task_id_key) == ["1", "2", "10", "[x]a|3", "[x]a|12", "b", "task_9", "task_10"]


NUMBERED = [{**TASKS[n % 2], "id": task_id} for n, task_id in enumerate(["10", "2", "1", "task_10", "task_9"])]


def test_listings_give_task_ids_in_reading_order(use_plugins: Callable[..., None]) -> None:
    use_plugins(tasks=NUMBERED)
    listed = invoke("tasks", "--format", "json")
    assert [r["task_id"] for r in json.loads(listed.stdout)] == ["1", "2", "10", "task_9", "task_10"]
    checked = invoke("check", "--format", "json")
    assert [json.loads(line)["task_id"] for line in checked.stdout.splitlines()] == ["1", "2", "10", "task_9", "task_10"]


@needs_report()
def test_reports_give_task_ids_in_reading_order(use_plugins: Callable[..., None], tmp_path: Path) -> None:
    use_plugins(tasks=NUMBERED, report=True)
    db = tmp_path / "runs.db"
    ran = invoke("run", "--db", str(db), "--format", "none", "--run-id", "oracle")
    assert ran.exit_code == 0, ran.output
    report = json.loads(invoke("report", "oracle", "--db", str(db), "--format", "json").stdout)
    assert [t["task_id"] for t in report["tasks"]] == ["1", "2", "10", "task_9", "task_10"]  # bench compare's: bench-report's tests
