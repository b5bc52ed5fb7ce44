"""Shared fixtures: our packaged suite, and tau2's reference data when present."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from bench_banking_knowledge.domain import load_from

from bench_kernel import DomainData, DomainOptions

REFERENCE = Path(os.environ.get("BENCH_REFERENCE") or Path(__file__).resolve().parents[3] / ".." / "shared" / "reference") / "tau2"
PINNED = Path(__file__).parent / "data" / "tau2_hashes.json"


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """tau2's banking_knowledge data, or a skip when the shared reference directory is absent."""
    path = REFERENCE / "banking_knowledge"
    if not (path / "db.json").is_file():
        pytest.skip(f"tau2 reference data not found at {path.resolve()} (it lives outside the repo, in ../shared)")
    return path


@pytest.fixture(scope="session")
def reference_data(reference_dir: Path) -> DomainData:
    """tau2's banking_knowledge as our plugin loads it (variant no_knowledge)."""
    return load_from(reference_dir, DomainOptions(retrieval="no_knowledge"))


@pytest.fixture(scope="session")
def pinned() -> dict[str, Any]:
    """The gold DB and policy hashes we computed with tau2's own code."""
    return dict(json.loads(PINNED.read_text()))
