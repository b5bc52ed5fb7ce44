"""The cyclic collector off while `bench run` sets up: imported with bench_kernel, it turns it off for a run.

A run's set-up (imports, plugins, domain, tasks) allocates much and frees little: collections cost a tenth to a fifth
of its CPU before the first request. The kernel's CLI turns the collector back on, with what set-up built frozen out
of it, once the run has begun (`bench_kernel.cli._start`, whoever turned it off); other commands and library callers
are left alone.
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from pathlib import Path


def starts_a_run(args: Sequence[str]) -> bool:
    """True for `bench run ...`'s arguments (the first word that is not an option is `run`)."""
    return next((arg for arg in args if not arg.startswith("-")), None) == "run"


def pause_for_a_run(argv: Sequence[str]) -> None:
    """Turn the collector off when this process is `bench run` (the console script or `python -m bench_kernel`).

    Not in a worker that multiprocessing started: it imports the parent's main module again, with its argv, and no
    run's start would turn the collector back on there.
    """
    process = sys.modules.get("multiprocessing.process")
    if process is not None and process.parent_process() is not None:
        return
    if argv and is_bench(argv[0]) and starts_a_run(argv[1:]):
        gc.disable()


def is_bench(program: str) -> bool:
    """True for the console script and for `python -m bench_kernel` (argv[0] is "-m" while its package is imported)."""
    if program == "-m":
        named = sys.orig_argv[sys.orig_argv.index("-m") + 1 :] if "-m" in sys.orig_argv else []
        return named[:1] == ["bench_kernel"]
    return Path(program).name in ("bench", "__main__.py")


pause_for_a_run(sys.argv)  # at import, with bench_kernel's: before the CLI's own imports
