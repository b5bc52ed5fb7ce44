"""The millisecond clock that stamps messages: datetime's ISO text, right across second boundaries."""

from __future__ import annotations

import datetime as dt

import pytest

from bench_kernel import serialization
from bench_kernel.serialization import _MillisecondClock

EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    "ns",
    [
        0,
        999_999_999,
        1_000_000_000,
        1_764_000_000_123_456_789,
        1_764_000_000_999_000_000,
        1_764_000_001_000_000_000,
        1_764_000_059_999_999_999,
        1_764_000_060_000_000_001,
    ],
)
def test_clock_text_is_datetime_isoformat(monkeypatch: pytest.MonkeyPatch, ns: int) -> None:
    clock = _MillisecondClock()
    for earlier in (ns - 1_000_000, ns - 1_000_000_000, ns):  # the same clock, stepping through ms and seconds
        monkeypatch.setattr(serialization.time, "time_ns", lambda value=earlier: max(value, 0))
        expected = (EPOCH + dt.timedelta(milliseconds=max(earlier, 0) // 1_000_000)).isoformat(timespec="milliseconds")
        assert clock.now() == expected
