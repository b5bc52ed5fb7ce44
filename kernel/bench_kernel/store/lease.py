"""Run leases: which process is running a run, and whether that process still lives."""

from __future__ import annotations

import os
import secrets
import socket
from datetime import UTC, datetime
from pathlib import Path

import attrs

HEARTBEAT_S = 15.0
"""How often a running run refreshes its heartbeat."""
STALE_S = 120.0
"""A holder silent this long is gone whatever its pid says (another host, or a pid reused since)."""


@attrs.frozen
class Holder:
    """The process holding a run's lease; the token tells two stores of one process apart."""

    host: str
    pid: int
    token: str

    @classmethod
    def this_process(cls) -> Holder:
        """A new holder identity for the current process."""
        return cls(host=socket.gethostname(), pid=os.getpid(), token=secrets.token_hex(8))


def holder_alive(host: str | None, pid: int | None, heartbeat_utc: str | None, *, now: datetime | None = None) -> bool:
    """True while the recorded holder may still be running: its heartbeat is fresh and, on this host, its pid lives."""
    if host is None or pid is None or heartbeat_utc is None:
        return False
    if heartbeat_age_s(heartbeat_utc, now=now) > STALE_S:
        return False
    return host != socket.gethostname() or pid_alive(pid)


def heartbeat_age_s(heartbeat_utc: str, *, now: datetime | None = None) -> float:
    """Seconds since a heartbeat (an unreadable one counts as infinitely old)."""
    try:
        beat = datetime.fromisoformat(heartbeat_utc)
    except ValueError:
        return float("inf")
    return ((now or datetime.now(UTC)) - beat).total_seconds()


def pid_alive(pid: int) -> bool:
    """True if a process with this pid exists on this host and is not a zombie."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: it exists
        return True
    return not _zombie(pid)


def _zombie(pid: int) -> bool:
    # A killed child its parent has not reaped yet still answers kill(pid, 0); Linux says so in /proc.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[:1] == ["Z"]
