"""`bench audit`: every flag fires on a task made to have it and stays silent on one made not to, the JSON document,
the CLI's formats and errors, the cache, `bench run --exclude-flagged` and the validity card of a run's report."""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import json
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from bench_trust.audit import FLAGS, cached_flags, static_flags
from bench_trust.audit.auditing import FLOORS, audit_domain, audit_tasks
from bench_trust.audit.cache import TABLE
from bench_trust.audit.runs import EXCLUDED_EVENT, STATIC_FLAGS_EVENT
from click.testing import CliRunner

import bench_kernel
from bench_kernel import (
    Domain,
    DomainData,
    DomainOptions,
    Registry,
    Report,
    RunConfig,
    State,
    ToolError,
    ToolKind,
    Toolkit,
    build_report,
    canonical_json,
    collect,
    get_plugin_manager,
    load_domain,
    load_profile,
    open_store,
    run_registry,
    tool,
)
from bench_kernel.testing import bench_cli

needs_mock = pytest.mark.skipif(importlib.util.find_spec("bench_mock") is None, reason="the mock domain (bench-mock) is not installed")

DB_NOTE = ": DB checks the state the writes leave, not the calls (a read the task needs is never checked)"


class LedgerTools(Toolkit):
    """Accounts the agent opens, closes and annotates."""

    @tool(ToolKind.READ)
    def get_account(self, account_id: str) -> dict:
        """Read an account.

        Args:
            account_id: The account's id.
        """
        if account_id not in self.state.accounts:
            raise ToolError(f"no account {account_id}")
        return self.state.accounts[account_id]

    @tool(ToolKind.WRITE)
    def open_account(self, owner: str) -> dict:
        """Open an account.

        Args:
            owner: Its owner.
        """
        account_id = f"acc-{len(self.state.accounts) + 1}"
        self.state.accounts[account_id] = {"owner": owner, "open": True}
        return {"account_id": account_id}

    @tool(ToolKind.WRITE)
    def close_account(self, account_id: str) -> str:
        """Close an account.

        Args:
            account_id: The account's id.
        """
        if account_id not in self.state.accounts or not self.state.accounts[account_id]["open"]:
            raise ToolError(f"no open account {account_id}")
        self.state.accounts.edit(account_id)["open"] = False
        return "closed"

    @tool(ToolKind.WRITE)
    def add_note(self, account_id: str, text: str) -> str:
        """Note something about an account (never checked).

        Args:
            account_id: The account's id.
            text: The note.
        """
        self.state.notes[str(len(self.state.notes))] = {"account": account_id, "text": text}
        return "noted"

    @tool(ToolKind.WRITE)
    def stamp(self) -> str:
        """Write a fresh reference number (a new one each time)."""
        reference = uuid.uuid4().hex
        self.state.notes[reference] = {"account": None, "text": reference}
        return reference

    def is_closed(self, account_id: str) -> bool:
        """Assertion: the account exists and is closed."""
        return account_id in self.state.accounts and not self.state.accounts[account_id]["open"]


def _task(task_id: str, actions: list[tuple[str, dict[str, Any]]] | None, basis: list[str], **criteria: Any) -> dict[str, Any]:
    instructions = {"domain": "ledger", "reason_for_call": f"Task {task_id}.", "task_instructions": "Ask for it."}
    if actions is not None:
        criteria["actions"] = [{"action_id": str(i), "name": name, "arguments": args} for i, (name, args) in enumerate(actions)]
    return {"id": task_id, "user_scenario": {"instructions": instructions}, "evaluation_criteria": {"reward_basis": basis, **criteria}}


CLOSE = ("close_account", {"account_id": "acc-1"})
TASKS = [
    _task("clean", [CLOSE], ["DB", "ACTION"]),
    _task("unscored", [CLOSE], ["DB"]),
    _task("empty", None, ["COMMUNICATE"]),
    _task("nl-ignored", [CLOSE], ["DB", "ACTION"], nl_assertions=["The agent is polite."]),
    _task("nothing-to-say", [CLOSE], ["DB", "ACTION", "COMMUNICATE"]),
    _task("unknown-id", [("add_note", {"account_id": "acc-404", "text": "x"})], ["DB", "ACTION"]),
    _task(
        "new-id",
        [("open_account", {"owner": "bo"}), ("close_account", {"account_id": "acc-2"})],
        ["DB", "ACTION"],
        env_assertions=[{"env_type": "assistant", "func_name": "is_closed", "arguments": {"account_id": "acc-2"}}],
    ),
    _task(
        "unknown-in-assertion",
        [CLOSE],
        ["DB", "ACTION", "ENV_ASSERTION"],
        env_assertions=[{"env_type": "assistant", "func_name": "is_closed", "arguments": {"account_id": "acc-77"}}],
    ),
    _task("broken", [CLOSE, CLOSE], ["DB", "ACTION"]),
    _task("random", [("stamp", {})], ["ACTION"]),
    _task("read-only", [], ["DB"]),
    (COPY := _task("copy-a", [CLOSE, ("get_account", {"account_id": "acc-1"})], ["DB", "ACTION"])),
    {**COPY, "id": "copy-b"},
]
"""One task per flag (and its neighbours that must not have it)."""


@attrs.define(kw_only=True)
class LedgerDomain(Domain):
    """The audit's synthetic domain: one open account, its tasks given in memory."""

    name: str = "ledger"
    tasks: list[dict[str, Any]] = attrs.field(factory=lambda: list(TASKS))

    def load(self, options: DomainOptions) -> DomainData:
        """Build the data in memory (or the tasks of options.tasks_file)."""
        tasks = (
            bench_kernel.load_tasks(options.tasks_file, options.vocabulary)
            if options.tasks_file
            else bench_kernel.structure_tasks(self.tasks, options.vocabulary, source="ledger")
        )
        state = State.from_records({"accounts": {"acc-1": {"owner": "ann", "open": True}}, "notes": {}})
        return DomainData(name=self.name, tasks=tasks, policy="Help with accounts.", agent_toolkit=LedgerTools, agent_state=state, source="memory")


class LedgerPlugin:
    """Registers the ledger domain."""

    def __init__(self, tasks: list[dict[str, Any]] | None = None) -> None:
        self.domain = LedgerDomain(tasks=list(tasks or TASKS))

    @bench_kernel.hookimpl
    def register_domains(self, register: Callable[[Domain], None]) -> None:
        """The ledger."""
        register(self.domain)


def ledger(tasks: list[dict[str, Any]] | None = None) -> tuple[Registry, DomainData]:
    """The registry with the ledger domain, bench-trust and bench-judging (nothing else installed) and its loaded data."""
    registry = collect(get_plugin_manager(["trust", "judging"], extra=[("ledger", LedgerPlugin(tasks))]))
    return registry, load_domain(registry, RunConfig(domain="ledger"))


@pytest.fixture(scope="module")
def audits() -> dict[str, dict[str, Any]]:
    """The ledger's audit, by task id."""
    registry, data = ledger()
    return {a["id"]: a for a in asyncio.run(audit_tasks(registry, data, data.tasks))}


# --------------------------------------------------------------------------- each flag fires, and only where it should

EXPECTED = {
    "clean": [],
    "unscored": ["actions_unscored"],
    "empty": ["passed_by_floor", "empty_criteria", "nl_outside_basis"],
    "nl-ignored": ["nl_outside_basis"],
    "nothing-to-say": ["nl_outside_basis"],
    "unknown-id": ["unknown_ids"],
    "new-id": [],
    "unknown-in-assertion": ["unknown_ids", "gold_fails"],
    "broken": ["gold_fails"],
    "random": ["nondeterministic"],
    "read-only": ["passed_by_floor"],
    "copy-a": ["duplicate"],
    "copy-b": ["duplicate"],
}


@pytest.mark.parametrize("task_id", list(EXPECTED))
def test_each_task_has_exactly_its_flags(audits: dict[str, dict[str, Any]], task_id: str) -> None:
    assert audits[task_id]["flags"] == EXPECTED[task_id]
    assert set(audits[task_id]["evidence"]) == set(EXPECTED[task_id])


def test_every_flag_is_shown_firing_and_silent() -> None:
    fired = {flag for flags in EXPECTED.values() for flag in flags}
    assert fired == set(FLAGS)
    assert all(any(flag not in flags for flags in EXPECTED.values()) for flag in FLAGS)


def test_the_evidence_names_what_is_wrong(audits: dict[str, dict[str, Any]]) -> None:
    evidence = {task_id: a["evidence"] for task_id, a in audits.items()}
    assert "add_note.account_id=acc-404" in evidence["unknown-id"]["unknown_ids"]
    assert "is_closed.account_id=acc-77" in evidence["unknown-in-assertion"]["unknown_ids"]
    assert "no open account acc-1" in evidence["broken"]["gold_fails"]
    assert "action 1 (stamp)" in evidence["random"]["nondeterministic"]
    assert evidence["copy-a"]["duplicate"] == "same content as task copy-b"
    assert "do-nothing, talk-only, refuse" in evidence["read-only"]["passed_by_floor"]
    assert "COMMUNICATE in the basis has nothing to check" in evidence["nothing-to-say"]["nl_outside_basis"]
    assert "1 NL assertion(s) not in the basis DB+ACTION" in evidence["nl-ignored"]["nl_outside_basis"]
    assert "close_account" in evidence["unscored"]["actions_unscored"]


def test_ceilings_and_floors(audits: dict[str, dict[str, Any]]) -> None:
    assert audits["clean"]["ceiling"] == 1.0
    assert audits["clean"]["floors"] == dict.fromkeys(FLOORS, 0.0)
    assert audits["read-only"]["floors"] == dict.fromkeys(FLOORS, 1.0)
    assert audits["unknown-in-assertion"]["ceiling"] == 0.0  # its assertion cannot hold: the oracle fails it too
    assert "the oracle scores 0" in audits["unknown-in-assertion"]["evidence"]["gold_fails"]


def test_nl_assertions_without_a_judge_are_null_never_a_pass() -> None:
    judged = _task("judged", [CLOSE], ["DB", "NL_ASSERTION"], nl_assertions=["The agent is polite."])
    registry, data = ledger([judged])
    [audit] = asyncio.run(audit_tasks(registry, data, data.tasks))
    assert audit["ceiling"] is None and audit["floors"] == dict.fromkeys(FLOORS)
    assert "no judge" in audit["notes"]["ceiling"]
    assert "passed_by_floor" not in audit["flags"] and "gold_fails" not in audit["flags"]


def test_static_flags_alone_need_no_conversation() -> None:
    _, data = ledger()
    assert static_flags(data.task("unscored"), data) == {"actions_unscored": "1 gold action(s) (close_account) while the basis is DB" + DB_NOTE}
    assert static_flags(data.task("clean"), data) == {}


# --------------------------------------------------------------------------- the cache


def test_audits_are_cached_by_content_and_data(tmp_path: Path) -> None:
    registry, data = ledger()
    store = open_store(tmp_path / "bench.db", registry.migrations)
    try:
        first = audit_domain(registry, data, data.tasks, store)
        assert store.db.execute(f"select count(*) from {TABLE}").fetchone()[0] == len(TASKS)
        # A cached audit is read back, not recomputed: mark one and see the mark come back.
        store.db.execute(f"update {TABLE} set audit_json = json_set(audit_json, '$.flags', json('[\"duplicate\"]')) where task_id = 'clean'")
        store.db.conn.commit()
        again = audit_domain(registry, data, data.tasks, store)
        assert {a["id"]: a["flags"] for a in again["tasks"]}["clean"] == ["duplicate"]
        assert cached_flags(store, data, data.task("unscored")) == first["tasks"][[a["id"] for a in first["tasks"]].index("unscored")]["evidence"]
        # A changed task is audited anew; --no-cache audits all anew and replaces the stored ones.
        changed = attrs.evolve(data.task("clean"), ticket="A new ticket.")
        assert cached_flags(store, data, changed) is None
        fresh = audit_domain(registry, data, data.tasks, store, reuse=False)
        assert {a["id"]: a["flags"] for a in fresh["tasks"]}["clean"] == []
    finally:
        store.close()


# --------------------------------------------------------------------------- the CLI


def invoke(*args: str) -> Any:
    return CliRunner().invoke(bench_cli(["trust"]), list(args), catch_exceptions=False)


@needs_mock
def test_the_json_document(tmp_path: Path) -> None:
    result = invoke("audit", "--plugin", "mock", "--db", str(tmp_path / "a.db"), "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert set(document) == {"domain", "data", "tasks", "summary"}
    assert document["domain"] == "mock" and len(document["data"]["fingerprint"]) == 64
    for audit in document["tasks"]:
        assert {"id", "ceiling", "floors", "flags", "evidence"} <= set(audit)
        assert set(audit["floors"]) == {"do-nothing", "talk-only", "refuse"}
        assert set(audit["evidence"]) == set(audit["flags"]) and set(audit["flags"]) <= set(FLAGS)
    summary = document["summary"]
    assert summary["tasks"] == 12 and summary["ceiling_mean"] == 1.0
    assert set(summary["flagged"]) == set(FLAGS) and set(summary["floor_means"]) == set(FLOORS)
    assert summary["any_flag"] == sum(bool(a["flags"]) for a in document["tasks"])


@needs_mock
def test_table_and_markdown_show_the_summary_and_the_flagged_tasks(tmp_path: Path) -> None:
    db = str(tmp_path / "a.db")
    table = invoke("audit", "--plugin", "mock", "--db", db)
    markdown = invoke("audit", "--plugin", "mock", "--db", db, "--format", "markdown")
    assert table.exit_code == 0 and markdown.exit_code == 0
    assert table.stdout.startswith("Audit of mock: 12 tasks, 9 flagged")
    assert re.search(r"^flag actions_unscored +9$", table.stdout, re.M) and "upgrade_by_email" in table.stdout
    assert markdown.stdout.startswith("## Audit of mock") and "| flag actions_unscored | 9 |" in markdown.stdout
    assert "## Flagged tasks" in markdown.stdout


def test_task_ids_sort_as_numbers(tmp_path: Path) -> None:
    tasks = [_task(str(n), [CLOSE], ["DB", "ACTION"]) for n in (10, 2, 1)]
    (tmp_path / "tasks.json").write_text(json.dumps(tasks))
    registry, data = ledger()
    options = DomainOptions(tasks_file=tmp_path / "tasks.json")
    data = attrs.evolve(data, tasks=LedgerDomain().load(options).tasks)
    document = audit_domain(registry, data, data.tasks, None)
    assert [a["id"] for a in document["tasks"]] == ["1", "2", "10"]


@needs_mock
def test_errors_are_one_clean_line(tmp_path: Path) -> None:
    unknown = CliRunner().invoke(bench_cli(["trust"]), ["audit", "--plugin", "no-such-plugin", "--db", str(tmp_path / "a.db")])
    assert unknown.exit_code == 1 and unknown.output.startswith("Error: ") and "Traceback" not in unknown.output
    (tmp_path / "bad.json").write_text('[{"id": 1}]')
    bad = CliRunner().invoke(
        bench_cli(["trust"]), ["audit", "--plugin", "mock", "--tasks-file", str(tmp_path / "bad.json"), "--db", str(tmp_path / "a.db")]
    )
    assert bad.exit_code == 1 and bad.output.startswith("Error: ") and "bad.json" in bad.output


@needs_mock
def test_a_duplicate_in_a_mock_task_file_is_found(tmp_path: Path) -> None:
    from importlib.resources import files

    mock_tasks = json.loads(files("bench_mock").joinpath("data", "tasks.json").read_text(encoding="utf-8"))
    copy = {**mock_tasks[0], "id": "copy_of_first"}
    (tmp_path / "tasks.json").write_text(json.dumps([*mock_tasks[:3], copy]))
    result = invoke("audit", "--plugin", "mock", "--tasks-file", str(tmp_path / "tasks.json"), "--db", str(tmp_path / "a.db"), "--format", "json")
    flagged = {a["id"]: a["evidence"].get("duplicate") for a in json.loads(result.stdout)["tasks"]}
    assert flagged == {
        mock_tasks[0]["id"]: "same content as task copy_of_first",
        "copy_of_first": f"same content as task {mock_tasks[0]['id']}",
        mock_tasks[1]["id"]: None,
        mock_tasks[2]["id"]: None,
    }


@needs_mock
def test_the_floor_agents_can_be_run(tmp_path: Path) -> None:
    for agent in ("talk-only", "refuse"):
        result = invoke(
            "run", "--plugin", "mock", "--agent", agent, "--db", str(tmp_path / "r.db"), "--format", "json", "--progress", "none", "--num-tasks", "3"
        )
        report = json.loads(result.stdout)
        assert result.exit_code == 0 and report["status"] == "complete"
        assert {t["mean_reward"] for t in report["tasks"]} == {0.0}


# --------------------------------------------------------------------------- runs: --exclude-flagged and the card


@needs_mock
def test_exclude_flagged_leaves_flagged_tasks_out_and_says_so(tmp_path: Path) -> None:
    db = str(tmp_path / "r.db")
    result = CliRunner().invoke(
        bench_cli(["mock"]),
        ["run", "--plugin", "mock", "--exclude-flagged", "actions_unscored", "--db", db, "--format", "json", "--progress", "lines"],
    )
    assert result.exit_code == 0, result.output
    header, _, _ = result.stderr.partition("conversations to run")
    assert "excluded 9 task(s) flagged actions_unscored by `bench audit`" in header
    report = json.loads(result.stdout)
    assert len(report["tasks"]) == 3 and {k: v for k, v in report["validity"]["excluded"].items() if k != "task_ids"} == {
        "flags": ["actions_unscored"],
        "tasks": 9,
    }
    assert len(report["validity"]["excluded"]["task_ids"]) == 9
    assert report["config"]["exclude_flagged"] == ["actions_unscored"]
    bad = CliRunner().invoke(bench_cli(["mock"]), ["run", "--plugin", "mock", "--exclude-flagged", "flaky", "--db", db])
    assert bad.exit_code == 1 and "unknown flag 'flaky' for --exclude-flagged (flags: passed_by_floor, actions_unscored" in bad.output
    # names split at commas, in the flags' own order whatever the command line's: one run, one id
    again = CliRunner().invoke(
        bench_cli(["mock"]),
        [
            "run",
            "--plugin",
            "mock",
            "--exclude-flagged",
            "duplicate,actions_unscored",
            "--exclude-flagged",
            "duplicate",
            "--db",
            db,
            "--format",
            "json",
            "--progress",
            "none",
        ],
    )
    assert again.exit_code == 0, again.output
    assert json.loads(again.stdout)["config"]["exclude_flagged"] == ["actions_unscored", "duplicate"]


@needs_mock
def test_exclude_flagged_in_a_run_blocking_bench_trust_says_it_is_blocked(tmp_path: Path) -> None:
    args = ["run", "--plugin", "no:trust", "--plugin", "mock", "--exclude-flagged", "gold_fails", "--db", str(tmp_path / "r.db")]
    result = CliRunner().invoke(bench_cli(["mock"]), args)
    assert result.exit_code == 1, result.output
    assert "(--exclude-flagged) comes from bench-trust, which this run blocks (--plugin no:trust)" in result.output
    assert "add --plugin trust" not in result.output and not (tmp_path / "r.db").exists()


def test_exclude_flagged_with_a_dynamic_flag_audits_and_caches_first(tmp_path: Path) -> None:
    tasks = [t for t in TASKS if t["id"] in ("clean", "read-only", "broken")]
    plugins = get_plugin_manager(["trust"], extra=[("ledger", LedgerPlugin(tasks))])
    config = RunConfig(domain="ledger", plugin_settings={"exclude_flagged": ["passed_by_floor", "gold_fails"]}, allow_broken_tasks=True)
    summary = bench_kernel.run(config, tmp_path / "r.db", plugins=plugins)
    store = open_store(tmp_path / "r.db")
    try:
        assert {r["task_id"] for r in store.conversations(summary.run_id)} == {"clean"}
        assert store.last_run_event(summary.run_id, (EXCLUDED_EVENT,))["tasks"] == {"read-only": ["passed_by_floor"], "broken": ["gold_fails"]}
        assert store.db.execute(f"select count(*) from {TABLE}").fetchone()[0] == 3
    finally:
        store.close()


def test_runs_keep_their_ids_with_the_option_a_plugin_setting() -> None:
    assert "exclude_flagged" not in RunConfig().identity()
    excluding = RunConfig(domain="mock", plugin_settings={"exclude_flagged": ["actions_unscored", "duplicate"]})
    assert excluding.identity()["exclude_flagged"] == ["actions_unscored", "duplicate"]
    # hashed as while the option was a field of the kernel's RunConfig (a top-level key, dropped while unset), so
    # the same command resumes a run begun before the move
    as_field = {**RunConfig(domain="mock").identity(), "exclude_flagged": ["actions_unscored", "duplicate"], "profile": load_profile(None).identity()}
    assert excluding.config_hash() == hashlib.sha256(canonical_json(as_field).encode()).hexdigest()


@needs_mock
def test_the_validity_card_in_every_format(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    summary = bench_kernel.run(RunConfig(plugins=["mock"], agent="talk-only"), db)
    store = open_store(db)
    try:
        assert store.last_run_event(summary.run_id, (STATIC_FLAGS_EVENT,))["flags"]["upgrade_by_email"] == {
            "actions_unscored": "2 gold action(s) (find_customer_by_email, change_plan) while the basis is DB" + DB_NOTE
        }
        card = stored_report(store, summary.run_id).card("validity")
        assert card["floors"]["do-nothing"] == {"pass_rate": 0.0, "n": 12, "source": "baseline arm"}
        assert card["floors"]["talk-only"] is None and card["ceiling"]["source"] == "gold replay"
        assert card["flagged"]["actions_unscored"] == 9 and card["flagged"]["passed_by_floor"] is None
        assert "run `bench audit --plugin mock` (with this --db) for passed_by_floor" in card["notes"][0]
    finally:
        store.close()
    assert invoke("audit", "--plugin", "mock", "--db", str(db)).exit_code == 0
    store = open_store(db)
    try:
        card = stored_report(store, summary.run_id).card("validity")
    finally:
        store.close()
    assert card["floors"]["talk-only"] == {"pass_rate": 0.0, "n": 12, "source": "bench audit"}
    assert card["ceiling"] == {"pass_rate": 1.0, "n": 12, "source": "bench audit"} and not card["notes"]
    assert card["flagged"]["passed_by_floor"] == 0
    assert json.loads(rendered(db, summary.run_id, "json"))["validity"] == card
    assert "Validity\n  floors (pass rate): do-nothing 0.000 (baseline arm, n=12), talk-only 0.000" in rendered(db, summary.run_id, "table")
    assert "## Validity\n- floors (pass rate)" in rendered(db, summary.run_id, "markdown")
    assert "validity.flagged.actions_unscored,9,,,12,0,tasks," in rendered(db, summary.run_id, "csv")


def stored_report(store: Any, run_id: str) -> Report:
    """The run's report with its plugins' cards, as `bench report` builds it."""
    return build_report(store, run_id, run_registry(store.run(run_id))[0])


def rendered(db: Path, run_id: str, fmt: str) -> str:
    result = invoke("report", run_id, "--db", str(db), "--format", fmt)
    assert result.exit_code == 0, result.output
    return str(result.stdout)


def test_the_database_walk_collects_every_key_and_id_like_scalar() -> None:
    from bench_trust.audit.flags import _walk

    class Code(str):
        pass

    found: set[str] = set()
    _walk({"users": {"u1": {"id": 7, "ok": True, "rate": 1.5, "tags": ["a", Code("b"), None, ("c", 8)], 3: {"x": False}}}}, found)
    assert found == {"users", "u1", "id", "7", "ok", "rate", "tags", "a", "b", "c", "8", "3", "x"}


def test_the_database_values_are_kept_on_disk_by_the_states_content(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bench_trust.audit import flags

    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path))
    _, data = ledger()
    first = flags.db_values(data)
    [kept] = (tmp_path / "audit").glob("db-values-*.json")
    assert {"accounts", "acc-1", "owner", "ann", "notes"} <= first and json.loads(kept.read_text()) == sorted(first)

    def no_walk(value: Any, into: set[str]) -> None:
        raise AssertionError("walked the database again")

    monkeypatch.setattr(flags, "_walk", no_walk)
    _, again = ledger()  # a new process would load the same data: read from disk, not walked
    assert flags.db_values(again) == first
    kept.write_text('["half a list"', encoding="utf-8")  # damaged: walked again and written anew
    monkeypatch.undo()
    monkeypatch.setenv("BENCH_CACHE_DIR", str(tmp_path))
    _, damaged = ledger()
    assert flags.db_values(damaged) == first and json.loads(kept.read_text()) == sorted(first)
    other = ledger()[1]
    other.agent_state.tables["accounts"]["acc-2"] = {"owner": "bo", "open": True}  # another content, another entry
    assert "acc-2" in flags.db_values(other) and len(list((tmp_path / "audit").glob("db-values-*.json"))) == 2
    assert not list((tmp_path / "audit").glob("*.tmp"))  # written whole, through a temporary file that is gone
