"""The one kernel converter, and loading of task files with errors that name file and JSON path."""

from __future__ import annotations

import hashlib
import json
import math
import time
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.cols import is_mapping, is_mutable_sequence, mapping_structure_factory
from cattrs.errors import IterableValidationError, IterableValidationNote
from cattrs.preconf.json import make_converter
from cattrs.v import format_exception

from bench_kernel.errors import TaskFileError

T = TypeVar("T")
MAX_DEPTH = 100
"""Deepest nesting of arrays and objects a data file may have (tau2's files stay under 10)."""
MAX_PROBLEMS = 20
"""Problems reported for one file or list: past this, the rest are counted, not listed (bounded memory)."""


def make_kernel_converter() -> cattrs.Converter:
    """Build the converter every kernel and plugin type goes through (the schema modules add their own hooks to it)."""
    conv = make_converter(forbid_extra_keys=True, omit_if_default=False)
    # Wrong JSON types are errors, never coerced: null is not "None", "false" is not True, "abc" is not a list.
    conv.register_structure_hook(str, lambda obj, cl: _scalar(obj, cl, str, "a string"))
    conv.register_structure_hook(bool, lambda obj, cl: expect(obj, bool, "true or false"))
    conv.register_structure_hook(int, lambda obj, cl: _scalar(obj, cl, int, "an integer"))
    conv.register_structure_hook(float, lambda obj, cl: float(expect(obj, (int, float), "a number")))
    conv.register_structure_hook_factory(attrs.has, lambda cl: _checked(conv.gen_structure_attrs_fromdict(cl), dict, "an object"))
    # Not conv.gen_structure_mapping: it registers its unchecked hook for the type, which would replace this one.
    conv.register_structure_hook_factory(is_mapping, lambda cl: _checked(_mapping_hook(conv, cl), Mapping, "an object"))
    conv.register_structure_hook_factory(is_mutable_sequence, lambda cl: _list_hook(conv, cl))
    return conv


def _mapping_hook(conv: cattrs.Converter, cl: Any) -> Callable[[Any, Any], Any]:
    origin = typing.get_origin(cl) or cl
    target = origin if isinstance(origin, type) and issubclass(origin, dict) else dict
    return mapping_structure_factory(cl, conv, target, detailed_validation=conv.detailed_validation)


def expect(obj: Any, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(obj, kind) or (isinstance(obj, bool) and kind in (int, float)):
        raise ValueError(f"expected {what}, got {_json_kind(obj)}")
    return obj


def _scalar(obj: Any, cl: type, kind: type, what: str) -> Any:
    expect(obj, kind, what)
    return obj if cl is kind else cl(obj)  # str and int enums validate their value


def _checked(hook: Callable[[Any, Any], Any], kind: type, what: str) -> Callable[[Any, Any], Any]:
    return lambda obj, cl: hook(expect(obj, kind, what), cl)


def _list_hook(conv: cattrs.Converter, cl: Any) -> Callable[[Any, Any], Any]:
    """Lists only from lists; element errors stop at MAX_PROBLEMS so a huge bad list costs bounded memory."""
    args = getattr(cl, "__args__", None)
    elem = args[0] if args else Any
    handler = None if elem is Any else conv.get_structure_hook(elem)

    def structure_list(obj: Any, _: Any) -> list[Any]:
        expect(obj, list, "a list")
        if handler is None:
            return list(obj)
        out, errors = [], []
        for i, item in enumerate(obj):
            try:
                out.append(handler(item, elem))
            except Exception as exc:  # noqa: BLE001 - collected with their index, as cattrs does
                exc.__notes__ = [*getattr(exc, "__notes__", []), IterableValidationNote(f"@ index {i}", i, elem)]
                errors.append(exc)
                if len(errors) == MAX_PROBLEMS and i + 1 < len(obj):
                    errors.append(ValueError(f"stopped after {MAX_PROBLEMS} problems ({len(obj) - i - 1} more items not checked)"))
                    break
        if errors:
            raise IterableValidationError(f"While structuring {cl!r}", errors, cl)
        return out

    return structure_list


def _json_kind(obj: Any) -> str:
    names = {type(None): "null", bool: "a boolean", int: "an integer", float: "a number", str: "a string", list: "a list", dict: "an object"}
    kind = names.get(type(obj), type(obj).__name__)
    return f"{kind} {shorten(repr(obj))}" if isinstance(obj, str | int | float) and not isinstance(obj, bool) else kind


def shorten(text: str, limit: int = 40) -> str:
    """The text cut to limit characters, with an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


converter = make_kernel_converter()


def structure(data: Any, cls: type[T], *, source: str, root: str = "$") -> T:
    """Structure data into cls, turning failures into a TaskFileError naming source and JSON path."""
    try:
        return converter.structure(data, cls)
    except (cattrs.BaseValidationError, ValueError, TypeError, KeyError, RecursionError) as exc:
        raise TaskFileError(source, _problems(exc, root)) from exc


def _problems(exc: Exception, root: str) -> list[str]:
    if isinstance(exc, cattrs.BaseValidationError):
        found = cattrs.transform_error(exc, path=root, format_exception=_say_why)
        if len(found) <= MAX_PROBLEMS + 1:  # room for a list's own "stopped after" line
            return found
        return [*found[:MAX_PROBLEMS], f"and {len(found) - MAX_PROBLEMS} more problems"]
    if isinstance(exc, RecursionError):
        return [f"nested too deeply @ {root}"]
    return [f"{exc} @ {root}"]


def _say_why(exc: BaseException, type_: Any) -> str:
    # cattrs says only "invalid value" for a validator's refusal; its reason is what the user needs.
    if isinstance(exc, ValueError) and str(exc).startswith(("expected ", "stopped after ")):
        return str(exc)  # our strict hooks' own words say what was expected and what came
    text = format_exception(exc, type_)
    if text == "invalid value" and str(exc):
        return f"invalid value: {exc}"
    return text


def unstructure(obj: Any) -> Any:
    """Turn an attrs object into JSON-ready data."""
    return converter.unstructure(obj)


def read_json(path: Path) -> Any:
    """Read a JSON data file, naming the file and where it is wrong: not UTF-8, not JSON, too deep, lone surrogates."""
    text = read_text(path)
    floats = _FloatWatch()
    try:
        data = json.loads(text, parse_constant=_refuse_constant, parse_float=floats)
    except json.JSONDecodeError as exc:
        raise TaskFileError(str(path), [f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"]) from exc
    except ValueError as exc:
        raise TaskFileError(str(path), [str(exc)]) from exc
    except RecursionError as exc:
        raise TaskFileError(str(path), [f"nested too deeply (more than {MAX_DEPTH} levels of arrays and objects)"]) from exc
    problems = check_plain_data(data) if floats.non_finite or _may_hold_surrogates(text) or _too_deep(data) else []
    if problems:
        raise TaskFileError(str(path), problems)
    return data


class _FloatWatch:
    """json's parse_float that notes a number too large for a float (read as inf), so the full check runs then."""

    non_finite = False

    def __call__(self, text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            self.non_finite = True
        return value


def _may_hold_surrogates(text: str) -> bool:
    # A lone surrogate can only come from a \uD800-\uDFFF escape: UTF-8 text cannot carry one.
    return "\\u" in text and ("\\ud" in text or "\\uD" in text)


def _too_deep(data: Any) -> bool:
    """True when some array or object is nested MAX_DEPTH levels deep (the full check then says where)."""
    level = [data] if type(data) is dict or type(data) is list else []
    depth = 0
    while level:
        if depth >= MAX_DEPTH:
            return True
        depth += 1
        level = [v for c in level for v in (c.values() if type(c) is dict else c) if type(v) is dict or type(v) is list]
    return False


def read_text(path: Path) -> str:
    """A data file's text, with a clean error when it is missing, a directory, unreadable or not UTF-8."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise TaskFileError(str(path), ["file not found"]) from exc
    except IsADirectoryError as exc:
        raise TaskFileError(str(path), ["is a directory, not a file"]) from exc
    except OSError as exc:
        raise TaskFileError(str(path), [f"cannot be read: {exc.strerror or exc}"]) from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise TaskFileError(str(path), [f"not UTF-8 text: byte 0x{raw[exc.start]:02x} at line {line} (offset {exc.start})"]) from exc


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def check_plain_data(data: Any, root: str = "$", *, numbers: bool = True) -> list[str]:
    """Problems of parsed data that would break storing it: nesting past MAX_DEPTH, lone surrogates, non-finite numbers."""
    problems: list[str] = []
    # Iterative, so deep data cannot exhaust the Python stack; a path is spelt out only for a problem.
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())] if isinstance(data, dict | list) else []
    while stack and len(problems) < MAX_PROBLEMS:
        value, path = stack.pop()
        if len(path) >= MAX_DEPTH:
            problems.append(f"nested more than {MAX_DEPTH} levels deep @ {_spell(root, path)}")
            continue
        items = value.items() if isinstance(value, dict) else enumerate(value)
        for key, item in items:
            if isinstance(key, str) and not key.isascii() and not _encodable(key):
                problems.append(f"a lone surrogate (invalid Unicode) in a key @ {_spell(root, path)}")
            kind = type(item)
            # Every reply and data file passes here: the common plain kinds are settled without a call.
            if (kind is str and item.isascii()) or kind is int or kind is bool or item is None:
                continue
            if isinstance(item, dict | list):
                stack.append((item, (*path, key)))
            elif (problem := _scalar_problem(item, numbers)) is not None:
                problems.append(f"{problem} @ {_spell(root, (*path, key))}")
    if not isinstance(data, dict | list) and (problem := _scalar_problem(data, numbers)) is not None:
        problems.append(f"{problem} @ {root}")
    return problems[:MAX_PROBLEMS]


def _scalar_problem(value: Any, numbers: bool) -> str | None:
    if isinstance(value, str) and not _encodable(value):
        return "a lone surrogate (invalid Unicode) in a string"
    if numbers and isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a finite number"
    return None


def _spell(root: str, path: tuple[Any, ...]) -> str:
    return root + "".join(f"[{key}]" if isinstance(key, int) else f".{key}" for key in path)


def _encodable(text: str) -> bool:
    if text.isascii():  # constant time: CPython keeps the flag
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# One encoder for every call: json.dumps would build a new one each time (the store calls this per message).
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def canonical_json(obj: Any) -> str:
    """Deterministic compact JSON: sorted keys, ints and floats kept apart."""
    return _CANONICAL.encode(obj)


def content_hash(obj: Any) -> str:
    """sha256 of the canonical JSON of obj (attrs objects are unstructured first)."""
    return hashlib.sha256(canonical_json(unstructure(obj)).encode()).hexdigest()


class _MillisecondClock:
    """ISO-8601 UTC text of the current millisecond, formatted once per millisecond (every message is stamped)."""

    ms, text, second, date_time = -1, "", -1, ""  # instances shadow these class-level starting values

    def now(self) -> str:
        ms = time.time_ns() // 1_000_000
        if ms != self.ms:
            seconds, millis = divmod(ms, 1000)
            if seconds != self.second:  # strftime once a second: it was most of a busy run's stamping cost
                self.second, self.date_time = seconds, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds))
            self.ms, self.text = ms, f"{self.date_time}.{millis:03d}+00:00"
        return self.text


utc_now = _MillisecondClock().now
"""The current UTC time, ISO-8601 with milliseconds (as datetime's isoformat writes it)."""
