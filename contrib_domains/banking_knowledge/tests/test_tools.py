"""The agent and user tools on our packaged suite: discovery, the call log rule, tau2's texts and quirks."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from bench_banking_knowledge import BankingKnowledgeDomain, ids
from bench_banking_knowledge.db import BankDB

from bench_kernel import (
    Action,
    DomainData,
    DomainOptions,
    Environment,
    EvaluationCriteria,
    Task,
    ToolCall,
    ToolMessage,
    build_environment,
)

Call = Callable[..., ToolMessage]
AVA = {
    "name": "Ava Lindqvist",
    "user_id": "k1a7c3e9d2",
    "address": "18 Harbor Lane, Duluth, MN 55802",
    "email": "ava.lindqvist@fjordmail.com",
    "phone_number": "218-555-0132",
    "date_of_birth": "04/22/1988",
    "time_verified": "2025-11-14 03:40:00 EST",
}


@pytest.fixture(scope="module")
def suite() -> DomainData:
    """Our packaged suite (bm25)."""
    return BankingKnowledgeDomain().load(DomainOptions())


def environment(suite: DomainData, task: Task | None = None) -> Environment:
    """A fresh environment on the suite's pristine database."""
    return build_environment(suite, task or suite.tasks[0])


@pytest.fixture
def env(suite: DomainData) -> Environment:
    """A fresh environment for the suite's first task."""
    return environment(suite)


@pytest.fixture
def call(env: Environment) -> Call:
    """Run one tool call as a conversation does; requestor "user" for the customer's tools."""

    def run(name: str, requestor: str = "assistant", **arguments: Any) -> ToolMessage:
        return env.execute(ToolCall(id="t", name=name, arguments=arguments, requestor=requestor))  # type: ignore[arg-type]

    return run


def db(env: Environment) -> BankDB:
    """The environment's database (one for both sides)."""
    assert env.user_tools is not None and env.user_tools.state is env.agent_tools.state
    return BankDB(env.agent_tools.state)


def test_hidden_tools_are_not_offered_but_run_by_name(env: Environment, call: Call) -> None:
    offered = {s["function"]["name"] for s in env.agent_schemas()}
    assert "update_transaction_rewards_3847" not in offered and "call_discoverable_agent_tool" in offered
    assert "KB_search" in offered and len(offered) == 15
    assert {s["function"]["name"] for s in env.user_schemas() or []} == {
        "apply_for_credit_card",
        "submit_referral",
        "submit_transaction",
        "call_discoverable_user_tool",
        "list_discoverable_user_tools",
        "request_human_agent_transfer",
    }
    # tau2 runs a hidden tool named directly (no unlock, no call log), and replays it when it writes
    direct = ToolCall(
        id="d", name="update_transaction_rewards_3847", arguments={"transaction_id": "txn_k1a7c3e9d201", "new_rewards_earned": "1 points"}
    )
    assert env.mutates(direct)
    assert env.execute(direct).content.startswith("Transaction rewards updated successfully.")
    assert db(env).table_items("agent_discoverable_tools") == []


def test_unlocking_and_calling(env: Environment, call: Call) -> None:
    name = "update_transaction_rewards_3847"
    assert call("call_discoverable_agent_tool", agent_tool_name=name).content == (
        f"Error: Tool '{name}' has not been unlocked. You must first use `unlock_discoverable_agent_tool` to unlock this tool before calling it."
    )
    assert call("unlock_discoverable_agent_tool", agent_tool_name="nope_1").content == (
        "Error: Unknown agent tool 'nope_1'. This tool is not available."
    )
    unlocked = call("unlock_discoverable_agent_tool", agent_tool_name=name).content
    assert unlocked.startswith(f"Unlocked {name}.") and "transaction_id (string, required)" in unlocked
    assert db(env).table_items("agent_discoverable_tools") == []  # unlocking writes nothing
    assert call("call_discoverable_agent_tool", agent_tool_name=name, arguments="{oops").content.startswith(
        "Error: Invalid JSON in arguments: Expecting property name enclosed in double quotes"
    )
    wrong = call("call_discoverable_agent_tool", agent_tool_name=name, arguments='{"transaction_id": "x", "z": 1}')
    assert wrong.content == (f"Error: Invalid arguments: KnowledgeTools.{name}() got an unexpected keyword argument 'z'")
    assert db(env).table_items("agent_discoverable_tools") == []
    done = call(
        "call_discoverable_agent_tool", agent_tool_name=name, arguments='{"transaction_id": "txn_k1a7c3e9d201", "new_rewards_earned": "300 points"}'
    )
    assert done.content.startswith("Transaction rewards updated successfully.") and not done.error
    assert db(env).table_items("agent_discoverable_tools") == [(ids.agent_tool_id(name), {"tool_name": name, "status": "CALLED"})]
    assert call("list_discoverable_agent_tools").content.startswith("Your called agent tools:\nFound 1 record(s) in 'agent_discoverable_tools':")


def _task_calling(name: str) -> Task:
    action = Action(action_id="a", name="call_discoverable_agent_tool", arguments={"agent_tool_name": name})
    return Task(
        id="t",
        user_scenario={"instructions": "x"},  # type: ignore[arg-type]
        evaluation_criteria=EvaluationCriteria(actions=[action], reward_basis=["DB"]),
    )


@pytest.mark.parametrize("allowlisted", [False, True])
def test_reads_are_logged_only_when_the_tasks_gold_calls_them(suite: DomainData, allowlisted: bool) -> None:
    read = "get_all_user_accounts_by_user_id_3847"
    env = environment(suite, _task_calling(read if allowlisted else "something_else"))
    for name, args in (
        ("unlock_discoverable_agent_tool", {"agent_tool_name": read}),
        ("call_discoverable_agent_tool", {"agent_tool_name": read, "arguments": '{"user_id": "k1a7c3e9d2"}'}),
    ):
        assert not env.execute(ToolCall(id="c", name=name, arguments=args)).error
    logged = [rec["tool_name"] for _, rec in db(env).table_items("agent_discoverable_tools")]
    assert logged == ([read] if allowlisted else [])


def test_giving_and_the_customers_calls(env: Environment, call: Call) -> None:
    tool = "deposit_check_3847"
    user = {"requestor": "user"}
    args = '{"account_id": "chk_k1a7c3e9d2", "check_amount": 100}'
    refused = call("call_discoverable_user_tool", discoverable_tool_name=tool, arguments=args, **user)
    assert refused.content.startswith(f"Error: Tool '{tool}' has not been given to you by the agent.")
    assert call("give_discoverable_user_tool", discoverable_tool_name="apply_for_credit_card").content == (
        "Error: Unknown discoverable tool 'apply_for_credit_card'."
    )
    assert call("give_discoverable_user_tool", discoverable_tool_name=tool, arguments='{"amount": 1}').content == (
        "Error: Unexpected parameter: amount"
    )
    given = call("give_discoverable_user_tool", discoverable_tool_name=tool, arguments=args).content
    assert given.startswith(f"Gave {tool} to the customer:") and '"check_amount": 100\n' in given  # shown as given
    assert db(env).query("user_discoverable_tools", {"tool_name": tool})
    assert (
        call("call_discoverable_user_tool", discoverable_tool_name=tool, arguments='{"account_id": "x"}', **user).content
        == "Error: Missing required parameter: check_amount"
    )
    negative = call(
        "call_discoverable_user_tool", discoverable_tool_name=tool, arguments='{"account_id": "chk_k1a7c3e9d2", "check_amount": -5}', **user
    )
    assert negative.content == "Error: Check amount must be positive."
    done = call("call_discoverable_user_tool", discoverable_tool_name=tool, arguments=args, **user).content
    assert '"check_amount": 100.0' in done and done.endswith("  - New Balance: $2580.55")  # integers arrive as floats
    logged = [rec["arguments"] for _, rec in db(env).table_items("user_discoverable_tool_calls")]
    assert logged == [
        {"account_id": "chk_k1a7c3e9d2", "check_amount": -5.0},  # logged before it is checked
        {"account_id": "chk_k1a7c3e9d2", "check_amount": 100.0},
    ]
    assert db(env).get("accounts", "chk_k1a7c3e9d2")["current_holdings"] == "$2580.55"  # type: ignore[index]


def test_customer_tools_texts_and_counts(env: Environment, call: Call) -> None:
    user = {"requestor": "user"}
    assert call("request_human_agent_transfer", **user).content == ("Transfer request #1 submitted.\nThe agent will process your request.")
    assert call("request_human_agent_transfer", **user).content.startswith("Transfer request #2 submitted.")
    first = call("apply_for_credit_card", card_type="Gold Rewards Card", customer_name="Ava Lindqvist", annual_income=90000, **user)
    assert first.content.startswith("Credit card application submitted:")
    again = call(
        "apply_for_credit_card", card_type="Gold Rewards Card", customer_name="Ava Lindqvist", annual_income=90000.0, **user
    )  # the same id whether the income is written 90000 or 90000.0
    assert again.content.startswith("Failed to submit application: Record ID ")
    assert call("list_discoverable_user_tools", **user).content == (  # tau2 checks for a text its helper never writes
        "Tools given to you by the agent:\nNo records found in 'user_discoverable_tools'."
    )


def test_verification_log_is_first_write_wins(env: Environment, call: Call) -> None:
    def log() -> str:
        return env.execute(ToolCall(id="v", name="log_verification", arguments=AVA)).content or ""

    assert log() == ("Verification logged successfully.\n  - User: Ava Lindqvist (ID: k1a7c3e9d2)\n  - Verified at: 2025-11-14 03:40:00 EST")
    assert log() == "Failed to log verification: Record may already exist."
    assert db(env).get("verification_history", "k1a7c3e9d2_20251114_034000_EST") == {
        k: AVA[k] for k in ("name", "user_id", "address", "email", "phone_number", "date_of_birth", "time_verified")
    }
    assert call("get_user_information_by_id", user_id='k1"').content.startswith("Error: Invalid JSON: ")


def test_searching_our_documents(call: Call) -> None:
    found = call("KB_search", query="cash back dispute points purchase").content
    assert found.startswith("1. Checking the cash back on a purchase\n   ID: doc_credit_cards_cash_back_checks_001")


def test_the_clock_is_fixed() -> None:
    assert json.dumps(ids.TODAY) == '"11/14/2025"'
