"""The conformance kit catches each kind of broken domain (and passes the toy domain)."""

from __future__ import annotations

from typing import Any

import attrs
import pytest
from click.testing import CliRunner
from toy_domain import TASKS, CounterTools, ToyDomain, ToyPlugin

from bench_kernel import (
    ConfigError,
    DomainData,
    DomainOptions,
    PluginError,
    RunConfig,
    State,
    ToolKind,
    check_tasks,
    collect,
    get_plugin_manager,
    hookimpl,
    render_check,
    tool,
)
from bench_kernel.run.runner import load_domain
from bench_kernel.testing import (
    check_do_nothing_fails,
    check_gold_replays,
    check_registration,
    check_shared_records,
    check_tasks_load,
    check_tool_schemas,
    cli,
)


def toy(*tasks: dict[str, Any], toolkit: type = CounterTools) -> DomainData:
    data = ToyDomain(tasks=list(tasks or TASKS)).load(DomainOptions())
    return attrs.evolve(data, agent_toolkit=toolkit)


def task(task_id: str, actions: list[dict[str, Any]], basis: list[str]) -> dict[str, Any]:
    return {"id": task_id, "user_scenario": {"instructions": "Do it."}, "evaluation_criteria": {"actions": actions, "reward_basis": basis}}


def test_the_toy_domain_conforms() -> None:
    data = toy()
    for check in (check_tasks_load, check_tool_schemas, check_gold_replays, check_do_nothing_fails, check_shared_records):
        assert check(data) == [], check.__name__


class InPlaceTools(CounterTools):
    @tool(ToolKind.WRITE)
    def bump(self, name: str) -> dict:
        """Add one, editing the shared record in place (the bug the kit must catch).

        Args:
            name: The counter's name.
        """
        record = self.state.counters[name]
        record["value"] += 1
        return record


def test_a_tool_that_edits_a_shared_record_in_place_is_caught_naming_it() -> None:
    data = toy(task("bump", [{"action_id": "1", "name": "bump", "arguments": {"name": "a"}}], ["DB"]), toolkit=InPlaceTools)
    assert check_shared_records(data) == [
        f"tool 'bump' (InPlaceTools in {__name__}) edits a shared record in place: task 'bump', gold action 1: changed "
        "record 'a' of table 'counters', which every conversation of a run shares. Fix: change a private copy (`record "
        "= self.state.counters.edit(key)`) or assign a new record (`self.state.counters[key] = ...`); never change what "
        "`table[key]` returns"
    ]


class BackdoorTools(CounterTools):
    @tool(ToolKind.WRITE)
    def reset(self, name: str) -> str:
        """Reset a counter through the shared records themselves (no watched read sees it).

        Args:
            name: The counter's name.
        """
        self.state.counters.base.records[name]["value"] = 0
        return "reset"


def test_an_edit_no_watched_call_saw_is_still_caught_by_table() -> None:
    data = toy(task("reset", [{"action_id": "1", "name": "reset", "arguments": {"name": "b"}}], ["DB"]), toolkit=BackdoorTools)
    assert check_shared_records(data) == [
        "table 'counters': a shared record was edited in place outside the tool calls the kit watched. Fix: change a "
        "private copy (`record = self.state.counters.edit(key)`) or assign a new record (`self.state.counters[key] = "
        "...`); never change what `table[key]` returns"
    ]


def test_a_gold_action_that_fails_is_caught() -> None:
    data = toy(task("ghost", [{"action_id": "1", "name": "increment", "arguments": {"name": "zzz"}}], ["DB"]))
    assert check_gold_replays(data) == ["task 'ghost': gold action failed: 1 increment: Error: Counter zzz not found"]


def test_a_task_passed_by_doing_nothing_is_caught_unless_declared() -> None:
    data = toy(task("read-only", [{"action_id": "1", "name": "get_counter", "arguments": {"name": "b"}}], ["DB"]))
    assert check_do_nothing_fails(data) == ["task 'read-only' is passed by doing nothing (declare it in do_nothing_passes if intended)"]
    assert check_do_nothing_fails(data, {"read-only"}) == []


class MisdocumentedTools(CounterTools):
    @tool(ToolKind.READ)
    def peek(self, name: str) -> dict:
        """Read a counter.

        Args:
            counter: Not a parameter of this tool.
        """
        return self.state.counters[name]


def test_a_docstring_that_does_not_match_the_signature_is_caught() -> None:
    MisdocumentedTools.specs.cache_clear()
    problems = check_tool_schemas(toy(toolkit=MisdocumentedTools))
    assert len(problems) == 1 and problems[0].startswith("MisdocumentedTools: ") and "counter" in problems[0]


def test_duplicate_ids_and_missing_plugins_are_caught() -> None:
    data = toy()
    assert check_tasks_load(attrs.evolve(data, tasks=data.tasks + data.tasks[:1])) == ["duplicate task id 'inc-a'"]
    assert check_registration("no-such-plugin")[0].startswith("no entry point 'no-such-plugin'")


def test_bench_check_reports_a_shared_record_edited_in_place_on_its_task_and_counts_tasks() -> None:
    bump = task("bump", [{"action_id": "1", "name": "bump", "arguments": {"name": "a"}}], ["DB"])
    data = toy(bump, *TASKS, toolkit=InPlaceTools)
    results = check_tasks(data)
    assert [r["task_id"] for r in results] == ["bump", "inc-a", "lamp", "read-b"]
    assert [r["task_id"] for r in results if not r["ok"]] == ["bump"]
    summary = render_check(data, results)
    assert summary.splitlines()[0] == "toy: 4 tasks, gold replay ok for 3, failing 1"
    assert "  FAIL bump: tool 'bump' (InPlaceTools in" in summary and "self.state.counters.edit(key)" in summary


def test_bench_check_reports_an_unwatched_edit_apart_from_the_tasks() -> None:
    data = toy(task("reset", [{"action_id": "1", "name": "reset", "arguments": {"name": "b"}}], ["DB"]), toolkit=BackdoorTools)
    results = check_tasks(data)
    assert [(r["task_id"], r["ok"]) for r in results] == [("reset", True), (None, False)]
    summary = render_check(data, results)
    assert summary.splitlines()[0] == "toy: 1 tasks, gold replay ok for 1, failing 0"
    assert "  FAIL (domain): a shared record of table 'counters' was edited in place outside the tool calls" in summary


def test_bench_check_and_tasks_refuse_a_named_plugin_that_fails(monkeypatch: Any) -> None:
    from bench_kernel.run import checks

    class Broken:
        @hookimpl
        def register_domains(self, register: Any) -> None:
            raise RuntimeError("cannot read my data")

    monkeypatch.setattr(checks, "get_plugin_manager", lambda selected=None: get_plugin_manager([], extra=[("broken", Broken())]))
    for command in ("check", "tasks"):
        result = CliRunner().invoke(cli, [command, "--plugin", "broken"])
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert "plugin 'broken' failed: registration failed: RuntimeError: cannot read my data" in result.output


# --------------------------------------------------------------------------- data that does not fit is refused at load


def load_with(domain: ToyDomain, **config: Any) -> Any:
    registry = collect(get_plugin_manager([], extra=[("toy", ToyPlugin(domain))]))
    return load_domain(registry, RunConfig(domain="toy", **config))


def test_tasks_naming_functions_the_domain_lacks_are_refused_at_load() -> None:
    foreign = task("book", [{"action_id": "1", "name": "book_reservation", "arguments": {"user_id": "x"}}], ["DB"])
    wrong_args = task("inc", [{"action_id": "1", "name": "increment", "arguments": {"name": "a", "amount": 2}}], ["DB"])
    with pytest.raises(ConfigError) as caught:
        load_with(ToyDomain(tasks=[foreign, wrong_args]))
    message = str(caught.value)
    assert "do not fit the toy domain (is this another domain's data?)" in message
    assert "task 'book' names book_reservation, which CounterTools does not have" in message
    assert "task 'inc' calls increment with arguments it does not take: amount" in message


def test_a_domain_that_cannot_read_its_data_is_one_clean_error() -> None:
    @attrs.define(kw_only=True)
    class Fragile(ToyDomain):
        def load(self, options: DomainOptions) -> DomainData:
            raise ValueError("toy db: unknown tables ['flights']")

    with pytest.raises(ConfigError, match=r"domain 'toy' \(plugin 'toy'\) could not load .*unknown tables \['flights'\]"):
        load_with(Fragile())


def test_a_tool_whose_docstring_does_not_match_fails_at_load_naming_it() -> None:
    @attrs.define(kw_only=True)
    class Misdocumented(ToyDomain):
        def load(self, options: DomainOptions) -> DomainData:
            return attrs.evolve(super().load(options), agent_toolkit=MisdocumentedTools)

    MisdocumentedTools.specs.cache_clear()
    with pytest.raises(PluginError, match=r"plugin 'toy': domain 'toy', toolkit MisdocumentedTools: tool 'peek'"):
        load_with(Misdocumented())


def test_bench_check_reports_and_compares_the_reference_hash_of_the_user_state(tmp_path: Any) -> None:
    import hashlib
    import json

    from bench_kernel.run.checks import compare_expected

    def device_hash(state: Any) -> str:
        return hashlib.sha256(json.dumps(state.to_dict(), sort_keys=True).encode()).hexdigest()

    data = attrs.evolve(toy(), reference_user_hash=device_hash)
    results = {r["task_id"]: r for r in check_tasks(data)}
    lamp_on = device_hash(State.from_records({"device": {"lamp": {"on": True}}}))
    assert results["lamp"]["gold_user_db_hash"] == lamp_on
    assert results["lamp"]["gold_user_state_hash"] != lamp_on  # the kernel's own hash is kept beside it
    expected = {
        "domains": {
            "toy": {"initial_user_db_hash": device_hash(data.user_state), "tasks": {"lamp": {"gold_user": lamp_on}, "inc-a": {"gold_user": "0" * 64}}}
        }
    }
    path = tmp_path / "expected.json"
    path.write_text(json.dumps(expected))
    lines = compare_expected(data, list(results.values()), path)
    assert "expected hashes: 1 of 2 gold user DB hashes match (expected.json)" in lines
    assert "initial user DB hash matches" in lines
