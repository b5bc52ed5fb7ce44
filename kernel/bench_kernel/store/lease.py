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
"""A holder on another host that has been silent this long is gone."""


@attrs.frozen
class Holder:
    """The process holding a run's lease; the token tells two stores of one process apart."""

    host: str
    pid: int
    started: str | None
    """When the process started (Linux clock ticks since boot): a pid reused by a later process is not the holder."""
    token: str

    @classmethod
    def this_process(cls) -> Holder:
        """A new holder identity for the current process."""
        pid = os.getpid()
        return cls(host=socket.gethostname(), pid=pid, started=process_started(pid), token=secrets.token_hex(8))


def holder_alive(host: str | None, pid: int | None, started: str | None, heartbeat_utc: str | None, *, now: datetime | None = None) -> bool:
    """True while the recorded holder may still be running (exact on this host, by heartbeat on another)."""
    # On this host the process itself decides, not the heartbeat: a blocked event loop never gives a live run away.
    if host is None or pid is None:
        return False
    if host == socket.gethostname():
        return pid_alive(pid) and (started is None or process_started(pid) in (None, started))
    return heartbeat_utc is not None and heartbeat_age_s(heartbeat_utc, now=now) <= STALE_S


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
    fields = _stat_fields(pid)
    # A killed child its parent has not reaped yet still answers kill(pid, 0); Linux says so in /proc.
    return fields is None or fields[0] != "Z"


def process_started(pid: int) -> str | None:
    """When a process started, in clock ticks since boot (None where /proc cannot say)."""
    fields = _stat_fields(pid)
    return fields[19] if fields is not None and len(fields) > 19 else None


def _stat_fields(pid: int) -> list[str] | None:
    # The fields of /proc/PID/stat after the command name (which may hold spaces and parentheses): state first.
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rpartition(")")[2].split()
