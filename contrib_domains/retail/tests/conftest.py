"""Shared fixtures: our packaged suite, and tau2's data when present."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from bench_retail import RetailDomain

from bench_kernel import DomainData, DomainOptions, Environment, build_environment

REFERENCE = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference") / "tau2"


@pytest.fixture(scope="session")
def data() -> DomainData:
    """Our packaged suite (its pristine state is shared, as in a run)."""
    return RetailDomain(name="retail").load(DomainOptions())


@pytest.fixture
def make_env(data: DomainData) -> Callable[..., Environment]:
    """A fresh environment over our suite: pristine, or set up for the named task."""
    return lambda task_id=None: build_environment(data, data.task(task_id) if task_id is not None else None)


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """tau2's retail files in ../shared/reference (never copied into the repo); skip without them."""
    path = (REFERENCE / "retail").resolve()
    if not (path / "db.json").is_file():
        pytest.skip(f"tau2 reference data not found at {path}")
    return path


@pytest.fixture(scope="session")
def tau2_data(reference_dir: Path) -> DomainData:
    """tau2's retail domain, loaded from the reference data."""
    return RetailDomain(name="retail").load(DomainOptions(data_dir=reference_dir))
