"""Shared fixtures: tau2's telecom files when present (skipping with a clear message when not), and our own data."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bench_telecom import TelecomDomain

from bench_kernel import DomainData, DomainOptions, Environment, build_environment

REFERENCE = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference") / "tau2"
TAU2_DIR = REFERENCE / "telecom"
SKIP_REASON = f"tau2's telecom files are not at {TAU2_DIR} (they live in ../shared/reference, beside the checkout)"


@pytest.fixture(scope="session")
def tau2_dir() -> Path:
    """The directory of tau2's telecom files."""
    if not (TAU2_DIR / "db.toml").is_file():
        pytest.skip(SKIP_REASON)
    return TAU2_DIR


def load(data_dir: Path | None = None, split: str | None = None) -> DomainData:
    """The telecom domain as a run loads it."""
    return TelecomDomain().load(DomainOptions(data_dir=data_dir, split=split))


@pytest.fixture(scope="session")
def loader() -> Callable[..., DomainData]:
    """load(data_dir, split): the domain as a run loads it."""
    return load


@pytest.fixture(scope="session")
def expected_hashes() -> dict[str, Any]:
    """tau2's reference hashes for telecom (a sample)."""
    path = REFERENCE / "expected_hashes_sample.json"
    if not path.is_file():
        pytest.skip(f"no reference hashes at {path}")
    return json.loads(path.read_text())["domains"]["telecom"]


@pytest.fixture(scope="session")
def tau2_small(tau2_dir: Path) -> DomainData:
    """tau2's data with its 20 single-fault tasks."""
    return load(tau2_dir, "small")


@pytest.fixture(scope="session")
def own() -> DomainData:
    """Our own data and default suite."""
    return load()


@pytest.fixture
def phone_env(own: DomainData) -> Environment:
    """A fresh environment on our own data, set up as a task sets it up (the subject's phone)."""
    env = build_environment(own, None)
    task = own.tasks[0]
    assert task.initial_state is not None and task.initial_state.initialization_actions
    env.run_function(task.initial_state.initialization_actions[0])
    return env
