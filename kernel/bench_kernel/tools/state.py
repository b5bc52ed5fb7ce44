"""Copy-on-write state: shared read-only `BaseTable`s, per-conversation overlays, hashes summed from record digests (docs/decisions.md)."""

from __future__ import annotations

import copy
import hashlib
import json
import pickle
import threading
import weakref
from collections.abc import Callable, ItemsView, Iterator, Mapping, MutableMapping, ValuesView
from typing import Any

import attrs

from bench_kernel.errors import BenchError, ConfigError, DeferredDataError
from bench_kernel.serialization import canonical_json, converter

_MOD = 1 << 256
_MISSING = object()
_DELETED: Any = object()  # marks a record deleted in an overlay


def record_digest(key: str, record: Any) -> int:
    """A record's digest as an integer, so table digests can be summed."""
    data = canonical_json([key, converter.unstructure(record)])
    return int.from_bytes(hashlib.sha256(data.encode()).digest(), "big")


class DeferredTables:
    """The records of several tables, built by one loader the first time any of them is needed (thread-safe)."""

    def __init__(self, load: Callable[[], Mapping[str, Mapping[str, Any]]]) -> None:
        self._load: Callable[[], Mapping[str, Mapping[str, Any]]] | None = load
        self._checks: list[Callable[[], None]] = []
        self._tables: dict[str, dict[str, Any]] | None = None
        self.ready = False
        """Whether the records are loaded and checked."""
        self._error: DeferredDataError | None = None
        self._lock = threading.RLock()  # re-entered by the loading thread when a check reads records

    @property
    def loaded(self) -> bool:
        """Whether the loader has run (successfully or not)."""
        return self._load is None

    def add_check(self, check: Callable[[], None]) -> None:
        """Run `check` after loading, before the records are given out; what it raises stops whoever needs them."""
        if self._load is None:
            raise RuntimeError("the deferred tables are loaded already")
        self._checks.append(check)

    def drop_checks(self) -> None:
        """Forget the checks added so far (a forked worker's copy: the process it was forked from runs them on its own)."""
        self._checks.clear()

    def table(self, name: str) -> dict[str, Any]:
        """One table's records, loading every table first if needed."""
        if not self.ready:
            self.load()
        assert self._tables is not None
        if name not in self._tables:
            raise DeferredDataError(ConfigError(f"the deferred data has no table {name!r} (it has {', '.join(sorted(self._tables))})"))
        return self._tables[name]

    def load(self) -> None:
        """Run the loader and the checks once; raise their failure (now and on every later call)."""
        with self._lock:
            if self._load is not None:
                load, self._load = self._load, None
                try:
                    self._tables = {name: dict(records) for name, records in load().items()}
                    for check in self._checks:
                        check()
                    self.ready = True
                except BenchError as exc:
                    self._error = DeferredDataError(exc)
                except DeferredDataError as exc:
                    self._error = exc
                except Exception as exc:  # noqa: BLE001 - any failure of a domain's loader stops the run, named
                    self._error = DeferredDataError(ConfigError(f"loading the domain's data: {type(exc).__name__}: {exc}"))
                    self._error.__cause__ = exc
                except BaseException:  # interrupted (KeyboardInterrupt in a program without signal handling): not a verdict
                    self._load, self._tables = load, None
                    raise
        if self._error is not None:
            raise self._error


class BaseTable:
    """A table's shared, read-only records, with its digest computed once."""

    def __init__(
        self, records: Mapping[str, Any] | None, record_type: type | None = None, *, deferred: tuple[DeferredTables, str] | None = None
    ) -> None:
        self._records: dict[str, Any] | None = None if records is None else dict(records)
        self._deferred = deferred
        if (records is None) == (deferred is None):
            raise ValueError("a BaseTable takes either its records or where its deferred records come from")
        self.record_type = record_type
        self._digests: dict[str, int] | None = None
        self._total: int | None = None

    @property
    def records(self) -> dict[str, Any]:
        """The shared records (built on first use for a deferred table)."""
        records = self._records
        if records is None:
            assert self._deferred is not None
            source, name = self._deferred
            records = source.table(name)
            if source.ready:  # (not while the loader's own checks read it: they may still refuse the data)
                self._records = records
        return records

    @property
    def pending(self) -> DeferredTables | None:
        """The loader this table still waits for, if any."""
        return None if self._records is not None or self._deferred is None else self._deferred[0]

    def digest_of(self, key: str) -> int:
        """The cached digest of one base record."""
        return self._digest_map()[key]

    def total(self) -> int:
        """The sum of every base record's digest."""
        if self._total is None:
            self._total = sum(self._digest_map().values()) % _MOD
        return self._total

    def _digest_map(self) -> dict[str, int]:
        if self._digests is None:
            self._digests = {k: record_digest(k, v) for k, v in self.records.items()}
        return self._digests

    def verify_untouched(self) -> bool:
        """Recompute every digest: False if some code mutated a shared record in place."""
        return all(record_digest(k, v) == self.digest_of(k) for k, v in self.records.items())


class RecordWatch:
    """Shared records handed out, digested and copied at first: an edit in place shows (`changed`) and is undone (`restore`)."""

    def __init__(self) -> None:
        # Only gold checks watch (conversations do not): a check pays once for each record its replays read.
        self.names: dict[BaseTable, str] = {}
        self._lent: dict[BaseTable, dict[str, tuple[int, tuple[str, Any]]]] = {}
        """Per table, per key handed out: its digest and a copy, as first handed out."""
        self._scanned: set[BaseTable] = set()

    def lend(self, base: BaseTable, key: str, record: Any) -> None:
        """Note that `record` (the shared one under `key`) was handed out."""
        lent = self._lent.setdefault(base, {})
        if key not in lent:
            lent[key] = record_digest(key, record), _snapshot(record)

    def lend_all(self, base: BaseTable) -> None:
        """Note that every record of a table was handed out (a scan of its shared records)."""
        if base not in self._scanned:
            self._scanned.add(base)
            for key, record in base.records.items():
                self.lend(base, key, record)

    def changed(self) -> list[tuple[BaseTable, str]]:
        """Each record handed out that differs now from when it was first handed out."""
        return [(base, key) for base, lent in self._lent.items() for key in lent if not self.is_pristine(base, key)]

    def is_pristine(self, base: BaseTable, key: str) -> bool:
        """Whether a record handed out is as it was first handed out."""
        return record_digest(key, base.records[key]) == self._lent[base][key][0]

    def restore(self, base: BaseTable, key: str) -> bool:
        """Put back a record handed out as it was first handed out (False: it could not be copied)."""
        how, kept = self._lent[base][key][1]
        if how == "none":
            return False
        base.records[key] = pickle.loads(kept) if how == "pickle" else copy.deepcopy(kept)
        return True


def _snapshot(record: Any) -> tuple[str, Any]:
    try:
        return "pickle", pickle.dumps(record, pickle.HIGHEST_PROTOCOL)  # the fastest faithful copy of plain data
    except Exception:  # noqa: BLE001 - a class pickle cannot reach (defined in a function): a deep copy
        try:
            return "deepcopy", copy.deepcopy(record)
        except Exception:  # noqa: BLE001 - found, but not undone
            return "none", None


class Table(MutableMapping[str, Any]):
    """A copy-on-write view of a BaseTable: reads fall through (read-only records; `edit` copies one), writes stay in the overlay."""

    def __init__(self, base: BaseTable, overlay: dict[str, Any] | None = None, watch: RecordWatch | None = None) -> None:
        self.base = base
        self.overlay: dict[str, Any] = {} if overlay is None else overlay
        self.watch = watch

    def __getitem__(self, key: str) -> Any:
        value = self.overlay.get(key, _MISSING)
        if value is _MISSING:
            records = self.base._records  # the records once built, without the property's call (the hottest read)
            record = (records if records is not None else self.base.records)[key]
            if self.watch is not None:
                self.watch.lend(self.base, key, record)
            return record
        if value is _DELETED:
            raise KeyError(key)
        return value

    def __setitem__(self, key: str, value: Any) -> None:
        self.overlay[key] = value

    def __delitem__(self, key: str) -> None:
        if key not in self:
            raise KeyError(key)
        self.overlay[key] = _DELETED

    def __contains__(self, key: object) -> bool:
        value = self.overlay.get(key, _MISSING)  # type: ignore[call-overload]
        if value is _MISSING:
            return key in self.base.records
        return value is not _DELETED

    def __iter__(self) -> Iterator[str]:
        if not self.overlay:  # nothing changed yet: the shared keys as they are (tools scan whole tables)
            return iter(self.base.records)
        return self._visible_keys()

    def _visible_keys(self) -> Iterator[str]:
        for key in self.base.records:
            if self.overlay.get(key, _MISSING) is not _DELETED:
                yield key
        for key, value in self.overlay.items():
            if key not in self.base.records and value is not _DELETED:
                yield key

    def __len__(self) -> int:
        if not self.overlay:
            return len(self.base.records)
        return sum(1 for _ in self)

    def values(self) -> ValuesView[Any]:
        """The visible records (a view, as a dict's; scanning an unchanged table reads the shared records directly)."""
        return _TableValues(self)

    def items(self) -> ItemsView[str, Any]:
        """The visible (key, record) pairs (a view, as a dict's)."""
        return _TableItems(self)

    def unchanged_records(self) -> dict[str, Any] | None:
        """The shared records, each handed out to the watch, while nothing changed (scans read them directly); else None."""
        if self.overlay:
            return None
        if self.watch is not None:
            self.watch.lend_all(self.base)
        return self.base.records

    def visible(self, key: str) -> Any:
        """The record under `key` (None when there is none), without handing it out to a watch."""
        value = self.overlay.get(key, _MISSING)
        if value is _MISSING:
            return self.base.records.get(key)
        return None if value is _DELETED else value

    def edit(self, key: str) -> Any:
        """A private, mutable copy of a record, stored in the overlay and returned."""
        if key not in self.overlay:
            self.overlay[key] = copy.deepcopy(self.base.records[key])
        return self[key]

    def fork(self) -> Table:
        """A new view sharing the base, with a copy of this overlay."""
        return Table(self.base, {k: copy.deepcopy(v) for k, v in self.overlay.items()}, self.watch)

    def digest(self) -> int:
        """The table digest, computed from the base total and the overlay only."""
        total = self.base.total()
        for key, value in self.overlay.items():
            if key in self.base.records:
                total -= self.base.digest_of(key)
            if value is not _DELETED:
                total += record_digest(key, value)
        return total % _MOD

    def to_dict(self) -> dict[str, Any]:
        """Every visible record, as JSON-ready data (for dumps, not for hot paths)."""
        return {k: converter.unstructure(self[k]) for k in self}


class _TableValues(ValuesView[Any]):
    _mapping: Table

    def __iter__(self) -> Iterator[Any]:
        shared = self._mapping.unchanged_records()
        return iter(shared.values()) if shared is not None else (self._mapping[key] for key in self._mapping)


class _TableItems(ItemsView[str, Any]):
    _mapping: Table

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        shared = self._mapping.unchanged_records()
        return iter(shared.items()) if shared is not None else ((key, self._mapping[key]) for key in self._mapping)


@attrs.define
class State:
    """A database: named copy-on-write tables."""

    tables: dict[str, Table]

    @classmethod
    def from_records(cls, data: Mapping[str, Mapping[str, Any]], types: Mapping[str, type] | None = None) -> State:
        """Build a pristine state from {table: {key: record}}; records are structured by types."""
        types = dict(types or {})
        tables = {}
        for name, records in data.items():
            rtype = types.get(name)
            if rtype is not None:
                records = {k: converter.structure(v, rtype) for k, v in records.items()}
            tables[name] = Table(BaseTable(records, rtype))
        return cls(tables)

    @classmethod
    def deferred(cls, types: Mapping[str, type | None], load: Callable[[], Mapping[str, Mapping[str, Any]]]) -> State:
        """A pristine state whose tables (named by `types`, with their record types) `load` builds on first use (docs/plugins.md)."""
        source = DeferredTables(load)
        return cls({name: Table(BaseTable(None, rtype, deferred=(source, name))) for name, rtype in types.items()})

    def pending_loads(self) -> list[DeferredTables]:
        """The loaders of this state's deferred tables that have not run yet."""
        found: list[DeferredTables] = []
        for table in self.tables.values():
            source = table.base.pending
            if source is not None and not source.loaded and source not in found:
                found.append(source)
        return found

    def load_deferred(self) -> None:
        """Build every deferred table now (waiting for a build under way); raise DeferredDataError if that failed."""
        for table in self.tables.values():
            source = table.base.pending
            if source is not None:
                source.load()

    def __getitem__(self, name: str) -> Table:
        return self.tables[name]

    def __getattr__(self, name: str) -> Table:
        try:
            return object.__getattribute__(self, "tables")[name]
        except (KeyError, AttributeError):
            raise AttributeError(name) from None

    def fork(self) -> State:
        """A new state sharing every base table, with copies of the overlays."""
        return State({name: table.fork() for name, table in self.tables.items()})

    def watched(self, watch: RecordWatch) -> State:
        """This state with every table (and every fork of it) reporting the shared records it hands out to `watch`."""
        watch.names.update({table.base: name for name, table in self.tables.items()})
        return State({name: Table(table.base, dict(table.overlay), watch) for name, table in self.tables.items()})

    def first_difference(self, other: State) -> tuple[str, str, Any, Any] | None:
        """The first (table, key, this record, the other's) where two forks of one pristine state differ; None if equal."""
        # Only overlays are compared: what neither changed is the same shared record.
        for name in sorted(self.tables):
            mine, theirs = self.tables[name], other.tables[name]
            for key in sorted(mine.overlay.keys() | theirs.overlay.keys()):
                a, b = mine.visible(key), theirs.visible(key)
                if a is not b and (a is None or b is None or record_digest(key, a) != record_digest(key, b)):
                    return name, key, a, b
        return None

    def content_hash(self) -> str:
        """A hash of the visible content, independent of how the overlay was reached."""
        parts = [f"{name}:{self.tables[name].digest():064x}" for name in sorted(self.tables)]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Every table as JSON-ready data."""
        return {name: table.to_dict() for name, table in self.tables.items()}

    def apply_patch(self, patch: Mapping[str, Any]) -> None:
        """Deep-merge a {table: {key: partial record}} patch (tau2's initialization_data)."""
        for name, records in patch.items():
            if name not in self.tables:
                raise KeyError(f"unknown table {name!r} in initialization data")
            table = self.tables[name]
            for key, partial in (records or {}).items():
                current = converter.unstructure(table[key]) if key in table else {}
                merged = deep_merge(current, partial)
                rtype = table.base.record_type
                table[key] = converter.structure(merged, rtype) if rtype is not None else merged

    def verify_untouched(self) -> list[str]:
        """Names of tables whose shared base records were mutated in place (a domain bug)."""
        return [name for name, t in self.tables.items() if not t.base.verify_untouched()]


def deep_merge(current: Any, patch: Any) -> Any:
    """Merge dicts recursively; anything else in the patch replaces what was there."""
    if not isinstance(current, dict) or not isinstance(patch, dict):
        return copy.deepcopy(patch)
    merged = dict(current)
    for key, value in patch.items():
        merged[key] = deep_merge(current.get(key), value) if key in current else copy.deepcopy(value)
    return merged


class DumpHasher:
    """tau2's state hash: sha256 of json.dumps({table: {key: dump(record)}}, sort_keys=True, default=str)."""

    def __init__(self, dump: Callable[[Any], Any]) -> None:
        self.dump = dump
        # Per-record fragments (byte for byte one json.dumps), cached for shared records: a hash costs the changes.
        self._fragments: weakref.WeakKeyDictionary[BaseTable, dict[str, str]] = weakref.WeakKeyDictionary()

    def __call__(self, state: State) -> str:
        """The hex digest for this state."""
        digest = hashlib.sha256()
        for piece in self._pieces(state):
            digest.update(piece.encode())
        return digest.hexdigest()

    def _pieces(self, state: State) -> Iterator[str]:
        yield "{"
        for t, name in enumerate(sorted(state.tables)):
            table = state.tables[name]
            base = self._base_fragments(table.base)
            yield f"{', ' if t else ''}{json.dumps(name)}: {{"
            for i, key in enumerate(sorted(table)):
                text = self.fragment(table[key]) if key in table.overlay else base[key]
                yield f"{', ' if i else ''}{json.dumps(key)}: {text}"
            yield "}"
        yield "}"

    def fragment(self, record: Any) -> str:
        """One record's JSON text."""
        return json.dumps(self.dump(record), sort_keys=True, default=str)

    def _base_fragments(self, base: BaseTable) -> dict[str, str]:
        found = self._fragments.get(base)
        if found is None:
            found = self._fragments[base] = {key: self.fragment(record) for key, record in base.records.items()}
        return found
