"""Shared fixtures: the mock domain loaded once, and fresh environments per test."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from bench_mock import MockDomain

from bench_kernel import DomainData, DomainOptions, Environment, build_environment


@pytest.fixture(scope="session")
def do_nothing_passes() -> set[str]:
    """Tasks the do-nothing agent may pass: at most one read-only task, flagged in its notes. Mock has none."""
    return set()


@pytest.fixture(scope="session")
def data() -> DomainData:
    """The packaged mock domain (its pristine states are shared, as in a run)."""
    return MockDomain(name="mock").load(DomainOptions())


@pytest.fixture
def make_env(data: DomainData) -> Callable[..., Environment]:
    """A fresh environment: pristine, or set up for the named task."""

    def make(task_id: str | None = None, *, solo: bool = False) -> Environment:
        task = data.task(task_id) if task_id is not None else None
        return build_environment(data, task, solo=solo)

    return make
