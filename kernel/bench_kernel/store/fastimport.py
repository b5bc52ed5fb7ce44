"""Loading sqlite_utils without the numpy and pandas it imports only to store their scalar types."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def without_unused_modules(*names: str) -> Iterator[None]:
    """Make the named modules unimportable inside the block, unless something imported them already.

    sqlite_utils imports numpy and pandas when they are installed (about 0.1 s of start-up) only to convert
    their scalars; bench stores plain Python values, so the store never needs them.
    """
    hidden = [name for name in names if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]  # None in sys.modules makes `import name` raise ImportError
    try:
        yield
    finally:
        for name in hidden:
            if sys.modules.get(name, 0) is None:
                del sys.modules[name]
