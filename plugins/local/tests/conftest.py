"""Helpers: whether a process is still alive, and the llama_cpp.server children of this process."""

from __future__ import annotations

import os
from pathlib import Path


def alive(pid: int) -> bool:
    """True while the process exists and is not a zombie (PID 1 here may never reap orphans)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def server_children() -> list[int]:
    """Live processes started by this one that run bench_local.serve."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid() and b"bench_local.serve" in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found
