"""Gold replays as checks: a tool that edits a shared record in place or is not deterministic is found on the call that
shows it, named with its task and the fix, by `bench check`, the conformance kit and `bench run` before it stores."""

from __future__ import annotations

import itertools
import sqlite3
import uuid
from pathlib import Path
from typing import Any

import attrs
import pytest
from toy_domain import TASKS, CounterTools, ToyDomain, ToyPlugin

from bench_kernel import ConfigError, DomainData, DomainOptions, PluginError, State, ToolKind, tool
from bench_kernel.evaluation.evaluator import replay_gold
from bench_kernel.evaluation.goldcheck import GoldChecker, abbreviated_pair
from bench_kernel.plugins import get_plugin_manager
from bench_kernel.run.checks import check_tasks
from bench_kernel.run.runner import RunConfig, run
from bench_kernel.testing import check_gold_deterministic, check_shared_records
from bench_kernel.tools.state import RecordWatch

_tickets = itertools.count(1)


class TicketTools(CounterTools):
    @tool(ToolKind.WRITE)
    def open_ticket(self, subject: str) -> dict:
        """Open a support ticket with a random id (the bug: two replays disagree).

        Args:
            subject: What the ticket is about.
        """
        ticket_id = f"T-{uuid.uuid4().hex[:8]}"
        self.state.counters[ticket_id] = {"value": 0, "subject": subject}
        return {"ticket_id": ticket_id, "subject": subject}

    @tool(ToolKind.WRITE)
    def log_visit(self, name: str) -> str:
        """Count a visit under a key from a process-wide counter, answering only "ok" (results never differ).

        Args:
            name: Who visited.
        """
        self.state.counters[f"visit-{next(_tickets)}"] = {"value": 1, "who": name}
        return "ok"

    @tool(ToolKind.WRITE)
    def bump(self, name: str) -> dict:
        """Add one by editing the shared record itself (the other bug).

        Args:
            name: The counter's name.
        """
        record = self.state.counters[name]
        record["value"] += 1
        return record

    @tool(ToolKind.READ)
    def counter_names(self) -> list:
        """Every counter's name."""
        return sorted(self.state.counters)

    @tool(ToolKind.READ)
    def total(self) -> int:
        """The sum of every counter (a scan of the table)."""
        return sum(record["value"] for record in self.state.counters.values())

    def seed_counters(self) -> None:
        """Initialization action: every counter starts at ten, edited in place (a set-up that corrupts the data)."""
        for record in self.state.counters.values():
            record["value"] = 10


def task(task_id: str, *actions: tuple[str, dict[str, Any]], setup: list[str] | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {
        "id": task_id,
        "user_scenario": {"instructions": "Do it."},
        "evaluation_criteria": {
            "actions": [{"action_id": str(i), "name": name, "arguments": args} for i, (name, args) in enumerate(actions, 1)],
            "reward_basis": ["DB"],
        },
    }
    if setup:
        found["initial_state"] = {"initialization_actions": [{"env_type": "assistant", "func_name": name, "arguments": {}} for name in setup]}
    return found


def toy(*tasks: dict[str, Any]) -> DomainData:
    return attrs.evolve(ToyDomain(tasks=list(tasks)).load(DomainOptions()), agent_toolkit=TicketTools)


def test_a_watch_finds_and_undoes_an_edit_of_a_record_it_handed_out() -> None:
    watch = RecordWatch()
    pristine = State.from_records({"counters": {"a": {"value": 0}, "b": {"value": 1}, "c": {"value": 2}}})
    watched = pristine.watched(watch)
    state = watched.fork()
    state.counters["a"]["value"] = 5  # handed out, then changed
    _ = state.counters["b"]
    private = state.counters.edit("c")
    private["value"] = 99  # the overlay's own copy: no finding
    base = pristine.counters.base
    assert watch.changed() == [(base, "a")] and watch.names[base] == "counters"
    assert watch.restore(base, "a") and base.records["a"] == {"value": 0} and watch.changed() == []
    for record in watched.fork().counters.values():  # a scan of the shared records hands out every one
        record["value"] += 1
    assert watch.changed() == [(base, "a"), (base, "b"), (base, "c")]
    assert all(watch.restore(base, key) for key in "abc") and pristine.verify_untouched() == []


def test_first_difference_compares_the_changes_of_two_forks() -> None:
    pristine = State.from_records({"t": {"x": {"v": 1}}})
    one, two = pristine.fork(), pristine.fork()
    assert one.first_difference(two) is None
    one.t["x"] = {"v": 1}  # the same content written anew
    assert one.first_difference(two) is None
    two.t["y"] = {"v": 2}
    assert one.first_difference(two) == ("t", "y", None, {"v": 2})


def test_abbreviated_pair_shows_where_two_results_differ() -> None:
    a = '{"status": "open", "customer": "c-1001", "ticket_id": "T-5f2c9a01", "subject": "refund"}'
    b = a.replace("5f2c9a01", "0b77e1d2")
    left, right = abbreviated_pair(a, b, width=24)
    assert left == '…": "T-5f2c9a01", "subjec…' and right == '…": "T-0b77e1d2", "subjec…'
    assert abbreviated_pair("ok", "ok") == ("ok", "ok")


def test_a_random_id_is_named_by_the_call_whose_results_differ() -> None:
    data = toy(task("open", ("get_counter", {"name": "a"}), ("open_ticket", {"subject": "refund"})))
    checker = GoldChecker(data)
    fault = checker.check(data.tasks[0]).fault
    assert checker.faults() == [fault]
    assert fault is not None and fault.tool == f"'open_ticket' (TicketTools in {__name__})"
    message = fault.describe()
    assert message.startswith(
        f"tool 'open_ticket' (TicketTools in {__name__}) is not deterministic: task 'open', gold action 2: returned '{{\"ticket_id\": \"T-"
    )
    assert message.count('"subject": "refund"}\'') == 2  # short results are shown whole
    assert "in one gold replay from a fresh state and" in message
    assert message.endswith(
        "Fix: derive new ids and values from the state (e.g. a counter over the table's keys, or a "
        "hash of the arguments), never from uuid4, random or the clock"
    )


def test_states_that_differ_behind_equal_results_name_the_call_after_which_they_differ() -> None:
    # counter_names, a read, is the first call whose result differs: the write before it is named, not the read
    data = toy(task("visit", ("get_counter", {"name": "a"}), ("log_visit", {"name": "ann"}), ("counter_names", {})))
    fault = GoldChecker(data).check(data.tasks[0]).fault
    assert fault is not None and fault.step == "gold action 2" and fault.tool is not None and "'log_visit'" in fault.tool
    assert fault.describe().startswith(
        f"tool 'log_visit' (TicketTools in {__name__}) is not deterministic: task 'visit', gold action 2: left record 'visit-"
    )
    assert (
        'of table \'counters\' as \'{"value":1,"who":"ann"}\' in one gold replay from a fresh state and as absent in another (every result equal)'
    ) in fault.describe()


def test_an_in_place_edit_is_pinned_to_its_call_even_behind_a_scan_and_put_back() -> None:
    data = toy(task("sum", ("total", {})), task("bump", ("total", {}), ("bump", {"name": "b"})), task("sum-again", ("total", {})))
    data.agent_state.content_hash()
    checker = GoldChecker(data)
    assert [checker.check(t).fault for t in data.tasks] == [None, None, None]
    [fault] = checker.faults()
    assert (fault.task_id, fault.step, fault.table) == ("bump", "gold action 2", "counters")
    assert fault.describe().startswith(
        f"tool 'bump' (TicketTools in {__name__}) edits a shared record in place: task "
        "'bump', gold action 2: changed record 'b' of table 'counters', which every "
        "conversation of a run shares. Fix: change a private copy"
    )
    assert data.agent_state.verify_untouched() == []  # put back


def test_a_set_up_that_edits_in_place_is_named_as_the_set_up() -> None:
    data = toy(task("seeded", ("get_counter", {"name": "a"}), setup=["seed_counters"]))
    checker = GoldChecker(data)
    checker.check(data.tasks[0])
    [fault] = checker.faults()
    assert fault.tool is None
    assert fault.describe().startswith(
        "the set-up of task 'seeded' edits a shared record in place: changed record 'a' of table 'counters', record 'b' of table 'counters'"
    )


def test_the_shipped_toy_tasks_are_sound_and_the_kit_names_each_fault() -> None:
    assert all(GoldChecker(d).check(t).fault is None for d in [ToyDomain().load(DomainOptions())] for t in d.tasks)
    data = toy(task("open", ("open_ticket", {"subject": "refund"})), task("bump", ("bump", {"name": "a"})))
    assert [p.split(":")[0] for p in check_gold_deterministic(data)] == [f"tool 'open_ticket' (TicketTools in {__name__}) is not deterministic"]
    assert [p.split(":")[0] for p in check_shared_records(data)] == [f"tool 'bump' (TicketTools in {__name__}) edits a shared record in place"]


@attrs.define(kw_only=True)
class TicketDomain(ToyDomain):
    deferred: bool = False

    def load(self, options: DomainOptions) -> DomainData:
        data = attrs.evolve(super().load(options), agent_toolkit=TicketTools)
        if not self.deferred:
            return data
        return attrs.evolve(data, agent_state=State.deferred({"counters": None}, lambda: {"counters": {"a": {"value": 0}, "b": {"value": 41}}}))


def _conversations(db: Path) -> int:
    if not db.exists():
        return 0
    with sqlite3.connect(db) as connection:
        return int(connection.execute("select count(*) from conversations").fetchone()[0])


@pytest.mark.parametrize("deferred", [False, True], ids=["built", "deferred"])
def test_a_run_refuses_a_faulty_tool_before_storing_any_conversation_even_with_allow_broken_tasks(tmp_path: Path, deferred: bool) -> None:
    tasks = [
        *TASKS,
        task("open", ("open_ticket", {"subject": "refund"})),
        task("bump", ("bump", {"name": "a"})),
        task("bump-b", ("bump", {"name": "b"})),
    ]
    plugins = get_plugin_manager([], extra=[("tickets", ToyPlugin(TicketDomain(tasks=tasks, deferred=deferred)))])
    db = tmp_path / "runs.db"
    with pytest.raises(PluginError) as caught:
        run(RunConfig(domain="toy", allow_broken_tasks=True, concurrency=2), db, plugins=plugins)
    message = str(caught.value)
    assert message.startswith(
        "plugin 'tickets': domain 'toy' cannot be run, 3 of its tasks show a tool that leaves "
        "them unscorable whatever the agent does (as `bench check` reports; no conversation is stored)"
    )
    assert f"tool 'open_ticket' (TicketTools in {__name__}) is not deterministic: task 'open', gold action 1" in message
    assert f"tool 'bump' (TicketTools in {__name__}) edits a shared record in place: task 'bump', gold action 1" in message
    assert "(the same in task 'bump-b')" in message and "self.state.counters.edit(key)" in message
    assert "never from uuid4, random or the clock" in message
    assert _conversations(db) == 0


def test_a_run_of_only_the_sound_tasks_plays(tmp_path: Path) -> None:
    tasks = [*TASKS, task("open", ("open_ticket", {"subject": "refund"}))]
    plugins = get_plugin_manager([], extra=[("tickets", ToyPlugin(TicketDomain(tasks=tasks)))])
    summary = run(RunConfig(domain="toy", task_ids=["inc-a", "read-b"]), tmp_path / "runs.db", plugins=plugins)
    assert summary.status == "complete" and _conversations(tmp_path / "runs.db") == 4


def test_without_a_plugin_name_the_refusal_is_a_config_error() -> None:
    from bench_kernel.run.planning import gold_failures

    data = toy(task("open", ("open_ticket", {"subject": "refund"})))
    with pytest.raises(ConfigError, match=r"^domain 'toy' cannot be run, 1 of its tasks"):
        gold_failures(data, data.tasks)


_increments: list[str] = []


class CountingTools(TicketTools):
    @tool(ToolKind.WRITE)
    def increment(self, name: str, by: int = 1) -> dict:
        """Add to a counter, noting the call (how many gold replays `bench check` makes).

        Args:
            name: The counter's name.
            by: How much to add.
        """
        _increments.append(name)
        return super().increment(name, by)


def test_bench_check_shows_the_checkers_replays_and_replays_anew_only_after_an_edit_in_place() -> None:
    sound = attrs.evolve(toy(task("inc", ("increment", {"name": "a"}))), agent_toolkit=CountingTools)
    _increments.clear()
    [row] = check_tasks(sound)
    assert len(_increments) == 2  # the checker's two replays, no third
    gold = replay_gold(sound, sound.tasks[0], with_reference=True)
    assert row["ok"] and (row["gold_db_hash"], row["gold_state_hash"]) == (gold.agent_hash, gold.agent_hash)
    spoilt = attrs.evolve(toy(task("bump", ("bump", {"name": "b"})), task("inc", ("increment", {"name": "b"}))), agent_toolkit=CountingTools)
    _increments.clear()
    bump, inc = check_tasks(spoilt)
    assert bump["tool_fault"] is not None and inc["ok"] and inc["tool_fault"] is None
    assert len(_increments) == 4  # the checker's two, its replay naming the edit, and one anew (the others saw the edit)
    assert inc["gold_state_hash"] == replay_gold(spoilt, spoilt.tasks[1]).agent_hash
