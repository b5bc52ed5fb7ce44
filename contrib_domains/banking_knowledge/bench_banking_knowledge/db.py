"""The bank database: tau2-bench's 23 tables over a kernel `State`, its query rules and its DB hash.

Each table holds plain dict records keyed by record id, in stored order (tau2's dict order: the
order of `db.json`, then records in the order they were added). A table's `notes` text never
changes but is part of tau2's hashed state, so the hasher keeps it beside the records.
"""

from __future__ import annotations

import hashlib
import json
import operator
import weakref
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import attrs

from bench_kernel import ConfigError, State

Record = dict[str, Any]

TABLES: tuple[str, ...] = (
    "users",
    "accounts",
    "debit_cards",
    "referrals",
    "credit_card_applications",
    "user_discoverable_tools",
    "user_discoverable_tool_calls",
    "verification_history",
    "credit_card_transaction_history",
    "cash_back_disputes",
    "bank_account_transaction_history",
    "credit_card_accounts",
    "agent_discoverable_tools",
    "task_config",
    "human_transfer_requests",
    "transaction_disputes",
    "credit_card_orders",
    "debit_card_orders",
    "credit_card_closure_reasons",
    "credit_card_account_flags",
    "credit_limit_increase_requests",
    "payment_history",
    "debit_card_disputes",
)
"""Every table of tau2's `TransactionalDB`, in its field order; tables missing from db.json start empty."""

QUERYABLE: tuple[str, ...] = (
    "users",
    "accounts",
    "referrals",
    "credit_card_applications",
    "user_discoverable_tools",
    "user_discoverable_tool_calls",
    "agent_discoverable_tools",
    "task_config",
    "verification_history",
    "credit_card_transaction_history",
    "cash_back_disputes",
    "bank_account_transaction_history",
    "credit_card_accounts",
    "human_transfer_requests",
    "transaction_disputes",
    "credit_card_orders",
    "credit_card_closure_reasons",
    "credit_card_account_flags",
    "debit_cards",
    "debit_card_orders",
    "debit_card_disputes",
    "credit_limit_increase_requests",
    "payment_history",
)
"""The same tables in the order tau2's query tool lists them in its unknown-table error."""


def _contains(actual: Any, expected: Any) -> bool:
    return expected in actual if actual is not None else False


def _startswith(actual: Any, expected: Any) -> bool:
    return str(actual).startswith(str(expected)) if actual is not None else False


def _endswith(actual: Any, expected: Any) -> bool:
    return str(actual).endswith(str(expected)) if actual is not None else False


OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": operator.eq,
    "ne": operator.ne,
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
    "contains": _contains,
    "startswith": _startswith,
    "endswith": _endswith,
    "in": lambda actual, expected: actual in expected,
    "nin": lambda actual, expected: actual not in expected,
}
"""The `field__op` operators; an unknown op compares for equality, as tau2's does."""


def split_constraint(key: str) -> tuple[str, Callable[[Any, Any], bool]]:
    """The field and the comparison of a `field` or `field__op` constraint key."""
    if "__" not in key:
        return key, operator.eq
    field, op = key.rsplit("__", 1)
    return field, OPERATORS.get(op, operator.eq)


def record_matches(record: Mapping[str, Any], constraints: Mapping[str, Any]) -> bool:
    """True when every constraint holds; a comparison that raises counts as no match."""
    for key, expected in constraints.items():
        field, compare = split_constraint(key)
        try:
            if not compare(record.get(field), expected):
                return False
        except (TypeError, ValueError):
            return False
    return True


@attrs.frozen
class BankDB:
    """A view of the bank's tables in one conversation's `State` (records are plain dicts)."""

    state: State

    def has_table(self, table: str) -> bool:
        """True when the table exists."""
        return table in self.state.tables

    def table_items(self, table: str) -> list[tuple[str, Record]]:
        """Every (record id, record) of a table in stored order (read-only records)."""
        rows = self.state.tables.get(table)
        return [] if rows is None else [(key, rows[key]) for key in rows]

    def query(self, table: str, constraints: Mapping[str, Any]) -> list[tuple[str, Record]]:
        """The (record id, record) pairs matching every constraint, in stored order (read-only records)."""
        return [(key, rec) for key, rec in self.table_items(table) if record_matches(rec, constraints)]

    def get(self, table: str, record_id: str) -> Record | None:
        """One record, or None (read-only: change it with `update`)."""
        rows = self.state.tables.get(table)
        if rows is None or record_id not in rows:
            return None
        record: Record = rows[record_id]
        return record

    def add(self, table: str, record_id: str, record: Mapping[str, Any]) -> bool:
        """Store a new record; False (nothing written) for an unknown table or an existing id."""
        rows = self.state.tables.get(table)
        if rows is None or record_id in rows:
            return False
        rows[record_id] = dict(record)
        return True

    def update(self, table: str, record_id: str, changes: Mapping[str, Any]) -> bool:
        """Set fields of a record in place (new fields go last); False when it does not exist."""
        rows = self.state.tables.get(table)
        if rows is None or record_id not in rows:
            return False
        rows.edit(record_id).update(changes)
        return True

    def remove(self, table: str, record_id: str) -> bool:
        """Delete a record; False when it does not exist."""
        rows = self.state.tables.get(table)
        if rows is None or record_id not in rows:
            return False
        del rows[record_id]
        return True

    def format_records(self, table: str, rows: list[tuple[str, Record]]) -> str:
        """tau2's text for query results: a count header, then each record's fields, one per line."""
        if not rows:
            return f"No records found in '{table}'."
        lines = [f"Found {len(rows)} record(s) in '{table}':\n"]
        for i, (record_id, record) in enumerate(rows, 1):
            lines.append(f"{i}. Record ID: {record_id}")
            lines.extend(f"   {field}: {value}" for field, value in record.items())
            lines.append("")
        return "\n".join(lines)

    def query_text(self, table: str, constraints: str = "{}") -> str:
        """tau2's query tool on a JSON constraint text: the formatted records or its error text."""
        if table not in QUERYABLE or not self.has_table(table):
            return f"Error: Database '{table}' not found. Available: {list(QUERYABLE)}"
        try:
            parsed = json.loads(constraints) if constraints else {}
        except json.JSONDecodeError as exc:
            return f"Error: Invalid JSON: {exc}"
        try:
            rows = self.query(table, dict(parsed))
        except Exception as exc:  # noqa: BLE001 - tau2 turns any failure into a text
            return f"Error querying database: {exc}"
        return self.format_records(table, rows)


def state_from_json(data: Any, source: str = "db.json") -> tuple[State, dict[str, str]]:
    """The pristine state of every table (empty when db.json lacks it) and each table's notes; ConfigError naming
    the file and JSON path where the file does not have tau2's shape ({table: {"data": {id: record}, "notes": text}})."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{source}: expected an object of tables @ $")
    unknown = sorted(set(data) - set(TABLES))
    if unknown:
        raise ConfigError(f"{source}: a table tau2's database does not have @ $.{unknown[0]} (known: {', '.join(TABLES)})")
    for name, table in data.items():
        _check_table(source, name, table)
    records = {name: dict((data.get(name) or {}).get("data") or {}) for name in TABLES}
    notes = {name: str((data.get(name) or {}).get("notes") or "") for name in TABLES}
    return State.from_records(records), notes


def _check_table(source: str, name: str, table: Any) -> None:
    if not isinstance(table, Mapping) or set(table) - {"data", "notes"}:
        raise ConfigError(f'{source}: expected {{"data": {{record id: record}}, "notes": text}} @ $.{name}')
    if not isinstance(table.get("data", {}), Mapping):
        raise ConfigError(f"{source}: expected an object of record id -> record @ $.{name}.data")
    for key, record in (table.get("data") or {}).items():
        if not isinstance(record, Mapping):
            raise ConfigError(f"{source}: expected a record (an object) @ $.{name}.data.{key}")
    if not isinstance(table.get("notes", ""), str):
        raise ConfigError(f"{source}: expected a text @ $.{name}.notes")


class ReferenceHasher:
    """tau2's DB hash: sha256 of json.dumps({table: {"data": records, "notes": text}}, sort_keys=True, default=str).

    The JSON text is assembled from one fragment per record, byte for byte what a single
    json.dumps writes; the fragments of shared base records are cached, so hashing a
    conversation's state costs the records it changed.
    """

    def __init__(self, notes: Mapping[str, str]) -> None:
        self.notes = dict(notes)
        self._fragments: weakref.WeakKeyDictionary[Any, dict[str, str]] = weakref.WeakKeyDictionary()

    def __call__(self, state: State) -> str:
        """The hex digest of the whole database."""
        digest = hashlib.sha256()
        for piece in self._pieces(state):
            digest.update(piece.encode())
        return digest.hexdigest()

    def dump(self, state: State) -> dict[str, Any]:
        """The database as tau2's `model_dump()` (for checks; the hash never builds it)."""
        names = sorted(set(TABLES) | set(self.notes) | set(state.tables))
        return {name: {"data": state.tables[name].to_dict() if name in state.tables else {}, "notes": self.notes.get(name, "")} for name in names}

    def _pieces(self, state: State) -> Iterator[str]:
        yield "{"
        for t, name in enumerate(sorted(set(TABLES) | set(self.notes) | set(state.tables))):
            yield f'{", " if t else ""}{json.dumps(name)}: {{"data": {{'
            table = state.tables.get(name)
            if table is not None:
                base = self._base_fragments(table.base)
                for i, key in enumerate(sorted(table)):
                    text = _fragment(table[key]) if key in table.overlay else base[key]
                    yield f"{', ' if i else ''}{json.dumps(key)}: {text}"
            yield f'}}, "notes": {json.dumps(self.notes.get(name, ""))}}}'
        yield "}"

    def _base_fragments(self, base: Any) -> dict[str, str]:
        found = self._fragments.get(base)
        if found is None:
            found = self._fragments[base] = {key: _fragment(rec) for key, rec in base.records.items()}
        return found


def _fragment(record: Any) -> str:
    return json.dumps(record, sort_keys=True, default=str)
