"""The cyclic collector off while `bench run` sets up: imported first by the CLI, it turns it off for a run.

A run's set-up (imports, plugins, domain, tasks) allocates much and frees little: collections cost a tenth to a fifth
of its CPU before the first request. The CLI turns the collector back on, with what set-up built frozen out of it,
once the run has begun (`bench_kernel.cli._start`); other commands and library callers are left alone.
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
    if argv and Path(argv[0]).name in ("bench", "__main__.py") and starts_a_run(argv[1:]):
        gc.disable()


def resume() -> None:
    """Turn the collector back on if set-up turned it off, what set-up built frozen out of every collection."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()


pause_for_a_run(sys.argv)  # at import, before the CLI's own imports
