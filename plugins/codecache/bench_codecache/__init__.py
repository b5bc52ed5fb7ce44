"""bench-codecache: start-up accelerators for bench, imported by bench_kernel first thing when installed.

- The code attrs and cattrs generate for every class, compiled once and kept between processes (`cache`;
  `BENCH_CODE_CACHE=0` leaves it off).
- The cyclic collector off while `bench run` sets up (`setupgc`); the kernel turns it back on when the run begins.
- sqlite_utils imported without numpy and pandas, which it loads only to store their scalars (`fastimport`).

Not a plugin: it registers nothing (no `bench` entry point). Without it, or with a broken one, bench starts as it
always did, a little slower: the same classes, the same collections.
"""

from __future__ import annotations

from . import setupgc  # first: what the cache reads is set up without the collector too
from .cache import CodeCache, cache_path, future_flags, install, warm
from .fastimport import install as lean_sqlite_utils_import

__all__ = ["CodeCache", "cache_path", "future_flags", "install", "lean_sqlite_utils_import", "setupgc", "warm"]

install()  # here, not in bench_kernel: the kernel's only part is to import this package early
lean_sqlite_utils_import()
