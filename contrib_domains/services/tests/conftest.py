"""Shared fixtures: the services domain loaded once, fresh tools on its pristine database."""

from __future__ import annotations

import pytest
from bench_services.tools import ServicesTools

from bench_kernel import DomainData, RunConfig, collect, get_plugin_manager, load_domain


@pytest.fixture(scope="session")
def data() -> DomainData:
    """The packaged services domain (its pristine state is shared, as in a run)."""
    return load_domain(collect(get_plugin_manager(["services"])), RunConfig(domain="services"))


@pytest.fixture
def tools(data: DomainData) -> ServicesTools:
    """The agent's tools on a private fork of the pristine database."""
    return ServicesTools(data.agent_state.fork())
