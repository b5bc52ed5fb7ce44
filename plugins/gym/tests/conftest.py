"""Shared helpers: tau2's data when present (a clear skip when not), gymnasium (a clear skip when absent), episodes."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).parent))

REFERENCE = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference") / "tau2"


def tau2_dir(domain: str, marker: str) -> Path:
    """tau2's data directory of a domain, or a skip saying where it was looked for."""
    path = REFERENCE / domain
    if not (path / marker).is_file():
        pytest.skip(
            f"tau2's {domain} data is not at {path.resolve()} (it lives in ../shared/reference, beside the "
            "checkout; BENCH_REFERENCE points elsewhere)"
        )
    return path


@pytest.fixture(scope="session")
def tau2_airline() -> Path:
    """tau2's airline data."""
    return tau2_dir("airline", "db.json")


@pytest.fixture(scope="session")
def tau2_telecom() -> Path:
    """tau2's telecom data."""
    return tau2_dir("telecom", "db.toml")


@pytest.fixture(scope="session")
def gymnasium() -> Any:
    """gymnasium with bench's environments registered (a skip naming the extra when gymnasium is absent)."""
    module = pytest.importorskip("gymnasium", reason="gymnasium is not installed: pip install bench-gym (it depends on it)")
    import bench_gym  # noqa: F401 - registers bench/Agent-v0 and bench/User-v0

    return module


@pytest.fixture
def make_env(gymnasium: Any) -> Iterator[Callable[..., Any]]:
    """gymnasium.make for bench's environments, each one closed after the test."""
    made: list[Any] = []

    def make(env_id: str = "bench/Agent-v0", **kwargs: Any) -> Any:
        env = gymnasium.make(env_id, **kwargs)
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()
