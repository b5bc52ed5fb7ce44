"""The bank database view, its query rules, tau2's DB hash, the ids and the discovery helpers."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from bench_banking_knowledge import ids
from bench_banking_knowledge.db import TABLES, BankDB, ReferenceHasher, state_from_json
from bench_banking_knowledge.discovery import discoverable, discoverable_kind, discoverable_methods, parse_docstring

from bench_kernel import ConfigError, ToolKind

DB_JSON: dict[str, Any] = {
    "users": {
        "data": {
            "u1": {"name": "Ada Stone", "user_id": "u1", "email": "ada@example.org"},
            "u2": {"name": "Bo Reyes", "user_id": "u2", "email": "bo@example.org"},
        },
        "notes": "people",
    },
    "accounts": {
        "data": {
            "a1": {"account_id": "a1", "user_id": "u1", "class": "checking", "current_holdings": "120.50"},
            "a2": {"account_id": "a2", "user_id": "u2", "class": "saving", "current_holdings": "9.00", "tags": ["x"]},
        },
        "notes": "",
    },
}


def tau2_hash(data: dict[str, Any]) -> str:
    """tau2's hash written out directly: every table, with its data and notes."""
    full = {name: {"data": data.get(name, {}).get("data", {}), "notes": data.get(name, {}).get("notes", "")} for name in TABLES}
    return hashlib.sha256(json.dumps(full, sort_keys=True, default=str).encode()).hexdigest()


@pytest.fixture
def bank() -> tuple[BankDB, ReferenceHasher]:
    """A fresh view over the small database and its hasher."""
    state, notes = state_from_json(DB_JSON)
    return BankDB(state), ReferenceHasher(notes)


def test_every_table_exists_and_unknown_tables_are_refused() -> None:
    state, notes = state_from_json(DB_JSON)
    assert set(state.tables) == set(TABLES) and len(TABLES) == 23
    assert notes["users"] == "people" and notes["task_config"] == ""
    with pytest.raises(ConfigError, match=r"db.json: a table .* @ \$\.interest_discrepancy_reports"):
        state_from_json({"interest_discrepancy_reports": {"data": {}}})


@pytest.mark.parametrize(
    ("db", "where"),
    [
        ([], r"@ \$$"),
        ({"users": 5}, r"@ \$\.users$"),
        ({"users": {"data": [], "notes": ""}}, r"@ \$\.users\.data$"),
        ({"users": {"data": {"123": 7}}}, r"@ \$\.users\.data\.123$"),
        ({"users": {"data": {}, "notes": 3}}, r"@ \$\.users\.notes$"),
        ({"users": {"data": {}, "rows": []}}, r"@ \$\.users$"),
    ],
)
def test_a_malformed_database_names_the_file_and_json_path(db: object, where: str) -> None:
    with pytest.raises(ConfigError, match=where):
        state_from_json(db, "/data/db.json")


def test_query_operators_and_and_semantics(bank: tuple[BankDB, ReferenceHasher]) -> None:
    db, _ = bank
    assert [k for k, _ in db.query("users", {"user_id": "u1"})] == ["u1"]
    assert [k for k, _ in db.query("users", {"name__startswith": "B"})] == ["u2"]
    assert [k for k, _ in db.query("accounts", {"tags__contains": "x"})] == ["a2"]
    assert [k for k, _ in db.query("accounts", {"user_id__in": ["u1", "u2"], "class": "saving"})] == ["a2"]
    assert db.query("accounts", {"current_holdings__gt": 5}) == []  # str > int raises: no match
    assert [k for k, _ in db.query("users", {"user_id__bogus": "u2"})] == ["u2"]  # unknown op: equality
    assert db.query("nope", {}) == []


def test_add_is_first_write_wins_and_update_appends_new_fields(bank: tuple[BankDB, ReferenceHasher]) -> None:
    db, _ = bank
    assert db.add("referrals", "r1", {"referral_id": "r1"})
    assert not db.add("referrals", "r1", {"referral_id": "other"})
    assert not db.add("no_such_table", "r1", {})
    assert db.get("referrals", "r1") == {"referral_id": "r1"}
    assert db.update("accounts", "a1", {"current_holdings": "$1.00", "status": "OPEN"})
    assert list(db.get("accounts", "a1") or {}) == ["account_id", "user_id", "class", "current_holdings", "status"]
    assert not db.update("accounts", "zz", {"x": 1})
    assert db.remove("referrals", "r1") and not db.remove("referrals", "r1")


def test_updates_never_touch_the_shared_records(bank: tuple[BankDB, ReferenceHasher]) -> None:
    db, _ = bank
    db.update("users", "u1", {"email": "new@example.org"})
    assert db.state.verify_untouched() == []
    fresh, _ = state_from_json(DB_JSON)
    assert BankDB(fresh).get("users", "u1") != db.get("users", "u1")


def test_format_records_is_tau2s_text(bank: tuple[BankDB, ReferenceHasher]) -> None:
    db, _ = bank
    assert db.query_text("users", '{"user_id": "u2"}') == (
        "Found 1 record(s) in 'users':\n\n1. Record ID: u2\n   name: Bo Reyes\n   user_id: u2\n   email: bo@example.org\n"
    )
    assert db.query_text("referrals", "{}") == "No records found in 'referrals'."
    assert db.query_text("users", '{"user_id": "a"b"}').startswith("Error: Invalid JSON: Expecting ")
    assert db.query_text("bogus").startswith("Error: Database 'bogus' not found. Available: ['users', 'accounts', 'referrals'")


def test_reference_hash_equals_tau2s_formula(bank: tuple[BankDB, ReferenceHasher]) -> None:
    db, hasher = bank
    assert hasher(db.state) == tau2_hash(DB_JSON)
    db.add("agent_discoverable_tools", ids.agent_tool_id("t"), {"tool_name": "t", "status": "CALLED"})
    db.update("accounts", "a2", {"current_holdings": "$10.00"})
    expected = json.loads(json.dumps(DB_JSON))
    expected["accounts"]["data"]["a2"]["current_holdings"] = "$10.00"
    expected["agent_discoverable_tools"] = {"data": {ids.agent_tool_id("t"): {"tool_name": "t", "status": "CALLED"}}}
    assert hasher(db.state) == tau2_hash(expected)
    assert hasher.dump(db.state)["accounts"]["data"]["a2"]["current_holdings"] == "$10.00"


def test_ids_follow_tau2s_seeds() -> None:
    assert ids.deterministic_id("a", "b") == hashlib.sha256(b"a:b").hexdigest()[:16]
    assert ids.dispute_id("u1", "t1") == "dsp_" + hashlib.sha256(b"dispute:u1:t1").hexdigest()[:12]
    assert (
        ids.application_id("Gold Rewards Card", "Ada", 85000.0, False)
        == (hashlib.sha256(b"credit_card:Gold Rewards Card:Ada:85000.0:False").hexdigest()[:16])
    )
    assert ids.credit_limit_request_id("cc", "u", 500.0).startswith("cli_")
    assert ids.verification_id("123", "2025-11-14 03:40:00 EST") == "123_20251114_034000_EST"
    assert ids.transaction_id("u", "c", "m", 5, "cat") == ids.transaction_id("u", "c", "m", 5.0, "cat", "")
    last4, cvv = ids.debit_card_numbers("dbc_x")
    assert len(last4) == 4 and last4.isdigit() and len(cvv) == 3 and cvv.isdigit()
    assert ids.TODAY == "11/14/2025" and ids.NOW.isoformat() == "2025-11-14T03:40:00"


class _Kit:
    @discoverable(ToolKind.WRITE)
    def move_money_1234(self, account_id: str, amount: float, note: str = "") -> str:
        """Move money out of an account.

        Says nothing more.

        Args:
            account_id (string): The account to debit
            amount (number): How much, in dollars
            note (string, optional): A free note

        Returns:
            Money moved.
            More detail.
        """
        return "ok"

    @discoverable(ToolKind.READ)
    def look_5678(self) -> str:
        """Look at something.

        Returns:
            Looked.
        """
        return "seen"

    def plain(self) -> None:
        """Not discoverable."""


def test_discoverable_marks_and_docstrings() -> None:
    assert set(discoverable_methods(_Kit)) == {"move_money_1234", "look_5678"}
    assert discoverable_kind(_Kit.look_5678) is ToolKind.READ and discoverable_kind(_Kit.plain) is None
    import inspect

    info = parse_docstring("move_money_1234", inspect.getdoc(_Kit.move_money_1234) or "")
    assert info.description == "Move money out of an account.\n\nSays nothing more."
    assert [(p.name, p.type, p.optional) for p in info.params] == [
        ("account_id", "string", False),
        ("amount", "number", False),
        ("note", "string", True),
    ]
    assert info.returns == "Money moved."
    assert info.card().splitlines()[-3:] == [
        "  * account_id (string, required): The account to debit",
        "  * amount (number, required): How much, in dollars",
        "  * note (string, optional): A free note",
    ]
    bare = parse_docstring("look_5678", inspect.getdoc(_Kit.look_5678) or "")
    assert (bare.description, bare.returns) == ("Look at something.", "Looked.")
    assert bare.card().endswith("Arguments:\n  none")


LAYOUTS = {
    "card": "[{{name}}|{{description}}|{{params}}]",
    "param_required": "{{name}}:{{type}}!",
    "param_optional": "{{name}}:{{type}}?",
    "param_separator": ",",
    "no_params": "-",
    "unlocked": "U {{name}} {{card}}",
    "given": "G {{name}} {{description}} {{arguments}}",
    "no_arguments": "()",
}


def test_a_profiles_layouts_shape_the_unlock_and_give_messages() -> None:
    import inspect

    info = parse_docstring("move_money_1234", inspect.getdoc(_Kit.move_money_1234) or "")
    assert info.unlocked_text(LAYOUTS) == (
        "U move_money_1234 [move_money_1234|Move money out of an account.\n\nSays nothing more.|account_id:string!,amount:number!,note:string?]"
    )
    assert info.given_text(None, LAYOUTS).endswith("Says nothing more. ()")
    assert info.given_text('{"a": "{{name}}"}', LAYOUTS).endswith('{"a": "{{name}}"}')  # values are not re-scanned
