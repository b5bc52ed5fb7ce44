"""The cache: compiled code of the methods attrs and cattrs generate, kept between processes as .pyc files keep modules'.

attrs writes the source of every class's __init__, __eq__, __repr__ ... and compiles it when the class is defined;
cattrs does the same for each (un)structuring function. Compiling is most of what defining a class costs (~0.2 ms
each, ~40 ms of `bench run`'s start-up for the classes it imports). The same source, file name, mode and future
flags always compile to the same code, so the code is kept, keyed by a hash of exactly these, in one marshal file
beside this package's bytecode (`__pycache__`), read once per process and written back at exit when something new
was compiled (not when Python writes no bytecode, PYTHONDONTWRITEBYTECODE, unless BENCH_CODE_CACHE=write, as set-up
runs it; BENCH_CODE_CACHE=0 turns the cache off). A missing, stale or unreadable file only means compiling as before.
"""

from __future__ import annotations
import __future__

import atexit
import contextlib
import functools
import hashlib
import importlib.util
import marshal
import os
import re
import sys
import tempfile
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from bench_kernel import after_import

PATCHED_MODULES = ("attr._make", "cattrs.gen", "cattrs.gen.typeddicts")
"""Modules whose generated code goes through the cache (each calls the builtin compile by its global name)."""

MAX_ENTRIES = 4_000
"""Past this many entries a write keeps only what this process used (the file never grows without bound)."""

_builtin_compile = compile

_ATTRS_HASH_SALT = re.compile(r"hash\(\(\n\s*(-?\d+),\n")
"""attrs's __hash__ starts its tuple with a per-class number that changes with every process's string-hash seed."""


class CodeCache:
    """Code objects by the hash of what compiled them, loaded from and saved to one file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        # Code kept marshalled until a class asks for it: the file holds every installed plugin's classes, a run few.
        self.entries: dict[bytes, tuple[bytes, int | None]] = self._read()
        self.used: dict[bytes, tuple[bytes, int | None]] = {}
        self.added = 0

    def _read(self) -> dict[bytes, tuple[bytes, int | None]]:
        try:
            raw = self.path.read_bytes()
        except OSError:
            return {}
        magic = importlib.util.MAGIC_NUMBER
        if not raw.startswith(magic):
            return {}
        try:
            entries = marshal.loads(raw[len(magic) :])
        except (EOFError, ValueError, TypeError):
            return {}
        return entries if isinstance(entries, dict) else {}

    def compile(self, source: str, filename: str, mode: str, flags: int) -> CodeType:
        """The code of `source`, compiled now or from an earlier process."""
        # The salt is keyed as a placeholder and put into the cached code: the result is what compiling would give,
        # but for the end column the code keeps for that one constant (the width of the salt it was compiled with).
        found = _ATTRS_HASH_SALT.search(source)
        salt = int(found.group(1)) if found else None
        keyed = source if found is None else f"{source[: found.start(1)]}SALT{source[found.end(1) :]}"
        key = hashlib.sha256(f"{mode}\0{filename}\0{flags}\0{sys.flags.optimize}\0{keyed}".encode()).digest()
        kept = self.entries.get(key)
        code = _unmarshal(kept[0]) if kept is not None else None
        if code is None or kept is None:
            # dont_inherit: the patched module's future flags, not this module's (they are part of the key)
            code = _builtin_compile(source, filename, mode, flags, True)
            kept = self.entries[key] = (marshal.dumps(code), salt)
            self.added += 1
        entry = self.used[key] = kept
        if salt is not None and entry[1] is not None and salt != entry[1]:
            code = with_constant(code, entry[1], salt)
        return code

    def save(self) -> None:
        """Write the entries back (atomically: processes ending together each leave a whole file)."""
        if not self.added or (sys.dont_write_bytecode and os.environ.get("BENCH_CODE_CACHE") != "write"):
            return
        merged = {**self._read(), **self.entries}
        if len(merged) > MAX_ENTRIES:
            merged = dict(self.used)
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=self.path.name, suffix=".tmp")
            try:
                with os.fdopen(fd, "wb") as out:
                    out.write(importlib.util.MAGIC_NUMBER + marshal.dumps(merged))
                os.replace(tmp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise
        self.added = 0


def _unmarshal(blob: object) -> CodeType | None:
    try:
        code = marshal.loads(blob)  # type: ignore[arg-type]
    except (EOFError, ValueError, TypeError):
        return None  # a damaged entry is compiled again
    return code if isinstance(code, CodeType) else None


def with_constant(code: CodeType, old: int, new: int) -> CodeType:
    """`code` with the integer constant `old` (in it or in the code nested in it) replaced by `new`."""
    consts = tuple(new if type(c) is int and c == old else with_constant(c, old, new) if isinstance(c, CodeType) else c for c in code.co_consts)
    return code.replace(co_consts=consts)


def cache_path() -> Path:
    """The cache file of this interpreter (code objects are only valid for its bytecode version); BENCH_CODE_CACHE_FILE
    names another (a read-only installation's, or a test's)."""
    named = os.environ.get("BENCH_CODE_CACHE_FILE")
    if named:
        return Path(named)
    return Path(__file__).parent / "__pycache__" / f"generated-code.{sys.implementation.cache_tag}.marshal"


def future_flags(module: ModuleType) -> int:
    """The compiler flags of the `from __future__` imports a module made (what its compile() calls inherit)."""
    flags = 0
    for name in __future__.all_feature_names:
        feature: __future__._Feature = getattr(__future__, name)
        if module.__dict__.get(name) is feature:
            flags |= feature.compiler_flag
    return flags


def caching_compile(cache: CodeCache, flags: int) -> Any:
    """A stand-in for the builtin compile, as a patched module calls it, that goes through the cache."""

    def compile(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
        if args or kwargs or type(source) is not str or type(filename) is not str:
            return _builtin_compile(source, filename, mode, *args, **kwargs)  # not a call the cache was made for
        return cache.compile(source, filename, mode, flags)

    return compile


_cache: CodeCache | None = None


def install() -> None:
    """Route attrs's and cattrs's code generation through the cache (once per process)."""
    global _cache
    if _cache is not None or os.environ.get("BENCH_CODE_CACHE") == "0":
        return
    _cache = CodeCache(cache_path())
    atexit.register(_cache.save)
    for name in PATCHED_MODULES:
        after_import(name, functools.partial(_patch_module, name))


def _patch_module(name: str) -> None:
    module = sys.modules[name]
    assert _cache is not None
    # The module's own global `compile` shadows the builtin for the code in it, and for nothing else.
    module.compile = caching_compile(_cache, future_flags(module))  # type: ignore[attr-defined]


def warm() -> list[str]:
    """Import every module of every installed bench plugin, so their classes' code is compiled and kept.

    What `bash scripts/dev.sh setup` runs (with BENCH_CODE_CACHE=write); returns the modules that failed to import
    (an optional extra that is not installed, say), which only means their code is compiled when first used.
    """
    import importlib
    import importlib.metadata as md
    import pkgutil

    failed = []
    packages = {ep.value.split(":")[0].split(".")[0] for ep in md.entry_points(group="bench")}
    for package in sorted(packages | {"bench_kernel"}):
        try:
            root = importlib.import_module(package)
        except Exception:  # noqa: BLE001 - a plugin that cannot load is reported by `bench plugins`, not here
            failed.append(package)
            continue
        for module in pkgutil.walk_packages(getattr(root, "__path__", []), prefix=f"{package}."):
            try:
                importlib.import_module(module.name)
            except Exception:  # noqa: BLE001 - e.g. a module of an optional extra
                failed.append(module.name)
    return failed
