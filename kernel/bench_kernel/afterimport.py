"""Run a callback once a module has been imported, without importing it: `after_import("gymnasium", register)`."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, ExitStack
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any


def after_import(module: str, callback: Callable[[], None], around: Callable[[], AbstractContextManager[Any]] | None = None) -> None:
    """Call `callback` now if `module` is imported, else once right after its code ran (inside `around()` when given)."""
    if module in sys.modules:
        callback()
        return
    for finder in sys.meta_path:
        if isinstance(finder, _AfterImport) and finder.module == module and not finder.used:
            finder.callbacks.append(callback)
            finder.arounds.extend([around] if around else [])
            return
    sys.meta_path.insert(0, _AfterImport(module, [callback], [around] if around else []))


class _AfterImport:
    """A meta path finder that runs callbacks right after one module's code has run."""

    # Once used it stays in sys.meta_path answering None (removed while another thread walks the list, it could make
    # that thread skip a finder).

    def __init__(self, module: str, callbacks: list[Callable[[], None]], arounds: list[Callable[[], AbstractContextManager[Any]]]) -> None:
        self.module = module
        self.callbacks = callbacks
        self.arounds = arounds
        self.used = False

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        """The module's own spec, its loader made to run the callbacks after loading; None for any other module."""
        if fullname != self.module or self.used:
            return None
        self.used = True  # before find_spec below, which asks this finder again
        spec = importlib.util.find_spec(fullname)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_module = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            with ExitStack() as stack:
                for around in self.arounds:
                    stack.enter_context(around())
                run_module(module)
            for callback in self.callbacks:
                callback()

        loader.exec_module = exec_module  # type: ignore[method-assign]  # this spec's own loader instance
        return spec
