"""bench-codecache: a start-up accelerator, the code attrs and cattrs generate compiled once and kept between processes.

Not a plugin: it registers nothing (no `bench` entry point). bench_kernel imports it, when it is installed, before any
of its modules defines an attrs class; importing it installs the cache (`BENCH_CODE_CACHE=0` leaves it off). Without
it, or with a broken one, attrs and cattrs compile as they always do: the same classes, a little later.
"""

from __future__ import annotations

from .cache import CodeCache, cache_path, future_flags, install, warm

__all__ = ["CodeCache", "cache_path", "future_flags", "install", "warm"]

install()  # here, not in bench_kernel: the kernel's only part is to import this package early
