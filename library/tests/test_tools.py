"""The tools' own rules, on fresh environments of the packaged data."""

from __future__ import annotations

import pytest
from bench_kernel import DomainData, DomainOptions, Environment, ToolError, build_environment

from bench_library import LibraryDomain


@pytest.fixture(scope="module")
def data() -> DomainData:
    """The packaged domain, loaded once (its pristine state is shared, as in a run)."""
    return LibraryDomain().load(DomainOptions())


@pytest.fixture
def env(data: DomainData) -> Environment:
    """A fresh environment on the pristine database."""
    return build_environment(data, None)


def test_lend_book_records_the_loan_and_takes_the_book_off_the_shelf(env: Environment) -> None:
    loan = env.agent_tools.lend_book(member_id="M-1", book_id="B-3")
    assert loan == {"id": "L-2", "member_id": "M-1", "book_id": "B-3"}
    assert env.agent_tools.find_book(title="a map of small hours")["available"] is False


def test_lend_book_refuses_a_book_on_loan_and_a_member_at_the_limit(env: Environment) -> None:
    with pytest.raises(ToolError, match="already on loan"):
        env.agent_tools.lend_book(member_id="M-1", book_id="B-2")
    with pytest.raises(ToolError, match="limit of 1"):
        env.agent_tools.lend_book(member_id="M-2", book_id="B-1")


def test_unknown_titles_and_members_are_refused_with_a_clear_message(env: Environment) -> None:
    with pytest.raises(ToolError, match="No book titled"):
        env.agent_tools.find_book(title="Nowhere")
    with pytest.raises(ToolError, match="No member"):
        env.agent_tools.get_member(member_id="M-9")
