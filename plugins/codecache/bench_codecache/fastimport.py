"""Loading sqlite_utils (the store's) without numpy and pandas, without loading dateutil's parser and without compiling
at import a pattern it rarely uses."""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import re
import sys
from collections.abc import Iterator
from typing import Any

from bench_kernel import after_import


@contextlib.contextmanager
def without_unused_modules(*names: str) -> Iterator[None]:
    """Make the named modules unimportable inside the block, unless something imported them already."""
    # sqlite_utils imports numpy and pandas (~0.1 s) only to convert their scalars; bench stores plain values.
    hidden = [name for name in names if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # None in sys.modules makes `import name` raise ImportError
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]


class LazyPattern:
    """A regular expression compiled when first used (what `re.compile` gave is asked for by attribute)."""

    def __init__(self, pattern: str, flags: int) -> None:
        self._args = (pattern, flags)
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        if self._compiled is None:
            self._compiled = re.compile(*self._args)
        return getattr(self._compiled, name)


@contextlib.contextmanager
def lazy_patterns(module: str) -> Iterator[None]:
    """Inside the block, the patterns `module`'s own code compiles with `re.compile` are compiled when first used."""
    # sqlite_utils compiles at import a Unicode-wide pattern (~9 ms) used only on virtual tables, by attribute only.
    real = re.compile

    def compile(pattern: Any, flags: int = 0) -> Any:
        caller = sys._getframe(1).f_globals.get("__name__")
        if caller == module and isinstance(pattern, str):
            return LazyPattern(pattern, flags)
        return real(pattern, flags)

    re.compile = compile
    try:
        yield
    finally:
        re.compile = real


class LazyFinder:
    """Finds the named modules where Python would and makes them lazy: each runs when one of its names is first used."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        """The module's usual spec with its loader made lazy; None (the usual finders) for any other module."""
        if name not in self.names:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = importlib.util.LazyLoader(spec.loader)
        return spec


@contextlib.contextmanager
def lazy_modules(*names: str) -> Iterator[None]:
    """Inside the block, importing one of the named modules (not yet imported) binds it without running it."""
    # sqlite_utils' recipes import dateutil's parser (~10 ms with dateutil.tz) for two functions bench never calls.
    finder = LazyFinder(tuple(name for name in names if name not in sys.modules))
    sys.meta_path.insert(0, finder)
    try:
        yield
    finally:
        sys.meta_path.remove(finder)


@contextlib.contextmanager
def lean_sqlite_utils() -> Iterator[None]:
    """The context sqlite_utils' own import runs in (numpy and pandas hidden, dateutil's parser and its patterns
    loaded when used)."""
    with without_unused_modules("numpy", "pandas"), lazy_modules("dateutil.parser"), lazy_patterns("sqlite_utils.db"):
        yield


def install() -> None:
    """Import sqlite_utils, when something first does, inside `lean_sqlite_utils`."""
    after_import("sqlite_utils", lambda: None, around=lean_sqlite_utils)
